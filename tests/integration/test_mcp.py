"""The MCP server through the SDK's own client: streamable HTTP at /mcp of a running agent-svc, and stdio
(`python -m agent.mcp` as a subprocess) against one; real searx and the offline web behind it, and for
`answer` the real LLM server of the rich-answer tests."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult
from test_rich import ABSTAINING, QUERY, TIMEOUT_MS, rich_agents  # noqa: F401 - the fixture, with its LLM server

from offline_web.stack import OfflineStack

pytestmark = pytest.mark.integration


def over_http(agent_url: str) -> str:
    return agent_url + "/mcp"


def over_stdio(agent_url: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "agent.mcp"],
                                 env={"WISP_URL": agent_url, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})


TRANSPORTS = [over_http, over_stdio]


def session(server: str | StdioServerParameters, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """One MCP session: list_tools, then each call, in order."""
    async def run() -> list[Any]:
        async with Client(server, read_timeout_seconds=240) as client:
            return [await client.list_tools(), *[await client.call_tool(name, args) for name, args in calls]]

    return asyncio.run(run())


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content)


@pytest.mark.parametrize("transport", TRANSPORTS, ids=["http", "stdio"])
def test_four_tools_a_search_and_bad_arguments(agent_url: str, transport: Any) -> None:
    listed, found, bad, refused = session(
        transport(agent_url), ("search", {"query": "sqlite wal checkpoint", "limit": 3}),
        ("search", {"query": "sqlite", "limit": 1000}),
        ("search", {"query": "sqlite", "includeDomains": ["a.org"], "excludeDomains": ["b.org"]}))
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == {"search", "scrape", "answer", "research"}
    assert tools["research"].input_schema["required"] == ["prompt"]
    assert {"query", "limit", "sources", "retrieval_mode", "scrapeOptions"} <= set(
        tools["search"].input_schema["properties"])
    assert {"url", "formats", "onlyMainContent"} <= set(tools["scrape"].input_schema["properties"])
    web = found.structured_content["web"]
    assert not found.is_error and 1 <= len(web) <= 3 and all(r["url"].startswith("http") for r in web)
    assert "sqlite" in text(found).lower()
    assert bad.is_error and "limit" in text(bad)
    # agent-svc's own 400 comes back with Firecrawl's message
    assert refused.is_error and "includeDomains and excludeDomains cannot be used together (HTTP 400)" in text(
        refused)


def test_the_mounted_endpoint_refuses_a_foreign_host(agent_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx.post(over_http(agent_url), json=body, headers={"Host": "evil.example",
                                                                    "Accept": "application/json, text/event-stream"})
    assert response.status_code == 421


def test_stdio_with_agent_svc_down_gives_tool_errors_not_a_crash() -> None:
    _, result = session(over_stdio("http://127.0.0.1:9"), ("search", {"query": "x"}))
    assert result.is_error and "agent-svc at http://127.0.0.1:9 did not answer" in text(result)


@pytest.mark.parametrize("transport", TRANSPORTS, ids=["http", "stdio"])
def test_answer_returns_cited_text(rich_agents: dict[str, str], transport: Any) -> None:  # noqa: F811
    _, result = session(transport(rich_agents["rich"]), ("answer", {"query": QUERY, "limit": 5,
                                                                    "timeout": TIMEOUT_MS}))
    assert not result.is_error, text(result)
    answer = result.structured_content
    assert answer["answer"] is not None, text(result)  # "No answer: " and why
    assert answer["abstained"] is False and answer["answer"]
    numbers = {c["number"] for c in answer["citations"]}
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])} <= numbers  # every [n] resolves
    for citation in answer["citations"]:
        assert f"[{citation['number']}] " in text(result) and f"<{citation['url']}>" in text(result)
    if not numbers:  # the 135M test model mostly writes without the sources' markers (docs/evaluation.md)
        assert "The answer cites no source; it was written from:\n- " in text(result)


def test_answer_abstains_when_nothing_is_relevant(rich_agents: dict[str, str]) -> None:  # noqa: F811
    _, result = session(over_http(rich_agents["down"]), ("answer", {"query": ABSTAINING}))
    assert not result.is_error and result.structured_content["abstained"] is True
    said = text(result)
    assert said.startswith("The sources found do not answer this question.\n\nWarning: ")
    assert "no passage reaches the relevance floor" in said  # the search itself abstained: nothing was packed


@pytest.mark.parametrize("transport", TRANSPORTS, ids=["http", "stdio"])
def test_scrape_returns_the_pages_markdown(rich_agents: dict[str, str], stack: OfflineStack,  # noqa: F811
                                           transport: Any) -> None:
    url = f"{stack.web.url}/www.sqlite.org/wal.html"
    _, page, missing = session(transport(rich_agents["rich"]),
                               ("scrape", {"url": url, "formats": ["markdown", "links"]}),
                               ("scrape", {"url": "ftp://example.org/file"}))
    assert not page.is_error, text(page)
    document = page.structured_content
    assert document["statusCode"] == 200 and "Write-Ahead Log" in document["markdown"]
    assert document["links"] and document["url"].startswith(stack.web.url)
    assert missing.is_error and "HTTP 400" in text(missing)


def test_malformed_mcp_messages_are_4xx_and_the_service_carries_on(agent_url: str) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    deep = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":' + \
        b"[" * 100_000 + b"]" * 100_000 + b"}}}"
    for body in [deep, b'{"jsonrpc":', b"[1, 2, 3]"]:
        response = httpx.post(over_http(agent_url), content=body, headers=headers, timeout=30)
        assert response.status_code == 400 and response.json()["error"]["code"] in (-32700, -32602)
    _, found = session(over_http(agent_url), ("search", {"query": "git rebase", "limit": 1}))
    assert not found.is_error
