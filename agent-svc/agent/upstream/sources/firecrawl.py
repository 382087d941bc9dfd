"""Firecrawl's POST /v2/search (Wisp serves it too): with `scrapeOptions` asking for markdown each result carries
its page (a credit per page on Firecrawl's cloud; `"text": false` in the source's entry saves them)."""

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
    hits_of,
    page_text,
    post_json,
    results_of,
    text_of,
)

MAX_RESULTS = 100  # Firecrawl's own bound


async def search(http: httpx.AsyncClient, endpoint: Endpoint, ask: Ask, timeout_s: float) -> list[Hit]:
    body: dict[str, Any] = {"query": _with_sites(ask), "limit": min(ask.max_results, MAX_RESULTS),
                            "sources": ["web"], "timeout": int(timeout_s * 1000)}
    if ask.text:
        body["scrapeOptions"] = {"formats": ["markdown"], "onlyMainContent": True}
    answer = await post_json(http, endpoint, "/v2/search", body, bearer(endpoint.key), timeout_s)
    data = answer.get("data")
    listed = data.get("web") if isinstance(data, dict) else data  # v2's buckets; v1 answered a list
    if answer.get("success") is False and not isinstance(listed, list):
        listed = None
    return hits_of(results_of(answer, listed), ask.max_results, lambda r: _hit(r, endpoint.text_chars))


def _with_sites(ask: Ask) -> str:
    """Firecrawl's search takes domains as operators in the query."""
    operators = [f"site:{d}" for d in ask.include_domains] + [f"-site:{d}" for d in ask.exclude_domains]
    return " ".join([ask.query, *operators])


def _hit(result: dict[str, Any], text_chars: int) -> Hit:
    metadata = result.get("metadata") if isinstance(result.get("metadata"), dict) else {}
    return Hit(url=result["url"], title=text_of(result.get("title") or metadata.get("title"), TITLE_CHARS),
               content=text_of(result.get("description") or metadata.get("description"), SNIPPET_CHARS),
               text=page_text(result.get("markdown"), text_chars))
