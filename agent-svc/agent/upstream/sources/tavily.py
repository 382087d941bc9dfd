"""Tavily's POST /search (Wisp serves it too): `raw_content` is the page's text when asked for; `content` is the
extract Tavily chose, a snippet."""

from __future__ import annotations

from typing import Any

import httpx

from agent.core.hits import Hit
from agent.upstream.sources.calls import (
    SNIPPET_CHARS,
    TITLE_CHARS,
    Ask,
    Endpoint,
    bearer,
    date_of,
    hits_of,
    page_text,
    post_json,
    results_of,
    text_of,
)

MAX_RESULTS = 20  # Tavily's own bound


async def search(http: httpx.AsyncClient, endpoint: Endpoint, ask: Ask, timeout_s: float) -> list[Hit]:
    body: dict[str, Any] = {"query": ask.query, "max_results": min(ask.max_results, MAX_RESULTS),
                            "search_depth": "basic", "include_raw_content": "markdown" if ask.text else False}
    if ask.include_domains:
        body["include_domains"] = list(ask.include_domains)
    if ask.exclude_domains:
        body["exclude_domains"] = list(ask.exclude_domains)
    answer = await post_json(http, endpoint, "/search", body, bearer(endpoint.key), timeout_s)
    return hits_of(results_of(answer, answer.get("results")), ask.max_results,
                   lambda r: _hit(r, endpoint.text_chars))


def _hit(result: dict[str, Any], text_chars: int) -> Hit:
    return Hit(url=result["url"], title=text_of(result.get("title"), TITLE_CHARS),
               content=text_of(result.get("content"), SNIPPET_CHARS), published=date_of(result.get("published_date")),
               text=page_text(result.get("raw_content"), text_chars))
