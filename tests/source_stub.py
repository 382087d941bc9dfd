"""A stand-in for a hosted search API (Exa's POST /search contract: `x-api-key`, `numResults`, `contents.text`,
results with `url`, `title`, `text`, `publishedDate`), on loopback, in a thread of the test's process: the one part
of an extra source that cannot run here. Its `mode` makes it answer as a real API does when it is out of credit,
rate-limited, failing, hanging, or sending what no API should."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("results", "402", "in-band-402", "429", "500", "401", "html", "not-a-list", "flood", "hang", "drip")


@dataclass
class StubResult:
    url: str
    title: str
    text: str


@dataclass
class SourceStub:
    results: list[StubResult]
    mode: str = "results"
    calls: list[dict[str, Any]] = field(default_factory=list)  # each call's body and x-api-key
    url: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        self.calls.append({"body": body, "key": handler.headers.get("x-api-key"), "path": handler.path})
        mode = self.mode
        if mode == "results":
            wanted = int(body.get("numResults") or 10)
            with_text = bool(body.get("contents", {}).get("text"))
            found = [{"id": r.url, "url": r.url, "title": r.title, "publishedDate": "2026-11-30T00:00:00.000Z",
                      "author": None, **({"text": r.text} if with_text else {})} for r in self.results[:wanted]]
            _send(handler, 200, {"requestId": "stub", "resolvedSearchType": "neural", "results": found})
        elif mode in ("402", "429", "500", "401"):
            _send(handler, int(mode), {"error": f"stub answers {mode}"})
        elif mode == "in-band-402":  # what seed 001's API did: the error inside a 200
            _send(handler, 200, {"error": "web_search_exa error (402): You have exceeded your credits limit"})
        elif mode == "html":
            _send_bytes(handler, 200, b"<html><body>Service Unavailable</body></html>", "text/html")
        elif mode == "not-a-list":
            _send(handler, 200, {"results": "none today"})
        elif mode == "flood":  # 12 MB of results, far past any bound
            item = {"url": "http://flood.example/", "title": "x" * 1000, "text": "y" * 10_000}
            _send(handler, 200, {"results": [item] * 1100})
        elif mode == "hang":
            self._stop.wait(60)
        elif mode == "drip":  # headers at once, then a byte a second: a per-read timeout never fires
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "100000")
            handler.end_headers()
            for _ in range(60):
                if self._stop.wait(1.0):
                    return
                handler.wfile.write(b" ")
                handler.wfile.flush()

    @property
    def called(self) -> int:
        return len(self.calls)


def _send(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    _send_bytes(handler, status, json.dumps(body).encode(), "application/json")


def _send_bytes(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up: what a bound does
        handler.wfile.write(body)


@contextmanager
def source_stub(results: list[StubResult]) -> Iterator[SourceStub]:
    """The stub listening on a free loopback port until the block ends."""
    stub = SourceStub(results)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            stub.answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="source-stub", daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        stub._stop.set()
        server.shutdown()
        server.server_close()
