"""Wisp's MCP server (tools search, scrape, answer and research): streamable HTTP at /mcp on agent-svc, and stdio with
`python -m agent.mcp` against a running agent-svc."""
