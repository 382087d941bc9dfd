"""POST /v2/map and /v1/map on the offline web, through firecrawl-py (v2 sync and async, v1), firecrawl-js (v2
and v1) and LangChain's FireCrawlLoader: a site's links from its sitemap, its pages and SearXNG, the search
order, the limit, the deadline, the SSRF guard and bad input."""

from __future__ import annotations

import asyncio
import re
import time

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp
from firecrawl.v2.utils.error_handler import BadRequestError
from langchain_community.document_loaders import FireCrawlLoader

from offline_web.stack import OfflineStack
from tests.integration.test_sdk_js import call_js


@pytest.fixture(scope="module")
def site(stack: OfflineStack) -> str:
    return f"{stack.web.url}/www.sqlite.org/"


@pytest.fixture(scope="module")
def listed(site: str) -> list[str]:
    """The pages the site's sitemap lists, in its order."""
    return re.findall(r"<loc>([^<]+)</loc>", httpx.get(site + "sitemap.xml").text)


def test_python_sdk_maps_a_site_from_its_sitemap_pages_and_searxng(fetching_agent: str, site: str,
                                                                    listed: list[str]) -> None:
    links = Firecrawl(api_url=fetching_agent).map(site, limit=200).links
    urls = [link.url for link in links]
    assert urls[0] == site and len(set(urls)) == len(urls) and all(u.startswith(site) for u in urls)
    assert urls[1:len(listed) + 1] == listed  # the seed, then the sitemap in its order
    titled = {link.url: link.title for link in links if link.title}
    assert titled[site + "wal.html"] == "Write-Ahead Logging" and len(titled) > len(listed) / 2  # from SearXNG


def test_search_puts_the_matching_pages_first(fetching_agent: str, site: str) -> None:
    links = Firecrawl(api_url=fetching_agent).map(site, search="vacuum", limit=3).links
    assert len(links) == 3 and links[0].url == site + "lang_vacuum.html"


def test_async_client_and_sitemap_only(fetching_agent: str, site: str, listed: list[str]) -> None:
    mapped = asyncio.run(AsyncFirecrawl(api_url=fetching_agent).map(site, sitemap="only", include_subdomains=False))
    assert [link.url for link in mapped.links] == listed


def test_v1_client_gets_plain_urls(fetching_agent: str, site: str) -> None:
    response = V1FirecrawlApp(api_url=fetching_agent).map_url(site, limit=4, ignore_sitemap=True)
    assert response.success and len(response.links) == 4 and response.links[0] == site
    assert all(isinstance(link, str) and link.startswith(site) for link in response.links)


def test_js_sdk_maps_with_both_clients(fetching_agent: str, site: str) -> None:
    v2, v1 = call_js(fetching_agent, {"method": "map", "args": [site, {"search": "checkpoint", "limit": 5,
                                                                    "sitemap": "include", "timeout": 8000}]},
                     {"client": "v1", "method": "mapUrl", "args": [site, {"limit": 2}]})
    assert v2["ok"] and v2["result"]["id"] and len(v2["result"]["links"]) == 5
    assert "checkpoint" in v2["result"]["links"][0]["url"]
    assert v1["ok"] and v1["result"]["success"] and v1["result"]["links"] == [site, v1["result"]["links"][1]]


def test_langchains_firecrawl_loader_in_map_mode(fetching_agent: str, site: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "any")  # the loader insists on a key; Wisp without API_KEYS takes any
    docs = FireCrawlLoader(url=site, api_url=fetching_agent, mode="map", params={"limit": 6}).load()
    assert docs[0].page_content == site and len(docs) == 6
    assert any(doc.metadata.get("title") for doc in docs)


def test_the_timeout_returns_what_had_arrived_with_a_warning(fetching_agent: str, site: str, listed: list[str]) -> None:
    started = time.monotonic()
    body = httpx.post(fetching_agent + "/v2/map", json={"url": site + "?delay_ms=40000", "timeout": 1500},
                      timeout=60).json()
    assert time.monotonic() - started < 20  # long before the slow page answered: the deadline, not the page, ended it
    assert body["success"] and set(listed) <= {link["url"] for link in body["links"]}
    assert f"ran out before {site}?delay_ms=40000 answered" in body["warning"]


def test_the_ssrf_guard_holds_for_every_fetch(agent_url: str, site: str) -> None:
    # fetching closed to loopback, as in production: neither the seed nor the sitemap is read; SearXNG still lists
    body = httpx.post(agent_url + "/v2/map", json={"url": site}, timeout=20).json()
    assert body["success"] and f"{site} could not be read for its links: blocked" in body["warning"]
    assert body["links"] and all(link["url"].startswith(site) and link.get("title") for link in body["links"])


@pytest.mark.parametrize(("path", "body"), [
    ("/v2/map", b'{"url": '), ("/v2/map", b'{"url": "ftp://a.test/"}'), ("/v2/map", b'{"url": "a.test", "limit": 0}'),
    ("/v2/map", b'{"url": "a.test", "sitemap": "all"}'), ("/v1/map", b'{"url": "a.test", "limit": 30001}'),
    ("/v2/map", b'{"search": "x"}'),
], ids=["bad-json", "ftp", "limit-0", "sitemap", "v1-limit", "no-url"])
def test_bad_bodies_get_firecrawls_400_envelope(fetching_agent: str, path: str, body: bytes) -> None:
    response = httpx.post(fetching_agent + path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["success"] is False and response.json()["error"]


def test_the_python_sdk_raises_its_bad_request_error(fetching_agent: str) -> None:
    with pytest.raises(BadRequestError):
        Firecrawl(api_url=fetching_agent).map("http://a.test/", limit=100_001)
