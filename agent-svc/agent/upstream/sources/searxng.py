"""A second SearXNG (or searx) as a source: GET /search in its JSON format, read as the first one is read.
Its results carry snippets, so their pages are fetched like the first one's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx

from agent.core.hits import Hit
from agent.upstream.searxng import SEARXNG_HEADERS, parse_hit
from agent.upstream.sources.calls import SNIPPET_CHARS, TITLE_CHARS, Ask, Endpoint, get_json, hits_of, results_of


async def search(http: httpx.AsyncClient, endpoint: Endpoint, ask: Ask, timeout_s: float) -> list[Hit]:
    operators = [f"site:{d}" for d in ask.include_domains] + [f"-site:{d}" for d in ask.exclude_domains]
    params = {"q": " ".join([ask.query, *operators]), "format": "json", "categories": "general",
              "timeout_limit": f"{max(timeout_s - 0.25, 0.1):.2f}"}
    answer = await get_json(http, endpoint, "/search", params, SEARXNG_HEADERS, timeout_s)
    return hits_of(results_of(answer, answer.get("results")), ask.max_results, _hit)


def _hit(result: dict[str, Any]) -> Hit | None:
    hit = parse_hit(result)
    return hit and replace(hit, title=hit.title[:TITLE_CHARS], content=hit.content[:SNIPPET_CHARS])
