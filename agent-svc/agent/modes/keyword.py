"""keyword: SearXNG's own ranking, translated and de-duplicated, nothing re-ordered."""

from __future__ import annotations

from agent.context import SearchContext, SearchOutcome
from agent.query import SearchQuery
from agent.retrieve import retrieve_candidates


async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    candidates = await retrieve_candidates(query, ctx)
    candidates.buckets = {source: hits[: query.limit] for source, hits in candidates.buckets.items()}
    return candidates
