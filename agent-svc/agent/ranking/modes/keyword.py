"""keyword: SearXNG's own ranking, translated and de-duplicated, nothing re-ordered."""

from __future__ import annotations

from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.retrieval.searxng_results import retrieve_candidates
from agent.upstream.clients import Upstreams


async def run(query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
    return (await retrieve_candidates(query, ctx, up)).limited(query.limit)
