"""Explicit bounds on what a request may hold, checked before any parser or stage trusts it.

The body's size is bounded by an ASGI middleware for every route (413), before a handler reads it. The JSON's
nesting depth is measured on the raw bytes before `json.loads` (which recurses, and dies of a deep enough
document), and the parsed value is walked once for over-long lists and strings that are not valid Unicode
(a lone surrogate cannot be sent on to SearXNG or a page). Each failure is a 4xx in Firecrawl's envelope.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.errors import BadRequest, InvalidJson, PayloadTooLarge, WispError

# a JSON string (escapes included) or one bracket: the brackets outside strings give the nesting. A string
# left open runs to the end of the body (the JSON is invalid then): requiring its closing quote made the regex
# rescan the rest of the body from every quote after it, hours for 2 MB of \" (the body is read on the event loop)
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset(b"[{")


@dataclass(frozen=True)
class RequestLimits:
    """The bounds of one request's content (the body's size is BodyLimit's)."""

    max_depth: int = 32
    max_list_items: int = 10_000
    max_query_chars: int = 2000
    max_domains: int = 1000


def parsed_json(raw: bytes, limits: RequestLimits) -> Any:
    """The JSON value of a body, or InvalidJson / BadRequest naming the bound it passes."""
    _check_depth(raw, limits.max_depth)
    try:
        value = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise InvalidJson() from None
    _check_values(value, limits.max_list_items)
    return value


def _check_depth(raw: bytes, max_depth: int) -> None:
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return  # cannot nest deeper than it has brackets: the common case costs two counts
    depth = 0
    for token in _JSON_TOKEN.finditer(raw):
        first = token.group()[0]
        if first in _OPENERS:
            depth += 1
            if depth > max_depth:
                raise BadRequest(f"Bad request, JSON nested deeper than {max_depth} levels")
        elif first != ord('"'):
            depth -= 1


def _check_values(value: Any, max_items: int) -> None:
    """Every list within `max_items`, every string valid Unicode; iterative, since depth is already bounded."""
    pending: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            _check_text(item, where)
        elif isinstance(item, list):
            if len(item) > max_items:
                raise BadRequest(f"Bad request, {_named(where)} has {len(item)} items; at most {max_items} are "
                                 "accepted")
            pending.extend((child, (*where, i)) for i, child in enumerate(item))
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_text(key, where)
                pending.append((child, (*where, key)))


def _check_text(text: str, where: tuple[str | int, ...]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"Bad request, {_named(where)} holds a lone UTF-16 surrogate (not valid Unicode)") from None


def _named(where: tuple[str | int, ...]) -> str:
    return ".".join(map(str, where)) or "the body"


class BodyLimit:
    """ASGI middleware: a request body over `max_bytes` is a 413 before any handler reads it.

    The body is read here (it is small by then) and replayed to the app, so chunked bodies without a
    Content-Length are bounded too.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, envelope: Callable[[str], Callable[[WispError], dict[str, Any]]]
                 ) -> None:
        self.app, self.max_bytes, self.envelope = app, max_bytes, envelope  # envelope: a path's error body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        if self._declared_length(scope) > self.max_bytes:
            await self._refuse(scope, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(scope, send)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(bytes(body), receive), send)

    @staticmethod
    def _declared_length(scope: Scope) -> int:
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit():
                return int(value) if len(value) <= 18 else sys.maxsize
        return 0

    async def _refuse(self, scope: Scope, send: Send) -> None:
        error = PayloadTooLarge(f"Payload too large: request bodies are limited to {self.max_bytes} bytes")
        payload = json.dumps(self.envelope(scope["path"])(error)).encode()
        await send({"type": "http.response.start", "status": error.status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the disconnect, when it comes

    return replayed
