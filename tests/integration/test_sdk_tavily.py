"""The real tavily-python (0.8.5) and langchain-tavily (0.2.18) against agent-svc on the offline web: Wisp's
results and pages, in the shapes the clients parse."""

from __future__ import annotations

import asyncio

import pytest
from langchain_tavily import TavilyExtract, TavilySearch
from tavily import AsyncTavilyClient, TavilyClient
from tavily.errors import BadRequestError

from offline_web.stack import OfflineStack


@pytest.fixture(scope="module")
def wal(stack: OfflineStack) -> str:
    return f"{stack.web.url}/www.sqlite.org/wal.html"


def test_sync_client_gets_searxs_results(agent_url: str) -> None:
    found = TavilyClient("any", api_base_url=agent_url).search("sqlite wal checkpoint", search_depth="fast")
    assert found["results"][0]["title"] == "Write-Ahead Logging" and len(found["results"]) == 5
    assert all(r["url"].startswith("http") and r["content"] and r["raw_content"] is None for r in found["results"])
    assert found["answer"] is None and found["images"] == []


def test_async_client_and_langchain_search(agent_url: str) -> None:
    async def search() -> dict:
        return await AsyncTavilyClient("any", api_base_url=agent_url).search("sqlite wal checkpoint", max_results=2,
                                                                               include_images=True)
    found = asyncio.run(search())
    assert len(found["results"]) == 2 and found["images"]
    tool = TavilySearch(max_results=3, api_base_url=agent_url, tavily_api_key="any")
    assert len(tool.invoke({"query": "sqlite wal checkpoint"})["results"]) == 3


def test_extract_goes_through_the_page_stage(fetching_agent: str, wal: str, stack: OfflineStack) -> None:
    missing = f"{stack.web.url}/www.sqlite.org/no-such-page.html"
    extracted = TavilyClient("any", api_base_url=fetching_agent).extract([wal, missing])
    assert [r["url"] for r in extracted["results"]] == [wal] and "checkpoint" in extracted["results"][0]["raw_content"]
    assert [f["url"] for f in extracted["failed_results"]] == [missing]
    tool = TavilyExtract(api_base_url=fetching_agent, tavily_api_key="any", format="text")
    assert "checkpoint" in tool.invoke({"urls": [wal]})["results"][0]["raw_content"]


def test_a_refusal_is_the_clients_error(agent_url: str) -> None:
    with pytest.raises(BadRequestError, match="max_results"):
        TavilyClient("any", api_base_url=agent_url).search("sqlite", max_results=21)
