"""The MCP server's client of agent-svc: which Authorization it sends, and the DNS-rebinding guard of /mcp."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import httpx

from agent.mcp.server import HttpWisp, _security


def authorization_sent(forward_auth: bool, headers: dict[str, str] | None, client_headers: dict[str, str]
                       ) -> str | None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"success": True})

    async def post() -> None:
        transport = httpx.MockTransport(handle)
        async with httpx.AsyncClient(transport=transport, base_url="http://w", headers=client_headers) as http:
            await HttpWisp(http, forward_auth).post("/v2/search", {}, SimpleNamespace(headers=headers))

    asyncio.run(post())
    return seen[0].headers.get("authorization")


def test_mounted_it_forwards_the_mcp_callers_key() -> None:
    assert authorization_sent(True, {"authorization": "Bearer k1"}, {}) == "Bearer k1"
    assert authorization_sent(True, {}, {}) is None


def test_under_stdio_it_sends_its_own_key_whatever_the_request_carries() -> None:
    assert authorization_sent(False, None, {"Authorization": "Bearer mine"}) == "Bearer mine"
    assert authorization_sent(False, {"authorization": "Bearer k1"}, {"Authorization": "Bearer mine"}) == \
        "Bearer mine"


def test_allowed_hosts_guard_hosts_and_origins_and_empty_turns_the_guard_off() -> None:
    guarded = _security("127.0.0.1:*, wisp.example:3002")
    assert guarded.enable_dns_rebinding_protection
    assert guarded.allowed_hosts == ["127.0.0.1:*", "wisp.example:3002"]
    assert "https://wisp.example:3002" in guarded.allowed_origins and "http://127.0.0.1:*" in guarded.allowed_origins
    assert not _security("").enable_dns_rebinding_protection
