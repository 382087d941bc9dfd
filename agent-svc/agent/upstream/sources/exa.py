"""Exa's POST /search (key in `x-api-key`): with `contents.text` each result carries its page's text; its
highlights or summary, when it has them, are the snippet."""

from __future__ import annotations

from typing import Any

import httpx

from agent.core.hits import Hit
from agent.upstream.sources.calls import (
    SNIPPET_CHARS,
    TITLE_CHARS,
    Ask,
    Endpoint,
    date_of,
    hits_of,
    page_text,
    post_json,
    results_of,
    text_of,
)

MAX_RESULTS = 100  # Exa's own bound


async def search(http: httpx.AsyncClient, endpoint: Endpoint, ask: Ask, timeout_s: float) -> list[Hit]:
    body: dict[str, Any] = {"query": ask.query, "numResults": min(ask.max_results, MAX_RESULTS), "type": "auto"}
    if ask.text:
        body["contents"] = {"text": {"maxCharacters": endpoint.text_chars}}
    if ask.include_domains:
        body["includeDomains"] = list(ask.include_domains)
    if ask.exclude_domains:
        body["excludeDomains"] = list(ask.exclude_domains)
    headers = {"x-api-key": endpoint.key} if endpoint.key else {}
    answer = await post_json(http, endpoint, "/search", body, headers, timeout_s)
    return hits_of(results_of(answer, answer.get("results")), ask.max_results,
                   lambda r: _hit(r, endpoint.text_chars))


def _hit(result: dict[str, Any], text_chars: int) -> Hit:
    text = page_text(result.get("text"), text_chars)
    return Hit(url=result["url"], title=text_of(result.get("title"), TITLE_CHARS),
               content=_snippet(result) or (text or "")[:SNIPPET_CHARS // 4],
               published=date_of(result.get("publishedDate")), text=text)


def _snippet(result: dict[str, Any]) -> str:
    highlights = result.get("highlights")
    if isinstance(highlights, list):
        joined = " … ".join(h for h in highlights if isinstance(h, str))
        if joined:
            return joined[:SNIPPET_CHARS]
    return text_of(result.get("summary"), SNIPPET_CHARS)
