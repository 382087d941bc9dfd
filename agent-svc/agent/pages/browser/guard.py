"""The browser's only way out: a forward proxy on 127.0.0.1 that passes each connection through the SSRF guard.

Chromium is started with this proxy for every scheme, loopback included (`<-loopback>`), so whatever makes a
request (the page itself, a subresource, a redirect hop, a script's fetch or XHR, a navigation by a script or an
action, a WebSocket, a service worker) connects here first. Request interception in the page (Playwright's
routes) does not see every hop: a redirect's target is fetched without passing the route again, so the guard
sits where nothing gets around it. Like the HTTP fetcher, the proxy resolves the host, checks every address
(FETCH_ALLOW_HOSTS may open some), and connects to the address it checked. HTTPS and WebSockets come as
CONNECT tunnels (TLS stays end to end: Chromium checks the certificate); plain HTTP as absolute-form requests,
sent on with `Connection: close`, so that one client connection never carries requests to two hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from agent.metrics import BrowserRequest
from agent.pages.ssrf import Allowlist, Blocked, check_url

MAX_HEAD_BYTES = 32_768
HEAD_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 10.0
_PIPE_CHUNK = 65_536
_HOP_HEADERS = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})

log = logging.getLogger("agent.browser")

GuardOutcome = Callable[[BrowserRequest], None]  # counted by the caller


class GuardProxy:
    """Serve on 127.0.0.1 (an ephemeral port) until closed; `counted` hears each connection's outcome."""

    def __init__(self, allow: Allowlist, counted: GuardOutcome) -> None:
        self._allow, self._counted = allow, counted
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        """The port the proxy listens on."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD_BYTES)
        return self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._relay(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            pass  # the browser or the site went away: the page sees a failed request
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(HEAD_TIMEOUT_S):
            head = await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ", 2)
        url = f"https://{target}/" if method == "CONNECT" else target
        try:
            address = await check_url(url, self._allow)
        except Blocked as e:
            # a tunnel is refused; a plain HTTP request gets no answer at all, since any answer would reach the
            # page as the site's own (a script's no-cors fetch would even see it succeed)
            self._counted("blocked")
            log.info("browser request blocked: %s", e)
            if method == "CONNECT":
                writer.write(f"{version} 403 Forbidden\r\nContent-Length: 0\r\n\r\n".encode())
                await writer.drain()
            return
        port = urlsplit(url).port or (443 if method == "CONNECT" else 80)
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                upstream_reader, upstream_writer = await asyncio.open_connection(str(address), port)
        except (OSError, TimeoutError):
            self._counted("failed")
            writer.write(f"{version} 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
            return
        self._counted("allowed")
        try:
            if method == "CONNECT":
                writer.write(f"{version} 200 Connection Established\r\n\r\n".encode())
                await writer.drain()
            else:
                upstream_writer.write(_origin_form(method, url, version, header_lines))
            await _pipe_both(reader, writer, upstream_reader, upstream_writer)
        finally:
            upstream_writer.close()


def _origin_form(method: str, url: str, version: str, header_lines: list[str]) -> bytes:
    """An absolute-form proxy request as the site expects it: its path, no proxy headers, and one request per
    connection."""
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    kept = [line for line in header_lines if line and line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
    return "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")


async def _pipe_both(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter) -> None:
    """Copy both ways until either side closes."""
    copies = [asyncio.create_task(_pipe(reader, upstream_writer)), asyncio.create_task(_pipe(upstream_reader, writer))]
    try:
        await asyncio.wait(copies, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for copy in copies:
            copy.cancel()
        await asyncio.gather(*copies, return_exceptions=True)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while chunk := await source.read(_PIPE_CHUNK):
            sink.write(chunk)
            await sink.drain()
