"""keyword: SearXNG's own ranking, translated and de-duplicated, nothing re-ordered."""

from __future__ import annotations

from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.retrieval.searxng_results import retrieve_candidates


async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    return (await retrieve_candidates(query, ctx)).limited(query.limit)
