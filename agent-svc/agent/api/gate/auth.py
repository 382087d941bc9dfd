"""API keys and the gate in front of every route.

Without API_KEYS or API_KEYS_FILE agent-svc is open, as for local use. With them, every route but health needs
`Authorization: Bearer <key>`, else a 401 in Firecrawl's envelope and wording; a WebSocket may carry the key as
its subprotocol instead (Firecrawl's JS watcher does), and is refused with the same 401 before its handshake.
Tavily's routes take the key as `api_key` in the JSON body too (older clients such as Open WebUI send it so), and
refuse in Tavily's error shape.
The gate also names the client the limits count (the key, or the caller's address when keyless) and applies
RATE_LIMIT_PER_MIN (admission.py), in this process or, with REDIS_URL, in Redis for every replica.
Keys are held as SHA-256 digests and never logged; a log line names a key by a short id of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

import anyio
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.api.bodies import DEFAULT_LIMITS
from agent.api.envelopes import error_body_for
from agent.api.gate.admission import CLIENT, KEY_CLIENT, RELEASES, caller, starts_work
from agent.api.gate.body_limits import parsed_json
from agent.api.gate.settings import GateSettings
from agent.api.tavily.wire import PATHS as TAVILY_PATHS
from agent.errors import BadRequest, Unauthorized, WispError
from agent.state.limits import Limits, PerMinuteLimit, Release

log = logging.getLogger("agent")

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
MIN_KEY_CHARS = 16
_KEY = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what an HTTP header carries unchanged
# Firecrawl's wording (controllers/auth.ts)
NO_HEADER = Unauthorized("Unauthorized")
NO_TOKEN = Unauthorized("Unauthorized: Token missing")
WRONG_TOKEN = Unauthorized("Unauthorized: Invalid token")


def parse_keys(inline: str, file_text: str = "") -> list[str]:
    """The keys of API_KEYS (comma-separated) and of the file's text (one a line, `#` comments); a ValueError
    naming where a key is too short or holds a character a header cannot carry (never the key itself)."""
    found = [(f"API_KEYS item {n}", key.strip()) for n, key in enumerate(inline.split(","), 1)]
    found += [(f"API_KEYS_FILE line {n}", line.strip()) for n, line in enumerate(file_text.splitlines(), 1)
              if not line.lstrip().startswith("#")]
    keys = []
    for where, key in found:
        if not key:
            continue
        if len(key) < MIN_KEY_CHARS or not _KEY.fullmatch(key):
            raise ValueError(f"{where} is not a usable API key: it needs {MIN_KEY_CHARS} or more visible ASCII "
                             "characters and no spaces (python -c 'import secrets; print(secrets.token_urlsafe(32))' "
                             "makes one)")
        keys.append(key)
    return keys


def key_id(key: str) -> str:
    """A short name of a key for the log: a hash of its own, not the digest compared."""
    return hashlib.sha256(b"wisp key id\0" + key.encode()).hexdigest()[:8]


class KeyRing:
    """The accepted keys, checked in constant time."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._keys = [(hashlib.sha256(key.encode()).digest(), f"{KEY_CLIENT}{key_id(key)}")
                      for key in dict.fromkeys(keys)]

    def ids(self) -> list[str]:
        return [client for _, client in self._keys]

    def identify(self, token: bytes) -> str | None:
        """The client a token is the key of, or None. Digests have one length whatever the token's, and every
        key is compared (no early exit), so the time taken tells nothing of the keys."""
        digest = hashlib.sha256(token).digest()
        found = None
        for candidate, client in self._keys:
            if hmac.compare_digest(digest, candidate):
                found = client
        return found

    def check(self, authorization: bytes | None) -> str | Unauthorized:
        """The client an Authorization header value names, or the 401 to answer."""
        if authorization is None:
            return NO_HEADER
        scheme, _, token = authorization.strip().partition(b" ")
        token = token.strip()
        if scheme.lower() != b"bearer" or not token:
            return NO_TOKEN
        return self.identify(token) or WRONG_TOKEN


class Gate:
    """Pure ASGI middleware: the key, then the per-minute limit on POSTs (the requests that start work; reads
    such as an SDK polling a crawl are not counted). It puts the client in the scope for the cost cap and frees
    the request's costly slots once the response has been sent, or the client has gone."""

    def __init__(self, app: ASGIApp, keys: KeyRing | None, per_minute: PerMinuteLimit | None,
                 max_body_bytes: int = GateSettings.model_fields["max_body_bytes"].default) -> None:
        self.app = app
        self.keys = keys
        self.per_minute = per_minute
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self.keys is None:
            client = caller(scope)
        else:
            authorization = _authorization(scope)
            if authorization is None and scope["path"] in TAVILY_PATHS:
                authorization, receive = await _body_key(receive, self.max_body_bytes)
            found = self.keys.check(authorization)
            if isinstance(found, Unauthorized):
                await _refuse(scope, receive, send, found)
                return
            client = found
        if self.per_minute is not None and starts_work(scope) and (refusal := await self.per_minute.hit(client)):
            await _refuse(scope, receive, send, refusal)
            return
        releases: list[Release] = []
        scope[CLIENT], scope[RELEASES] = client, releases
        try:
            await self.app(scope, receive, send)
        finally:
            # shielded: a client that hung up cancels its request, and a slot given back in Redis awaits
            with anyio.CancelScope(shield=True):
                for release in releases:
                    await release()


def protect(app: FastAPI, settings: GateSettings, limits: Limits) -> None:
    """Put the gate in front of `app` when keys or limits are set; keyless and unlimited, it adds nothing.
    `app.state.limits` holds the limits (the handlers take costly slots from it, /readyz asks its warnings)."""
    keys = load_keys(settings)
    app.state.limits = limits
    if keys is not None:
        log.info("API keys required: %d accepted (%s)", len(keys.ids()), ", ".join(keys.ids()))
    if keys is not None or limits.per_minute is not None or limits.costly is not None:
        app.add_middleware(Gate, keys=keys, per_minute=limits.per_minute, max_body_bytes=settings.max_body_bytes)


def load_keys(settings: GateSettings) -> KeyRing | None:
    """The keys of API_KEYS and API_KEYS_FILE, or None when neither is set."""
    file_text = ""
    if settings.api_keys_file:
        try:
            file_text = Path(settings.api_keys_file).read_text()
        except OSError as e:
            raise ValueError(f"API_KEYS_FILE {settings.api_keys_file}: {e.strerror}") from None
    inline = settings.api_keys.get_secret_value()
    keys = parse_keys(inline, file_text)
    if not keys and (inline.strip() or settings.api_keys_file):
        # meant to be closed: an empty key file must not leave agent-svc open
        raise ValueError("API_KEYS or API_KEYS_FILE is set but names no key")
    return KeyRing(keys) if keys else None


def _authorization(scope: Scope) -> bytes | None:
    """The Authorization header; a WebSocket without one may name its key as its first subprotocol."""
    found = _header(scope, b"authorization")
    if found is None and scope["type"] == "websocket" and scope.get("subprotocols"):
        return b"Bearer " + scope["subprotocols"][0].encode()
    return found


async def _body_key(receive: Receive, max_bytes: int) -> tuple[bytes | None, Receive]:
    """The body's `api_key` as an Authorization value (None when it has none), and a receive that hands the app
    the body read to find it. At most `max_bytes` are read here: past them BodyLimit refuses the request."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more and size <= max_bytes:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
    raw = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": raw, "more_body": more}

    return _api_key(raw) if not more else None, replay


def _api_key(raw: bytes) -> bytes | None:
    try:
        body = parsed_json(raw, DEFAULT_LIMITS)
    except BadRequest:
        return None
    key = body.get("api_key") if isinstance(body, dict) else None
    return b"Bearer " + key.encode() if isinstance(key, str) and key else None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


async def _refuse(scope: Scope, receive: Receive, send: Send, error: WispError) -> None:
    body = json.dumps(error_body_for(scope["path"])(error)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in error.headers().items()]
    prefix = "http"
    if scope["type"] == "websocket":
        await receive()  # websocket.connect: the handshake is answered after it
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})  # the server answers the handshake 403
            return
        prefix = "websocket.http"
    await send({"type": f"{prefix}.response.start", "status": error.status, "headers": headers})
    await send({"type": f"{prefix}.response.body", "body": body})
