"""`python -m agent.mcp`: Wisp's MCP tools over stdio, for MCP clients that launch their servers (Claude
Desktop...). The tools call the agent-svc at WISP_URL (default http://127.0.0.1:3002) over HTTP, with
WISP_API_KEY as a bearer token when set."""

from __future__ import annotations

import logging
import os

import httpx

from agent.mcp.server import build_server

DEFAULT_URL = "http://127.0.0.1:3002"
HTTP_TIMEOUT = httpx.Timeout(300.0, connect=5.0)  # rich answers take a minute on a CPU model; as Firecrawl's JS SDK


def main() -> None:
    url, key = os.environ.get("WISP_URL", DEFAULT_URL).rstrip("/"), os.environ.get("WISP_API_KEY", "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the client's log goes to stderr, a line per call

    def remote() -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=url, headers=headers, timeout=HTTP_TIMEOUT, trust_env=False)

    build_server(remote, forward_auth=False).run("stdio")


if __name__ == "__main__":
    main()
