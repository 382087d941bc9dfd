"""A loopback-only web server for the offline web: pages under /<host>/<path>, the search engine, test routes.

Every host contains a dot, so a first path segment without one is a service route: /search and /html
(the engine, in SearXNG-JSON and in plain HTML for searx's xpath engine; `hosts=a,b` keeps the results on those
hosts, an engine indexing only them), /healthz, and the robustness
routes for fetchers: `?delay_ms=N` on any URL, `?gzip=1` on any page, /_test/status/<code>,
/_test/redirect?to=URL,
/_test/hang?seconds=S (accepts, never answers), /_test/long?kb=N, /_test/tiny?kb=N (tiny paragraphs),
/_test/bomb?mb=N (a gzip bomb), /_test/together?n=N&group=G (answers once N requests of group G are waiting
together: fetches that were not in flight at once never get their page), and /_test/log (the requests seen).
PDFs (debian-reference ships one) are served as application/pdf.

For browsers (`offline_web.scripted`), pages whose content a script writes, so an HTTP fetch reads an empty shell:
/_test/js/inserted (at load), /_test/js/delayed?ms=N (N ms after load: 1500 by default, at most 10000),
/_test/js/click (a button #reveal that reveals #more, an input #q whose Enter writes #echo, 5000 px to scroll),
/_test/js/fetches?to=URL (fetch, WebSocket and image requests to URL, each reported in #fetch-result,
#websocket-result, #image-result), /_test/js/navigate?to=URL (sets location.href to URL once loaded) and
/_test/js/download (an attachment, x.bin). With `scripted_hosts` every HTML page of those hosts is served as such a
shell, its <title> kept and its body written in at DOMContentLoaded; the index still holds their text.

For crawlers: /robots.txt is `robots_txt` when one is given (else 404, as for most documentation hosts), and
with `sitemaps` each site has /<prefix>/sitemap.xml listing the pages its include pattern keeps.
"""

from __future__ import annotations

import functools
import gzip
import html
import json
import mimetypes
import threading
import time
import zlib
from collections import deque
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from posixpath import normpath
from urllib.parse import parse_qs, unquote, urlsplit

from offline_web import scripted
from offline_web.corpus import site_dir
from offline_web.engine import SearchEngine
from offline_web.sites import Site, match_site

_MAX_DELAY_S = 60.0


class OfflineWeb:
    """Serve `sites` from the corpus cache and the search engine over `index_db` on 127.0.0.1; the HTML pages of
    `scripted_hosts` as shells a script fills in (see the module's docstring)."""

    def __init__(self, sites: list[Site], cache: Path, index_db: Path, port: int = 0, robots_txt: str = "",
                 sitemaps: bool = False, scripted_hosts: tuple[str, ...] = ()) -> None:
        self.sites = sites
        self.scripted_hosts = frozenset(scripted_hosts)
        self.robots_txt, self.sitemaps = robots_txt, sitemaps
        self.cache = cache
        self.engine = SearchEngine(index_db)
        self.requests: deque[dict] = deque(maxlen=2000)
        self.page_delay_ms = 0.0  # how long every page of a site takes to answer, as a real site's would
        self.stopping = threading.Event()
        self.gathered: dict[str, int] = {}  # requests of each group of /_test/together seen so far
        self.gathering = threading.Condition()
        self._httpd = _QuietServer(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.web = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> OfflineWeb:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="offline-web", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self.stopping.set()
        with self.gathering:
            self.gathering.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()

    def requests_to(self, path: str) -> list[dict]:
        """Logged requests whose path is `path`: what an upstream (searx, a fetcher) actually sent."""
        return [r for r in list(self.requests) if r["path"] == path]

    def __enter__(self) -> OfflineWeb:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a fetcher opening 8 connections at once (a cold or expired keep-alive
    # pool) overflows it whenever this accept loop lags, and each dropped SYN waits the kernel's 1 s retransmit
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up (a timed-out engine, a cancelled fetch) is normal here


class _Handler(BaseHTTPRequestHandler):
    server_version = "offline-web/1"
    protocol_version = "HTTP/1.1"
    # headers and body are separate writes; with Nagle's algorithm a keep-alive client waits ~40 ms for each
    disable_nagle_algorithm = True

    @property
    def web(self) -> OfflineWeb:
        return self.server.web  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        path = unquote(split.path)
        user_agent = self.headers.get("User-Agent", "")
        self.web.requests.append({"path": path, "qs": query, "ua": user_agent, "t": time.time()})
        first = path.lstrip("/").split("/", 1)[0]
        delay_ms = float(query.get("delay_ms") or 0) or (self.web.page_delay_ms if "." in first else 0)
        if delay_ms:
            self.web.stopping.wait(min(delay_ms / 1000, _MAX_DELAY_S))
        routes = {"healthz": self._healthz, "search": self._search_json, "html": self._search_html, "_test": self._test}
        if path == "/robots.txt":
            self._robots()
        elif "." not in first:
            routes.get(first, self._not_found)(path, query)
        elif self.web.sitemaps and path.endswith("/sitemap.xml"):
            self._sitemap(path)
        else:
            self._page(path, query)

    def _healthz(self, path: str, query: dict[str, str]) -> None:
        self._send(200, b"OK", "text/plain")

    def _robots(self) -> None:
        if not self.web.robots_txt:
            return self._not_found()
        self._send(200, self.web.robots_txt.encode(), "text/plain; charset=utf-8")

    def _sitemap(self, path: str) -> None:
        prefix = path.lstrip("/").removesuffix("/sitemap.xml")
        site = next((s for s in self.web.sites if s.prefix == prefix), None)
        if site is None:
            return self._not_found()
        root = site_dir(self.web.cache, site).resolve()
        base = f"http://{self.headers.get('Host', f'127.0.0.1:{self.web.port}')}/{site.prefix}/"
        pages = sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))
        locs = "".join(f"<url><loc>{html.escape(base + page)}</loc></url>" for page in pages if site.includes(page))
        body = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
        self._send(200, body.encode(), "application/xml")

    def _not_found(self, *_: object) -> None:
        self._send(404, b"not found", "text/plain")

    def _results(self, query: dict[str, str]) -> list[dict]:
        host = f"http://{self.headers.get('Host', f'127.0.0.1:{self.web.port}')}/"
        results = self.web.engine.search(
            query.get("q", ""),
            category=query.get("cat") or query.get("category") or "general",
            pageno=int(query["pageno"]) if query.get("pageno", "").isdigit() else 1,
            time_range=query.get("time_range") or None,
            honour_operators=query.get("ops") != "ignore",
            hosts=tuple(h for h in query.get("hosts", "").split(",") if h),
        )
        for r in results:
            r["url"] = host + r["url"]
            if "img" in r:
                r["img"] = host + r["img"]
        return results

    def _search_json(self, path: str, query: dict[str, str]) -> None:
        results = self._results(query)
        body = {"query": query.get("q", ""), "number_of_results": len(results), "results": results}
        self._send(200, json.dumps(body).encode(), "application/json")

    def _search_html(self, path: str, query: dict[str, str]) -> None:
        items = "".join(
            f'<div class="r"><a href="{html.escape(r["url"])}">{html.escape(r["title"])}</a>'
            f"<p>{html.escape(r['content'])}</p></div>"
            for r in self._results(query)
        )
        self._send(200, f"<html><body>{items}</body></html>".encode(), "text/html; charset=utf-8")

    def _test(self, path: str, query: dict[str, str]) -> None:
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[1] == "status" and parts[2].isdigit():
            self._send(int(parts[2]), json.dumps({"error": f"forced status {parts[2]}"}).encode(), "application/json")
        elif parts[1:] == ["hang"]:
            self.web.stopping.wait(float(query.get("seconds", 30)))
        elif parts[1:] == ["redirect"] and query.get("to"):
            self._redirect(query["to"], HTTPStatus.FOUND)
        elif parts[1:] == ["long"]:
            self._send(200, _long_page(int(query.get("kb", 1024))), "text/html; charset=utf-8")
        elif parts[1:] == ["tiny"]:
            self._send(200, _tiny_paragraphs(int(query.get("kb", 5120))), "text/html; charset=utf-8")
        elif parts[1:] == ["bomb"]:
            self._send(200, _gzip_bomb(int(query.get("mb", 200))), "text/html; charset=utf-8", encoding="gzip")
        elif parts[1:] == ["together"]:
            self._together(query.get("group", ""), int(query.get("n", 2)))
        elif parts[1:] == ["log"]:
            self._send(200, json.dumps(list(self.web.requests)).encode(), "application/json")
        elif len(parts) == 3 and parts[1] == "js":
            self._js(parts[2], query)
        else:
            self._not_found()

    def _js(self, name: str, query: dict[str, str]) -> None:
        to = query.get("to", "")
        if name == "inserted":
            self._send(200, scripted.inserted(), "text/html; charset=utf-8")
        elif name == "delayed":
            self._send(200, scripted.delayed(_int(query.get("ms"), 1500)), "text/html; charset=utf-8")
        elif name == "click":
            self._send(200, scripted.click(), "text/html; charset=utf-8")
        elif name == "fetches" and to:
            self._send(200, scripted.fetches(to), "text/html; charset=utf-8")
        elif name == "navigate" and to:
            self._send(200, scripted.navigate(to), "text/html; charset=utf-8")
        elif name == "download":
            self._send(200, scripted.DOWNLOAD, "application/octet-stream",
                       headers={"Content-Disposition": "attachment; filename=x.bin"})
        else:
            self._not_found()

    def _together(self, group: str, n: int) -> None:
        web = self.web
        with web.gathering:
            web.gathered[group] = web.gathered.get(group, 0) + 1
            web.gathering.notify_all()
            web.gathering.wait_for(lambda: web.gathered[group] >= n or web.stopping.is_set(), _MAX_DELAY_S)
        page = f"<html><head><title>Together</title></head><body><p>{n} requests of {group} together.</p></body></html>"
        self._send(200, page.encode(), "text/html; charset=utf-8")

    def _page(self, path: str, query: dict[str, str]) -> None:
        found = match_site(self.web.sites, path)
        if found is None:
            return self._not_found()
        site, rest = found
        root = site_dir(self.web.cache, site).resolve()
        relative = normpath(rest) if rest else "."
        if relative.startswith(".."):
            return self._not_found()
        target = (root / relative).resolve()
        if not target.is_relative_to(root):  # a symlink out of the package tree
            return self._not_found()
        if target.is_dir():
            if not path.endswith("/"):
                return self._redirect(path + "/")
            target = target / "index.html"
        content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if content_type.startswith("text/"):
            content_type += "; charset=utf-8"
        precompressed = target.with_name(target.name + ".gz")
        shelled = site.host in self.web.scripted_hosts and content_type.startswith("text/html")
        if target.is_file():
            body = target.read_bytes()
            body = scripted.scripted(body) if shelled else body
            if query.get("gzip") == "1":
                return self._send(200, gzip.compress(body), content_type, encoding="gzip")
            return self._send(200, body, content_type)
        if precompressed.is_file():  # as servers do with pre-compressed files (python's changelog ships .gz)
            body = precompressed.read_bytes()
            body = gzip.compress(scripted.scripted(gzip.decompress(body))) if shelled else body
            return self._send(200, body, content_type, encoding="gzip")
        self._not_found()

    def _redirect(self, location: str, status: HTTPStatus = HTTPStatus.MOVED_PERMANENTLY) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send(self, status: int, body: bytes, content_type: str, encoding: str | None = None,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if encoding:
            self.send_header("Content-Encoding", encoding)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _int(value: str | None, default: int) -> int:
    """A query parameter as an int, `default` when it is missing or not a number."""
    try:
        return int(value) if value else default
    except ValueError:
        return default


@functools.cache
def _tiny_paragraphs(kb: int) -> bytes:
    """About `kb` KiB of one-word paragraphs: cheap to send, and the slowest kind of page to extract."""
    return b"<html><body>" + b"<p>a b</p>" * (kb * 1024 // 10) + b"</body></html>"


@functools.cache
def _gzip_bomb(mb: int) -> bytes:
    """A gzip body that decodes to `mb` MiB of one repeated paragraph (about 1,000 times its size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"<p>bomb</p>" * (2**20 // 11)
    return b"".join([packer.compress(b"<html><body>"), *(packer.compress(block) for _ in range(mb)), packer.flush()])


def _long_page(kb: int) -> bytes:
    """A page of about `kb` KiB of distinct paragraphs, for size limits and chunking."""
    paragraph = "<p>Paragraph {n} of a very long page: it repeats so that size limits and chunking get exercised.</p>"
    parts, size, n = [], 0, 0
    while size < kb * 1024:
        n += 1
        parts.append(paragraph.format(n=n))
        size += len(parts[-1])
    return f"<html><head><title>A very long page</title></head><body>{''.join(parts)}</body></html>".encode()
