import asyncio
import hmac
import json
from pathlib import Path

import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from agent.api.gate import auth
from agent.api.gate.admission import CLIENT, RELEASES
from agent.api.gate.auth import Gate, KeyRing, key_id, load_keys, parse_keys, protect
from agent.api.gate.settings import GateSettings
from agent.errors import RateLimited
from agent.state.limits import Limits
from agent.state.limits.memory import RateLimiter

KEY = "wisp-test-key-0123456789abcdef"
OTHER = "another-key-of-enough-length"


def test_keys_come_from_the_list_and_the_file_without_blanks_or_comments() -> None:
    text = f"# the team's keys\n{OTHER}\n\n   # rotated out: old-key\n {KEY} \n"
    assert parse_keys(f" {KEY} ,, {OTHER}", text) == [KEY, OTHER, OTHER, KEY]
    assert parse_keys("", "") == []


@pytest.mark.parametrize(("inline", "text", "where"), [
    ("short", "", "API_KEYS item 1"), (f"{KEY},{KEY} x", "", "API_KEYS item 2"),
    ("", f"{KEY}\n{KEY}  # note", "API_KEYS_FILE line 2"), ("", "clé-non-ascii-0123456789", "API_KEYS_FILE line 1"),
])
def test_unusable_keys_are_refused_by_where_they_are_never_by_value(inline: str, text: str, where: str) -> None:
    with pytest.raises(ValueError, match=f"^{where} is not a usable API key") as refused:
        parse_keys(inline, text)
    assert "short" not in str(refused.value) and "note" not in str(refused.value)


def test_key_ids_are_short_stable_and_not_the_key() -> None:
    assert key_id(KEY) == key_id(KEY) != key_id(OTHER)
    assert len(key_id(KEY)) == 8 and key_id(KEY) not in KEY


def test_a_key_is_found_and_a_wrong_or_near_key_is_not() -> None:
    ring = KeyRing([KEY, OTHER])
    assert ring.identify(KEY.encode()) == f"key:{key_id(KEY)}"
    assert ring.identify(OTHER.encode()) == f"key:{key_id(OTHER)}"
    for wrong in (KEY[:-1], KEY + "x", KEY.upper(), "", "x" * 10_000):
        assert ring.identify(wrong.encode()) is None


def test_every_key_is_compared_on_digests_of_one_length(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def compare(a: bytes, b: bytes) -> bool:
        seen.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", compare)
    ring = KeyRing([KEY, OTHER, "third-key-0123456789"])
    for token in (KEY, "x", "y" * 5000):  # a match on the first key still compares the other two
        seen.clear()
        ring.identify(token.encode())
        assert seen == [(32, 32)] * 3


@pytest.mark.parametrize(("header", "expected"), [
    (None, "Unauthorized"), (b"Bearer", "Unauthorized: Token missing"), (b"Bearer   ", "Unauthorized: Token missing"),
    (f"Basic {KEY}".encode(), "Unauthorized: Token missing"), (b"Bearer None", "Unauthorized: Invalid token"),
    (f"Bearer {KEY}x".encode(), "Unauthorized: Invalid token"),
])
def test_refusals_use_firecrawls_wording(header: bytes | None, expected: str) -> None:
    refusal = KeyRing([KEY]).check(header)
    assert refusal.status == 401 and refusal.message == expected


@pytest.mark.parametrize("header", [f"Bearer {KEY}", f"bearer  {KEY} ", f"BEARER {KEY}"])
def test_the_scheme_is_case_insensitive(header: str) -> None:
    assert KeyRing([KEY]).check(header.encode()) == f"key:{key_id(KEY)}"


def settings(**values) -> GateSettings:
    return GateSettings(**{"api_keys": SecretStr(""), "api_keys_file": "", **values})


def test_load_keys_joins_both_settings_and_fails_closed(tmp_path: Path) -> None:
    assert load_keys(settings()) is None
    keys = tmp_path / "keys"
    keys.write_text(f"{OTHER}\n")
    ring = load_keys(settings(api_keys=SecretStr(KEY), api_keys_file=str(keys)))
    assert ring.ids() == [f"key:{key_id(KEY)}", f"key:{key_id(OTHER)}"]
    keys.write_text("# nobody yet\n")
    with pytest.raises(ValueError, match="names no key"):
        load_keys(settings(api_keys_file=str(keys)))
    with pytest.raises(ValueError, match=r"API_KEYS_FILE .*missing: No such file"):
        load_keys(settings(api_keys_file=str(tmp_path / "missing")))


def test_api_keys_stay_out_of_the_settings_repr() -> None:
    assert KEY not in repr(settings(api_keys=SecretStr(KEY)))


def test_keyless_and_unlimited_adds_no_middleware() -> None:
    app = FastAPI()
    protect(app, settings(), Limits())
    assert app.user_middleware == [] and app.state.limits == Limits()


class Inner:
    """The app behind the gate: records the scope, may hold a costly slot, may fail."""

    def __init__(self, fail: bool = False) -> None:
        self.scopes: list[dict] = []
        self.fail = fail

    async def __call__(self, scope, receive, send) -> None:
        self.scopes.append(scope)
        async def release() -> None:
            scope["released"] = True

        scope.get(RELEASES, []).append(release)
        if self.fail:
            raise RuntimeError("handler failed")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def call(gate: Gate, path: str = "/v2/search", method: str = "POST", headers: list | None = None,
         client: tuple | None = ("10.0.0.7", 5000)) -> tuple[int, dict, dict]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "path": path, "method": method, "headers": headers or [], "client": client}
    asyncio.run(gate(scope, receive, send))
    start, body = sent[0], sent[1]["body"]
    return start["status"], dict(start["headers"]), json.loads(body) if body != b"{}" else {}


def bearer(key: str) -> list:
    return [(b"authorization", f"Bearer {key}".encode())]


def test_the_gate_answers_401_in_firecrawls_envelope_and_opens_only_health() -> None:
    inner = Inner()
    gate = Gate(inner, KeyRing([KEY]), None)
    status, headers, body = call(gate)
    assert status == 401 and body == {"success": False, "error": "Unauthorized"}
    assert headers[b"www-authenticate"] == b"Bearer" and headers[b"content-type"] == b"application/json"
    assert call(gate, "/v2/search", headers=bearer("wrong"))[2]["error"] == "Unauthorized: Invalid token"
    for path in ("/metrics", "/mcp", "/v2/crawl/active", "/docs", "/nowhere", "/healthz/", "/v2/healthz"):
        assert call(gate, path, "GET")[0] == 401, path
    assert inner.scopes == []
    assert call(gate, "/healthz", "GET")[0] == 200 and call(gate, "/readyz", "GET")[0] == 200
    assert call(gate, headers=bearer(KEY))[0] == 200
    assert inner.scopes[-1][CLIENT] == f"key:{key_id(KEY)}"


def test_the_gate_limits_posts_per_client_and_names_keyless_clients_by_address() -> None:
    inner = Inner()
    gate = Gate(inner, None, RateLimiter(2))
    assert [call(gate)[0] for _ in range(2)] == [200, 200]
    status, headers, body = call(gate)
    assert status == 429 and int(headers[b"retry-after"]) in range(59, 61)
    assert body["success"] is False and body["error"].startswith("Rate limit exceeded. Consumed (req/min): 3")
    assert call(gate, "/v2/crawl/abc", "GET")[0] == 200  # reads are not counted
    assert call(gate, client=("10.0.0.8", 5000))[0] == 200
    assert [s[CLIENT] for s in inner.scopes] == ["addr:10.0.0.7"] * 3 + ["addr:10.0.0.8"]


def test_the_gate_frees_costly_slots_when_the_response_is_done_or_the_handler_failed() -> None:
    inner = Inner()
    call(Gate(inner, None, None))
    assert inner.scopes[-1]["released"]
    failing = Inner(fail=True)
    with pytest.raises(RuntimeError):
        call(Gate(failing, None, None))
    assert failing.scopes[-1]["released"]


def test_a_refused_request_counts_nothing_against_the_limit() -> None:
    limiter = RateLimiter(1)
    gate = Gate(Inner(), KeyRing([KEY]), limiter)
    for _ in range(3):
        call(gate, headers=bearer("wrong"))
    assert call(gate, headers=bearer(KEY))[0] == 200
    assert isinstance(asyncio.run(limiter.hit(f"key:{key_id(KEY)}")), RateLimited)


def open_socket(gate: Gate, headers: list | None = None, subprotocols: list | None = None,
                extensions: dict | None = None) -> list[dict]:
    """A WebSocket handshake through the gate: what the gate (or the app behind it) sent."""
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "websocket.connect"}

    scope = {"type": "websocket", "path": "/v2/crawl/abc", "headers": headers or [], "client": ("10.0.0.7", 5000),
             "subprotocols": subprotocols or [],
             "extensions": {"websocket.http.response": {}} if extensions is None else extensions}
    asyncio.run(gate(scope, receive, send))
    return sent


def test_a_socket_without_the_key_gets_the_401_before_its_handshake() -> None:
    inner = Inner()
    gate = Gate(inner, KeyRing([KEY]), None)
    start, body = open_socket(gate)
    assert start["type"] == "websocket.http.response.start" and start["status"] == 401
    assert json.loads(body["body"]) == {"success": False, "error": "Unauthorized"}
    wrong = open_socket(gate, subprotocols=["not-the-key"])
    assert json.loads(wrong[1]["body"])["error"] == "Unauthorized: Invalid token"
    # a server without the extension cannot send a body: it answers the handshake 403
    assert open_socket(gate, extensions={}) == [{"type": "websocket.close", "code": 1008}]
    assert inner.scopes == []


def test_a_socket_may_carry_the_key_as_header_or_subprotocol() -> None:
    inner = Inner()
    gate = Gate(inner, KeyRing([KEY]), RateLimiter(1))
    open_socket(gate, headers=bearer(KEY))
    open_socket(gate, subprotocols=[KEY])
    open_socket(gate, subprotocols=[KEY])  # not a POST: the per-minute limit does not count it
    assert [s[CLIENT] for s in inner.scopes] == [f"key:{key_id(KEY)}"] * 3
