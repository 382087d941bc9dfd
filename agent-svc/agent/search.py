"""One search from the internal query to the results per bucket: pick the mode, bound it by the deadline."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from agent.context import SearchContext, SearchOutcome, Services
from agent.documents import attach_documents
from agent.errors import NotImplementedYet, SearchTimeout
from agent.modes import get_mode
from agent.query import SearchQuery

SEARCH_TYPES = {"fast"}


async def run_search(query: SearchQuery, services: Services) -> tuple[SearchOutcome, SearchContext]:
    """Run the query's retrieval mode within its `timeout`; return the outcome and the context with timings."""
    if not query.retrieval_mode:
        query = replace(query, retrieval_mode=services.settings.default_retrieval_mode)
    mode = get_mode(query.retrieval_mode)
    if query.search_type not in SEARCH_TYPES:
        raise NotImplementedYet(f"search_type {query.search_type!r} is not implemented yet; available: fast")
    ctx = SearchContext(services, deadline=time.monotonic() + query.timeout_ms / 1000)
    try:
        async with asyncio.timeout(query.timeout_ms / 1000):
            outcome = await mode(query, ctx)
            await attach_documents(outcome, query, ctx)
    except TimeoutError:
        message = f"the search did not finish within the request's timeout of {query.timeout_ms} ms"
        raise SearchTimeout(message) from None
    return outcome, ctx
