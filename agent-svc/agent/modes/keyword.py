"""keyword: SearXNG's own ranking, translated and de-duplicated, nothing re-ordered."""

from __future__ import annotations

from agent.outcome import SearchOutcome
from agent.query import SearchQuery
from agent.retrieve import retrieve_candidates
from agent.search_context import SearchContext


async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    return (await retrieve_candidates(query, ctx)).limited(query.limit)
