"""Wisp's MCP server: the four tools on one MCPServer, and the client of agent-svc's HTTP API they call.

Mounted in agent-svc the client is an in-process ASGI transport to agent-svc itself, forwarding each MCP
request's Authorization header; under stdio (`python -m agent.mcp`) it is HTTP to a running agent-svc.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from agent.mcp import tools

INSTRUCTIONS = ("Wisp: web search on a self-hosted SearXNG. `search` finds pages, `scrape` reads one page, "
                "`answer` writes a cited answer from the pages it finds, `research` searches several times for what "
                "one search cannot find and writes a cited report.")
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)


class HttpWisp:
    """agent-svc's API as the tools call it: Firecrawl's error envelope becomes a tool error with its message."""

    def __init__(self, http: httpx.AsyncClient, forward_auth: bool) -> None:
        self._http = http
        self._forward_auth = forward_auth

    async def post(self, path: str, body: dict[str, Any], ctx: Context) -> dict[str, Any]:
        try:
            response = await self._http.post(path, json=body, headers=self._headers(ctx))
        except httpx.HTTPError as e:
            raise ToolError(f"agent-svc at {self._http.base_url} did not answer: {type(e).__name__}: {e}") from None
        return _payload(response)

    async def status(self, path: str, ctx: Context) -> dict[str, Any]:
        """A job's status: a job that failed is an answer (its partial result), not a tool error."""
        try:
            response = await self._http.get(path, headers=self._headers(ctx))
        except httpx.HTTPError as e:
            raise ToolError(f"agent-svc at {self._http.base_url} did not answer: {type(e).__name__}: {e}") from None
        return _payload(response, job=True)

    def _headers(self, ctx: Context) -> dict[str, str]:
        if self._forward_auth and ctx.headers and (authorization := ctx.headers.get("authorization")):
            return {"Authorization": authorization}
        return {}


def build_server(open_http: Callable[[], httpx.AsyncClient], forward_auth: bool) -> MCPServer:
    """The MCP server whose lifespan opens the HTTP client of agent-svc that `open_http` makes."""

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[HttpWisp]:
        async with open_http() as http:
            yield HttpWisp(http, forward_auth)

    server = MCPServer("wisp", instructions=INSTRUCTIONS, lifespan=lifespan)
    server.add_tool(tools.search, title="Web search", description=tools.SEARCH, annotations=READ_ONLY)
    server.add_tool(tools.scrape, title="Scrape a page", description=tools.SCRAPE, annotations=READ_ONLY)
    server.add_tool(tools.answer, title="Cited answer", description=tools.ANSWER, annotations=READ_ONLY)
    server.add_tool(tools.research, title="Research", description=tools.RESEARCH, annotations=READ_ONLY)
    return server


def mounted(app: ASGIApp, allowed_hosts: str) -> tuple[MCPServer, list[BaseRoute]]:
    """The server for agent-svc `app` and its streamable HTTP route at /mcp (stateless: any replica answers).

    The caller runs `server.session_manager.run()` inside its lifespan. `allowed_hosts` (comma-separated,
    `host:*` for any port; empty: no check) guards against DNS rebinding as the SDK does for loopback."""
    def loopback() -> httpx.AsyncClient:
        # a 500 comes back as a response, so the tool reports its envelope instead of crashing
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        return httpx.AsyncClient(transport=transport, base_url="http://agent-svc", timeout=None)

    server = build_server(loopback, forward_auth=True)
    starlette = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                           transport_security=_security(allowed_hosts))
    return server, list(starlette.routes)


def _security(allowed_hosts: str) -> TransportSecuritySettings:
    hosts = [h.strip() for h in allowed_hosts.split(",") if h.strip()]
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=bool(hosts), allowed_hosts=hosts,
                                     allowed_origins=origins)


def _payload(response: httpx.Response, job: bool = False) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        raise ToolError(f"agent-svc answered HTTP {response.status_code} without JSON: {response.text[:300]}")
    if response.status_code != 200 or (payload.get("success") is False and not job):
        raise ToolError(_error_message(response.status_code, payload))
    return payload


def _error_message(status: int, payload: dict[str, Any]) -> str:
    """Firecrawl's envelope as one line: its error, code and status, and the fields it names."""
    message = f"{payload.get('error') or 'request failed'} (HTTP {status}"
    message += f", {payload['code']})" if payload.get("code") else ")"
    issues = [f"{'.'.join(str(p) for p in d.get('path', []))}: {d.get('message')}"
              for d in payload.get("details") or [] if isinstance(d, dict)]
    return f"{message}: {'; '.join(issues)}" if issues else message
