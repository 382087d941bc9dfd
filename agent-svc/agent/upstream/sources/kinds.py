"""The kinds of source SEARCH_SOURCES may name: one line each, the module that asks and reads its API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx

from agent.core.hits import Hit
from agent.upstream.sources import exa, firecrawl, searxng, tavily
from agent.upstream.sources.calls import Ask, Endpoint

# (the shared HTTP client, the tier's endpoint, the question, seconds left) → its hits, best first; raises
# SourceFailure
Kind = Callable[[httpx.AsyncClient, Endpoint, Ask, float], Awaitable[list[Hit]]]

KINDS: dict[str, Kind] = {
    "tavily": tavily.search,
    "firecrawl": firecrawl.search,
    "exa": exa.search,
    "searxng": searxng.search,
}
