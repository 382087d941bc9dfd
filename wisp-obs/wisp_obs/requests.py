"""Each HTTP request's identity and its observation: a UUIDv7 id (the response's `X-Request-Id` header, which
agent-svc also returns as Firecrawl's `id`), the route template it matched, and when it ends one access log line
and one call of the service's metrics hook.

Pure ASGI middleware: Starlette's BaseHTTPMiddleware runs every request through an extra task and a memory
stream, a cost paid on every request at high concurrency.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEADER = "X-Request-Id"
# labels of what clients choose must stay few: a request that matched no route is "unmatched", never its path,
# and a method outside the standard ones is "OTHER"
UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# polled by probes and scrapers every few seconds: their access lines are DEBUG, not INFO
QUIET_ROUTES = frozenset({"/metrics", "/healthz", "/readyz"})


@dataclass
class RequestInfo:
    id: str
    method: str
    path: str
    route: str = UNMATCHED  # the route template (`/v2/crawl/{job_id}`), known once the app has routed it
    extra: dict[str, str] = field(default_factory=dict)  # what the handler adds (agent-svc: the retrieval mode)


Observer = Callable[[RequestInfo, int, float], None]  # (the request, its status, its seconds)
_current: ContextVar[RequestInfo | None] = ContextVar("wisp_request", default=None)


def current() -> RequestInfo | None:
    """The request being served (in the tasks it started too), or None outside one."""
    return _current.get()


def request_id() -> str:
    """The current request's id, or a new one outside a request."""
    info = _current.get()
    return info.id if info else uuid7()


def uuid7() -> str:
    """A UUIDv7 (time-ordered), as Firecrawl's ids are."""
    millis = time.time_ns() // 1_000_000
    value = (millis << 80) | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return str(uuid.UUID(int=value))


class ObservedRequests:
    """Names each HTTP request, returns its id in `X-Request-Id`, and when it ends calls `observe` and writes
    the access line. `trust_incoming_id`: adopt a caller's well-formed `X-Request-Id` (for a service whose
    callers are Wisp's own, so that one id follows a search across services)."""

    def __init__(self, app: ASGIApp, observe: Observer, access_log: logging.Logger,
                 trust_incoming_id: bool = False) -> None:
        self._app, self._observe, self._access_log = app, observe, access_log
        self._trust_incoming_id = trust_incoming_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        info = RequestInfo(self._id_for(scope), scope["method"] if scope["method"] in METHODS else "OTHER",
                           scope["path"])
        # not reset afterwards: every request runs in a task of its own, and the app's handler of unexpected
        # errors, which runs outside this middleware, still names the request
        _current.set(info)
        header = (b"x-request-id", info.id.encode())
        status = 500  # what the server answers when the app raises before it responds
        root_path = scope.get("root_path", "")
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            await self._app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            info.route = _route_template(scope, root_path)
            self._observe(info, status, seconds)
            self._log(info, status, seconds)

    def _id_for(self, scope: Scope) -> str:
        if self._trust_incoming_id:
            for name, value in scope["headers"]:
                if name == b"x-request-id":
                    return _well_formed(value) or uuid7()
        return uuid7()

    def _log(self, info: RequestInfo, status: int, seconds: float) -> None:
        level = logging.DEBUG if info.route in QUIET_ROUTES else logging.INFO
        if self._access_log.isEnabledFor(level):
            duration_ms = round(seconds * 1000, 1)
            self._access_log.log(level, "%s %s %d %.1f ms", info.method, info.path, status, duration_ms,
                                 extra={"method": info.method, "path": info.path, "route": info.route,
                                        "status": status, "duration_ms": duration_ms, **info.extra})


def id_header() -> dict[str, str]:
    """The current request's id as a header: for a response sent outside the middleware, and for the calls a
    request makes to another Wisp service."""
    info = _current.get()
    return {HEADER: info.id} if info else {}


def _route_template(scope: Scope, root_path: str) -> str:
    """The template of the route that served the request. Inside a mounted app it follows the mount's path, by
    which routing grew the scope's root_path (Wisp mounts at fixed paths: a mount path with parameters would
    show their values); an app mounted without routes of its own is the mount's path alone."""
    mount = scope.get("root_path", "")[len(root_path):]
    route = scope.get("route")
    if route is None:
        return mount or UNMATCHED
    return mount + route.path


def _well_formed(value: bytes) -> str | None:
    try:
        return str(uuid.UUID(value.decode("ascii"))) if len(value) == 36 else None
    except ValueError:
        return None
