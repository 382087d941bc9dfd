"""Pages that need a browser, through real Chromium (Debian's), real agent-svc and the real SDKs: scripted content
in scrape, crawl, batch and a ranked search; waitFor, actions and screenshots through firecrawl-py and
firecrawl-js; every browser request through the SSRF guard; and no Chromium left after agent-svc is killed."""

from __future__ import annotations

import base64
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import BadRequestError

from agent.pages.browser.processes import argv0, descendants
from offline_web.stack import OfflineStack, offline_search_stack
from tests.integration.conftest import MINI_SITES, agent_service, finished_crawl
from tests.integration.test_sdk_js import call_js

pytestmark = pytest.mark.skipif(not os.access("/usr/bin/chromium", os.X_OK), reason="Debian's chromium (make install)")

QUOKKA = "The quokka sentence was inserted by a script after the page loaded."
AXOLOTL = "The hidden axolotl paragraph appears only after a click."


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OfflineStack]:
    """The mini web with www.sqlite.org's pages served as shells a script fills in."""
    with offline_search_stack(MINI_SITES, tmp_path_factory.mktemp("scripted"),
                              scripted_hosts=("www.sqlite.org",)) as running:
        yield running


@pytest.fixture(scope="module")
def browsing(scripted: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with agent_service(scripted.searx.url, tmp_path_factory.mktemp("browsing"), "agent-browsing",
                       FETCH_ALLOW_HOSTS="127.0.0.1") as agent:
        yield agent.url


@pytest.fixture(scope="module")
def http_only(scripted: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with agent_service(scripted.searx.url, tmp_path_factory.mktemp("http-only"), "agent-http-only",
                       FETCH_ALLOW_HOSTS="127.0.0.1", RENDER="never") as agent:
        yield agent.url


def test_a_page_a_script_fills_is_rendered_when_its_http_fetch_is_a_shell(browsing: str, http_only: str,
                                                                          scripted: OfflineStack) -> None:
    page = f"{scripted.web.url}/_test/js/inserted"
    assert QUOKKA in Firecrawl(api_url=browsing).scrape(page, formats=["markdown"]).markdown
    shell = Firecrawl(api_url=http_only).scrape(page, formats=["markdown"])
    assert QUOKKA not in (shell.markdown or "")
    rendered = _metric(browsing, 'wisp_agent_browser_renders_total{outcome="ok"}')
    Firecrawl(api_url=browsing).scrape(f"{scripted.web.url}/www.git-scm.com/docs/git-rebase.html")
    assert _metric(browsing, 'wisp_agent_browser_renders_total{outcome="ok"}') == rendered  # a real page: HTTP


def test_wait_for_lets_content_that_comes_later_arrive(browsing: str, scripted: OfflineStack) -> None:
    page = f"{scripted.web.url}/_test/js/delayed?ms=1500"
    early = Firecrawl(api_url=browsing).scrape(page, formats=["markdown"])
    assert "pangolin" not in (early.markdown or "")
    late = Firecrawl(api_url=browsing).scrape(page, formats=["markdown"], wait_for=3000)
    assert "delayed pangolin" in late.markdown


def test_python_sdk_actions_click_write_press_scroll_screenshot_scrape_and_javascript(browsing: str,
                                                                                      scripted: OfflineStack) -> None:
    doc = Firecrawl(api_url=browsing).scrape(
        f"{scripted.web.url}/_test/js/click", formats=["markdown"],
        actions=[{"type": "click", "selector": "#reveal"}, {"type": "wait", "selector": "#more p"},
                 {"type": "click", "selector": "#q"}, {"type": "write", "text": "wisp"},
                 {"type": "press", "key": "Enter"}, {"type": "scroll", "direction": "down"},
                 {"type": "screenshot", "viewport": {"width": 640, "height": 480}}, {"type": "scrape"},
                 {"type": "executeJavascript", "script": "window.scrollY > 0"}])
    assert AXOLOTL in doc.markdown and "You searched for: wisp" in doc.markdown
    actions = doc.actions
    assert _png_size(actions["screenshots"][0]) == (640, 480)
    assert AXOLOTL in actions["scrapes"][0]["html"] and actions["scrapes"][0]["url"].endswith("/_test/js/click")
    assert actions["javascriptReturns"] == [{"type": "boolean", "value": True}]


def test_a_screenshot_is_a_png_of_the_viewport_or_of_the_whole_page(browsing: str, scripted: OfflineStack) -> None:
    page = f"{scripted.web.url}/_test/js/click"
    sized = Firecrawl(api_url=browsing).scrape(page, formats=[{"type": "screenshot",
                                                                "viewport": {"width": 800, "height": 600}}])
    assert _png_size(sized.screenshot) == (800, 600)
    whole = Firecrawl(api_url=browsing).scrape(page, formats=[{"type": "screenshot", "full_page": True}])
    width, height = _png_size(whole.screenshot)
    assert width == 1280 and height > 5000  # the page's 5000 px spacer
    v1_name = httpx.post(f"{browsing}/v2/scrape", json={"url": page, "formats": ["screenshot@fullPage"]}, timeout=60)
    assert _png_size(v1_name.json()["data"]["screenshot"]) == (width, height)
    mobile = Firecrawl(api_url=browsing).scrape(page, formats=["screenshot"], mobile=True)
    assert _png_size(mobile.screenshot) == (390, 844)


def test_js_sdk_screenshot_and_actions(browsing: str, scripted: OfflineStack) -> None:
    page = f"{scripted.web.url}/_test/js/click"
    [shot, acted, bad] = call_js(
        browsing, {"method": "scrape", "args": [page, {"formats": [{"type": "screenshot", "fullPage": False}]}]},
        {"method": "scrape", "args": [page, {"formats": ["markdown"], "actions": [
            {"type": "click", "selector": "#reveal"}, {"type": "wait", "milliseconds": 200},
            {"type": "executeJavascript", "script": "document.title"}]}]},
        {"method": "scrape", "args": [page, {"actions": [{"type": "click", "selector": "#no-such-button"}]}]})
    assert shot["ok"] and _png_size(shot["result"]["screenshot"]) == (1280, 800)
    assert acted["ok"] and AXOLOTL in acted["result"]["markdown"]
    assert acted["result"]["actions"]["javascriptReturns"] == [{"type": "string", "value": "Click, type and scroll"}]
    assert not bad["ok"] and bad["error"]["status"] == 400 and bad["error"]["code"] == "SCRAPE_ACTION_ERROR"


def test_a_failed_or_malformed_action_is_a_400_never_a_500(browsing: str, scripted: OfflineStack) -> None:
    page = f"{scripted.web.url}/_test/js/click"
    with pytest.raises(BadRequestError, match="no-such"):
        Firecrawl(api_url=browsing).scrape(page, actions=[{"type": "click", "selector": "#no-such"}])
    for actions in ([{"type": "click", "selector": "!!not a selector"}], [{"type": "hover", "selector": "a"}],
                    [{"type": "wait"}], [{"type": "wait", "milliseconds": 40_000}] * 2,
                    [{"type": "executeJavascript", "script": "throw new Error('boom')"}]):
        answer = httpx.post(f"{browsing}/v2/scrape", json={"url": page, "actions": actions}, timeout=60)
        assert answer.status_code == 400 and answer.json()["success"] is False, (actions, answer.text)


def test_without_a_browser_actions_are_refused_and_a_screenshot_is_a_warning(http_only: str,
                                                                            scripted: OfflineStack) -> None:
    page = f"{scripted.web.url}/_test/js/click"
    refused = httpx.post(f"{http_only}/v2/scrape", json={"url": page, "actions": [{"type": "scrape"}]}, timeout=30)
    assert refused.status_code == 400 and refused.json()["code"] == "SCRAPE_ACTIONS_NOT_SUPPORTED"
    doc = Firecrawl(api_url=http_only).scrape(page, formats=["markdown", "screenshot"])
    assert doc.screenshot is None and "screenshot" in doc.warning


def test_a_crawl_and_a_batch_of_scripted_pages_get_their_content(browsing: str, http_only: str,
                                                                 scripted: OfflineStack) -> None:
    seed = f"{scripted.web.url}/www.sqlite.org/wal.html"
    crawl = httpx.post(f"{browsing}/v2/crawl", json={"url": seed, "limit": 3}, timeout=30).json()
    pages = finished_crawl(browsing, crawl["id"])["data"]
    assert len(pages) == 3 and all(len(p["markdown"]) > 500 for p in pages)
    assert any("checkpoint" in p["markdown"] for p in pages)
    batch = Firecrawl(api_url=browsing).batch_scrape([seed, f"{scripted.web.url}/www.sqlite.org/pragma.html"],
                                                     formats=["markdown"])
    assert [len(d.markdown) > 500 for d in batch.data] == [True, True]
    shells = Firecrawl(api_url=http_only).batch_scrape([seed], formats=["markdown"])
    assert "checkpoint" not in (shells.data[0].markdown or "")


def test_a_ranked_search_reads_what_the_scripts_write(browsing: str, http_only: str) -> None:
    query = {"query": "sqlite write-ahead log checkpoint", "limit": 3, "retrieval_mode": "keyword", "explain": True,
             "scrapeOptions": {"formats": ["markdown"]}}
    rendered = httpx.post(f"{browsing}/v2/search", json=query, timeout=60).json()
    sqlite = [r for r in rendered["data"]["web"] if "www.sqlite.org" in r["url"]]
    assert sqlite and all(len(r["markdown"]) > 500 for r in sqlite)
    assert rendered["timings_ms"]["render"] > 0
    shells = httpx.post(f"{http_only}/v2/search", json=query, timeout=60).json()
    assert all(len(r.get("markdown") or "") < 200 for r in shells["data"]["web"] if "www.sqlite.org" in r["url"])


@pytest.fixture(scope="module")
def guarded(scripted: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The offline web opened by name (localhost) only: every other loopback, private or link-local address
    stays closed, to pages and to the browser alike."""
    with agent_service(scripted.searx.url, tmp_path_factory.mktemp("guarded"), "agent-guarded",
                       FETCH_ALLOW_HOSTS="localhost") as agent:
        yield agent.url


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback port FETCH_ALLOW_HOSTS does not open, recording anything that reaches it."""
    server = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            seen.append(conn.recv(1024) or b"(connected)")
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], seen
    server.close()


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/secret", "http://169.254.169.254/latest/meta-data/",
                                    "http://10.1.2.3/internal", "http://[::ffff:127.0.0.1]:{port}/mapped"])
def test_what_a_pages_scripts_ask_for_passes_the_ssrf_guard(guarded: str, scripted: OfflineStack, target: str,
                                                            listener: tuple[int, list[bytes]]) -> None:
    port, seen = listener
    target = target.format(port=port)
    web = scripted.web.url.replace("127.0.0.1", "localhost")
    blocked = _metric(guarded, 'wisp_agent_browser_requests_total{outcome="blocked"}')
    doc = Firecrawl(api_url=guarded).scrape(f"{web}/_test/js/fetches?to={target}", formats=["markdown"],
                                            wait_for=1500)
    assert "fetch: failed" in doc.markdown and "websocket: failed" in doc.markdown and "image: failed" in doc.markdown
    # fetch, WebSocket and image: each a connection the guard refused
    assert _metric(guarded, 'wisp_agent_browser_requests_total{outcome="blocked"}') >= blocked + 3
    assert seen == []


def test_a_redirect_or_a_script_navigation_to_a_closed_address_is_blocked(
        guarded: str, scripted: OfflineStack, listener: tuple[int, list[bytes]]) -> None:
    port, seen = listener
    web = scripted.web.url.replace("127.0.0.1", "localhost")
    secret = f"http://127.0.0.1:{port}/secret"
    navigated = httpx.post(f"{guarded}/v2/scrape", json={"url": f"{web}/_test/js/navigate?to={secret}",
                                                         "waitFor": 1000, "formats": ["markdown"]}, timeout=60)
    assert navigated.status_code in (200, 403) and "secret" not in navigated.json().get("data", {}).get("markdown", "")
    redirected = httpx.post(f"{guarded}/v2/scrape", json={"url": f"{web}/_test/redirect?to={secret}", "mobile": True},
                            timeout=60)
    assert redirected.status_code == 403 and redirected.json()["code"] == "UNSUPPORTED_SITE"
    assert seen == []


def test_downloads_are_refused(browsing: str, scripted: OfflineStack, tmp_path: Path) -> None:
    answer = httpx.post(f"{browsing}/v2/scrape", json={"url": f"{scripted.web.url}/_test/js/download",
                                                       "waitFor": 200}, timeout=60)
    assert answer.status_code == 500 and answer.json()["code"] == "SCRAPE_UNSUPPORTED_FILE_ERROR"


def test_a_crashed_chromium_is_started_again_and_none_outlives_a_killed_agent_svc(
        scripted: OfflineStack, tmp_path: Path) -> None:
    page = f"{scripted.web.url}/_test/js/inserted"
    with agent_service(scripted.searx.url, tmp_path, "agent-killed", FETCH_ALLOW_HOSTS="127.0.0.1") as agent:
        assert QUOKKA in Firecrawl(api_url=agent.url).scrape(page).markdown
        browser = _browser_processes(agent.process.pid)
        assert browser, "no Chromium under agent-svc"
        os.kill(_chromium(browser), signal.SIGKILL)  # its renderers and helpers go with it
        assert QUOKKA in Firecrawl(api_url=agent.url).scrape(page).markdown
        assert _metric(agent.url, "wisp_agent_browser_starts_total") == 2
        browser = _browser_processes(agent.process.pid)
        os.kill(agent.process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(pid) for pid in browser):
            time.sleep(0.2)
        assert not [pid for pid in browser if _alive(pid)]


def _browser_processes(root: int) -> list[int]:
    """Chromium's processes and the Playwright driver under `root`."""
    return [pid for pid in descendants(root) if "chromium" in (argv := argv0(pid)) or "playwright" in argv]


def _chromium(pids: list[int]) -> int:
    """Chromium's browser process among `pids` (the others are its renderers and helpers, and the driver)."""
    [browser] = [pid for pid in pids if b"chromium" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
                 and b"--type=" not in Path(f"/proc/{pid}/cmdline").read_bytes()]
    return browser


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _metric(agent_url: str, series: str) -> float:
    for line in httpx.get(f"{agent_url}/metrics").text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{series} not in /metrics")


def _png_size(data_url: str) -> tuple[int, int]:
    assert data_url.startswith("data:image/png;base64,")
    png = base64.b64decode(data_url.split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])
