"""The retrieval modes of /v2/search, found through one registry: the only place their names live.

A mode takes the query and the request's context and returns the results per bucket in final order. A
ranked mode is a `RankSpec` (pool, margin, fusion, scorer) that the one runner in `agent.ranking.runner` executes,
so adding one is a module with its scorer and `spec(settings)`, and a line here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent.config import Settings
from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.ranking.modes import hybrid, hybrid_vector, keyword, semantic, vector
from agent.ranking.runner import RankSpec, run_ranked

Mode = Callable[[SearchQuery, SearchContext], Awaitable[SearchOutcome]]


def ranked(spec: Callable[[Settings], RankSpec]) -> Mode:
    """The mode that runs the ranked pipeline with the spec the settings give."""
    async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
        return await run_ranked(query, ctx, spec(ctx.services.settings))

    return run


MODES: dict[str, Mode] = {
    "keyword": keyword.run,
    "semantic": ranked(semantic.spec),
    "hybrid": ranked(hybrid.spec),
    "vector": vector.run,
    "hybrid_vector": hybrid_vector.run,
}
