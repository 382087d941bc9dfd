"""keyword: SearXNG's own ranking, translated and de-duplicated, nothing re-ordered; the extra sources' results
(SEARCH_SOURCES) taken in turn with SearXNG's."""

from __future__ import annotations

from agent.core.context import RESPONSE_RESERVE_S, SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.retrieval.searxng_results import retrieve_candidates
from agent.retrieval.sourced import with_sources
from agent.upstream.clients import Upstreams


async def run(query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
    outcome = await with_sources(retrieve_candidates(query, ctx, up), query, ctx, up,
                                 lambda: ctx.remaining_s() - RESPONSE_RESERVE_S)
    return outcome.limited(query.limit)
