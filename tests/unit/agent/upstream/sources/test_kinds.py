"""Each kind of source asked as its API is asked (path, body, key header) and read as it answers: Tavily's
`raw_content`, Exa's `text`, Firecrawl's `markdown` become the page's text; a second SearXNG gives snippets."""

import asyncio
import json
from typing import Any

import httpx

from agent.upstream.sources import exa, firecrawl, searxng, tavily
from agent.upstream.sources.calls import Ask, Endpoint

ENDPOINT = Endpoint("https://api.test/base", "k-1", 1_000_000, 5_000)
ASK = Ask("sqlite locking", 3, True, ("sqlite.org",), ("spam.test",))


def asked(kind: Any, answer: dict, endpoint: Endpoint = ENDPOINT, ask: Ask = ASK) -> tuple[httpx.Request, list]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answer)

    async def main() -> list:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            return await kind(http, endpoint, ask, 2.0)

    hits = asyncio.run(main())
    return seen[0], hits


def test_tavily() -> None:
    request, hits = asked(tavily.search, {"query": "q", "results": [
        {"url": "https://sqlite.org/a", "title": "A", "content": "an extract", "raw_content": "# A\n\nthe page",
         "published_date": "2026-11-30T10:00:00Z", "score": 0.9},
        {"url": "https://sqlite.org/b", "title": "B", "content": "b", "raw_content": None}]})
    body = json.loads(request.content)
    assert (request.method, request.url.path, request.headers["authorization"]) == ("POST", "/base/search",
                                                                                      "Bearer k-1")
    assert body == {"query": "sqlite locking", "max_results": 3, "search_depth": "basic",
                    "include_raw_content": "markdown", "include_domains": ["sqlite.org"],
                    "exclude_domains": ["spam.test"]}
    assert [(h.url, h.content, h.text) for h in hits] == [("https://sqlite.org/a", "an extract", "# A\n\nthe page"),
                                                          ("https://sqlite.org/b", "b", None)]
    assert hits[0].published is not None


def test_exa() -> None:
    request, hits = asked(exa.search, {"requestId": "r", "results": [
        {"id": "1", "url": "https://sqlite.org/a", "title": "A", "text": "t" * 9000, "highlights": ["one", "two"],
         "publishedDate": "2026-11-30T00:00:00.000Z"}]})
    body = json.loads(request.content)
    assert request.headers["x-api-key"] == "k-1" and "authorization" not in request.headers
    assert body == {"query": "sqlite locking", "numResults": 3, "type": "auto",
                    "contents": {"text": {"maxCharacters": 5000}}, "includeDomains": ["sqlite.org"],
                    "excludeDomains": ["spam.test"]}
    assert hits[0].content == "one … two" and hits[0].text == "t" * 5000


def test_firecrawl_v2_and_v1_answers() -> None:
    request, hits = asked(firecrawl.search, {"success": True, "data": {"web": [
        {"url": "https://sqlite.org/a", "title": "A", "description": "d", "markdown": "# A", "position": 1}]}})
    body = json.loads(request.content)
    assert request.url.path == "/base/v2/search" and request.headers["authorization"] == "Bearer k-1"
    assert body["query"] == "sqlite locking site:sqlite.org -site:spam.test" and body["limit"] == 3
    assert body["scrapeOptions"] == {"formats": ["markdown"], "onlyMainContent": True}
    assert [(h.url, h.content, h.text) for h in hits] == [("https://sqlite.org/a", "d", "# A")]
    _, v1 = asked(firecrawl.search, {"success": True, "data": [
        {"url": "https://sqlite.org/b", "metadata": {"title": "B", "description": "db"}}]})
    assert [(h.title, h.content, h.text) for h in v1] == [("B", "db", None)]


def test_a_second_searxng() -> None:
    keyless = Endpoint("http://searx.internal:8080", "", 1_000_000, 5_000)
    request, hits = asked(searxng.search, {"results": [
        {"url": "https://sqlite.org/a", "title": "A", "content": "snippet", "engines": ["duckduckgo"]}]}, keyless)
    assert request.method == "GET" and request.url.params["format"] == "json"
    assert request.url.params["q"] == "sqlite locking site:sqlite.org -site:spam.test"
    assert [(h.url, h.content, h.text) for h in hits] == [("https://sqlite.org/a", "snippet", None)]


def test_without_text_nothing_is_asked_for() -> None:
    plain = Ask("q", 2, False)
    request, _ = asked(exa.search, {"results": []}, ask=plain)
    assert "contents" not in json.loads(request.content)
    request, _ = asked(tavily.search, {"results": []}, ask=plain)
    assert json.loads(request.content)["include_raw_content"] is False
