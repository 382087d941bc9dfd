"""Wisp's MCP server (tools search, scrape and answer): streamable HTTP at /mcp on agent-svc, and stdio with
`python -m agent.mcp` against a running agent-svc."""
