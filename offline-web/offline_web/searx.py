"""Run a real Debian searx (1.1.0) on loopback: with every engine pointed at the offline web, or with its
default set of internet engines (`make run`).

Debian's searx must run under /usr/bin/python3 (its dist-packages), ships no default settings, and takes
its port only from settings.yml, so this module writes a full settings file and starts the process. Its JSON
format is always on, and 1.1.0 has no limiter.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from offline_web.processes import Service, free_port

SEARX_PYTHON = "/usr/bin/python3"
ENGINE_MODULE = Path(__file__).parent / "searx_engines" / "offlineweb"
# Debian's only copy of searx's own settings, with its default engine pool
EXAMPLE_SETTINGS = Path("/usr/share/doc/searx/examples/settings.yml")
# searx's interpreter has PyYAML (searx needs it); Wisp's need not
_YAML_TO_JSON = "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)"


def engines(web_url: str, hosts: tuple[str, ...] = ()) -> list[dict]:
    """The engine pool: one per Firecrawl source and category the tests use, plus a slow and a failing one, and a
    patient pool whose stuck engine waits 20 s: only a request's own timeout ends a search of it early; with
    `hosts`, every engine finds pages on those hosts only.

    The general engine is the stock json_engine and the science engine the stock xpath engine (which
    ignores `site:` like many real engines); news, images and it use the custom module.
    """
    custom = str(ENGINE_MODULE)
    common = {"enable_http": True, "timeout": 3.0}
    json_engine = {
        "engine": "json_engine", "results_query": "results", "url_query": "url",
        "title_query": "title", "content_query": "content", **common,
    }
    pool = [
        {"name": "localweb", "shortcut": "lw", "categories": "general", "paging": True, "time_range_support": True,
         "search_url": f"{web_url}/search?q={{query}}&format=json&pageno={{pageno}}", **json_engine},
        {"name": "localnews", "shortcut": "ln", "categories": "news", "engine": custom, "base_url": web_url,
         "backend_cat": "news", **common},
        {"name": "localimages", "shortcut": "li", "categories": "images", "engine": custom, "base_url": web_url,
         "backend_cat": "images", "result_template": "images.html", **common},
        {"name": "localcode", "shortcut": "lc", "categories": "it", "engine": custom, "base_url": web_url,
         "backend_cat": "general", "emit_extras": True, **common},
        {"name": "localscience", "shortcut": "ls", "categories": "science", "engine": "xpath", "paging": True,
         "time_range_support": True, "time_range_url": "&time_range={time_range_val}",
         "time_range_map": {"day": "day", "week": "week", "month": "month", "year": "year"},
         "search_url": f"{web_url}/html?q={{query}}&language={{lang}}&pageno={{pageno}}&ops=ignore{{time_range}}",
         "results_xpath": '//div[@class="r"]', "url_xpath": "./a/@href", "title_xpath": "./a",
         "content_xpath": "./p", **common},
        # searx waits for the largest timeout among the selected engines, so the flaky pool shares 1 s
        {"name": "localflaky", "shortcut": "lf", "categories": "flaky", "paging": True,
         "search_url": f"{web_url}/search?q={{query}}&format=json&pageno={{pageno}}", **json_engine, "timeout": 1.0},
        {"name": "localslow", "shortcut": "lslow", "categories": "flaky,broken",
         "search_url": f"{web_url}/search?q={{query}}&format=json&delay_ms=5000",
         **json_engine, "timeout": 1.0},
        {"name": "localerror", "shortcut": "lerr", "categories": "flaky,broken",
         "search_url": f"{web_url}/_test/status/500?q={{query}}", **json_engine, "timeout": 1.0},
        {"name": "localquick", "shortcut": "lq", "categories": "patient", "paging": True,
         "search_url": f"{web_url}/search?q={{query}}&format=json&pageno={{pageno}}", **json_engine},
        {"name": "localstuck", "shortcut": "lstuck", "categories": "patient",
         "search_url": f"{web_url}/search?q={{query}}&format=json&delay_ms=40000", **json_engine, "timeout": 20.0},
    ]
    return [_on_hosts(engine, hosts) for engine in pool] if hosts else pool


def _on_hosts(engine: dict, hosts: tuple[str, ...]) -> dict:
    """`engine` asking the offline web for results on `hosts` only: in its URL, or through the custom module."""
    listed = ",".join(hosts)
    if "search_url" in engine:
        return {**engine, "search_url": f"{engine['search_url']}&hosts={listed}"}
    return {**engine, "hosts": listed}


def internet_settings(port: int, example: Path = EXAMPLE_SETTINGS) -> dict:
    """searx's own settings, its default internet engines included, served on loopback at `port`."""
    if not example.is_file():
        raise FileNotFoundError(f"{example} is missing (Debian's searx package ships it): reinstall searx "
                                "with its documentation, or run against your own SearXNG with SEARXNG_URL")
    loaded = subprocess.run([SEARX_PYTHON, "-c", _YAML_TO_JSON, str(example)], capture_output=True, text=True,
                            check=True)
    own = json.loads(loaded.stdout)
    # the example's secret ("ultrasecretkey") makes searx exit outside debug mode
    own["server"].update(port=port, bind_address="127.0.0.1", secret_key=os.urandom(16).hex())
    return own


def settings(port: int, web_url: str, hosts: tuple[str, ...] = ()) -> dict:
    """A full settings file for Debian searx 1.1.0 (it has no defaults to merge with); `hosts`: see `engines`."""
    return {
        "general": {"debug": False, "instance_name": "wisp-offline-searx", "contact_url": False, "enable_stats": False},
        "search": {
            "safe_search": 0, "autocomplete": "", "default_lang": "", "prefer_configured_language": False,
            # a failing engine is otherwise suspended for later queries, which makes results depend on test order
            "ban_time_on_fail": 0, "max_ban_time_on_fail": 0,
        },
        "server": {
            "port": port, "bind_address": "127.0.0.1", "secret_key": os.urandom(16).hex(), "base_url": False,
            "image_proxy": False, "http_protocol_version": "1.0", "method": "GET",
            "default_http_headers": {"X-Content-Type-Options": "nosniff"},
        },
        "ui": {
            "static_path": "/usr/share/python3-searx/static", "templates_path": "/usr/share/python3-searx/templates",
            "default_theme": "oscar", "default_locale": "", "theme_args": {"oscar_style": "logicodev"},
        },
        "outgoing": {"request_timeout": 3.0, "useragent_suffix": "", "pool_connections": 100, "pool_maxsize": 10},
        "checker": {"off_when_debug": True},
        "engines": engines(web_url, hosts),
        "locales": {"en": "English"},
        "doi_resolvers": {"oadoi.org": "https://oadoi.org/"},
        "default_doi_resolver": "oadoi.org",
    }


class Searx(Service):
    """Debian searx on a free loopback port (or `port`), its engines pointed at the offline web at `web_url` (at
    its pages on `hosts` only, when given), or, with no `web_url`, searx's default internet engines."""

    def __init__(self, web_url: str | None, workdir: Path, port: int | None = None,
                 hosts: tuple[str, ...] = ()) -> None:
        self.port = port or free_port()
        settings_path = workdir / "settings.yml"
        workdir.mkdir(parents=True, exist_ok=True)
        chosen = settings(self.port, web_url, hosts) if web_url else internet_settings(self.port)
        # JSON is valid YAML, and needs no YAML library here
        settings_path.write_text(json.dumps(chosen, indent=2))
        env = {"SEARX_SETTINGS_PATH": str(settings_path), "SEARX_DEBUG": "0", "PYTHONPATH": ""}
        super().__init__("searx", [SEARX_PYTHON, "-m", "searx.webapp"], f"http://127.0.0.1:{self.port}",
                         workdir / "searx.log", env=env, cwd=workdir)
