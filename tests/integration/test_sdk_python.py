"""The real firecrawl-py (4.55.0) against agent-svc: v2 sync and async clients and the v1 client."""

from __future__ import annotations

import asyncio
import re

import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, FirecrawlError, ScrapeOptions, V1FirecrawlApp
from firecrawl.v2.types import SearchResultImages, SearchResultNews, SearchResultWeb
from requests.exceptions import HTTPError


def test_minimal_sync_call_parses_web_results(agent_url: str) -> None:
    results = Firecrawl(api_url=agent_url).search("sqlite wal checkpoint")
    assert results.web and all(isinstance(r, SearchResultWeb) for r in results.web)
    assert results.web[0].title == "Write-Ahead Logging" and results.web[0].position == 1
    assert len(results.web) == 10  # the server's default limit: the sync client omits it


def test_every_option_the_sdk_sends_is_accepted(agent_url: str) -> None:
    # the request shape of contract §1.4, path prefix included (the v2 SDK drops it)
    results = Firecrawl(api_url=agent_url + "/firecrawl").search(
        "sqlite release atomic commit", limit=3, sources=["web", "news", "images"],
        categories=["github", "research", "pdf"], tbs="qdr:d", location="Germany", country="de",
        ignore_invalid_urls=True, timeout=30000,
        scrape_options=ScrapeOptions(formats=["markdown", "links"], only_main_content=False), integration="myapp",
    )
    assert results.web == [] and results.news == []  # pdf-only web, and no news from the last day
    assert len(results.images) == 3  # images are not scraped


def test_news_and_images_parse_into_their_models(agent_url: str) -> None:
    results = Firecrawl(api_url=agent_url).search("sqlite release atomic commit", sources=["news", "images"], limit=3)
    assert results.web is None
    assert all(isinstance(n, SearchResultNews) and n.date and n.snippet for n in results.news)
    assert all(isinstance(i, SearchResultImages) and i.image_width and i.image_height for i in results.images)
    assert all(i.image_url.endswith(".gif") for i in results.images)


def test_async_client_gets_image_fields_too(agent_url: str) -> None:
    results = asyncio.run(AsyncFirecrawl(api_url=agent_url).search("atomic commit", sources=["images"], limit=2))
    # firecrawl-py's async client maps no camelCase keys; the snake_case twins fill them
    assert [i.position for i in results.images] == [1, 2]
    assert all(i.image_url and i.image_width for i in results.images)


def test_v1_client_gets_a_flat_list(agent_url: str) -> None:
    response = V1FirecrawlApp(api_url=agent_url).search("git rebase", limit=3)
    assert response.success and len(response.data) == 3
    assert response.data[0]["url"].endswith("/git-scm.com/docs/git-rebase.html")


@pytest.mark.parametrize("limit", [0, 101])
def test_out_of_range_limits_are_refused(agent_url: str, limit: int) -> None:
    with pytest.raises(ValueError, match=r"(?i)limit"):  # the v2 SDK refuses before sending
        Firecrawl(api_url=agent_url).search("git", limit=limit)
    with pytest.raises(HTTPError, match=r"Status code 400\. Invalid request body"):  # v1 sends; the server refuses
        V1FirecrawlApp(api_url=agent_url).search("git", limit=limit)


@pytest.mark.parametrize(
    ("which", "fragment"),
    [("down", "SearXNG is unreachable"), ("json-disabled", "the JSON format is disabled")],
)
def test_searxng_failures_reach_the_sdk_as_errors_naming_the_cause(broken_agents: dict[str, str], which: str,
                                                                   fragment: str) -> None:
    with pytest.raises(FirecrawlError, match=re.escape(fragment)) as raised:
        Firecrawl(api_url=broken_agents[which], max_retries=1).search("git")
    assert raised.value.status_code == 502
