"""The retrieval modes of /v2/search, found through one registry: the only place their names live.

A mode takes the query, the request's context and the upstream clients, and returns the results per bucket in
final order. A ranked mode is a `RankSpec` (where its candidates come from, how they are scored, pool, margin,
fusion) that the one runner in `ranking.runner` executes, so adding one is a module with its scorer and its
`spec`, and a line here. A mode's properties (what it costs) live in its entry, so that no other module
names a mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.ranking.modes import hybrid, hybrid_vector, keyword, semantic, vector
from agent.ranking.runner import RankSpec, Run, run_ranked
from agent.upstream.clients import Upstreams

Spec = Callable[[Upstreams, SearchQuery], RankSpec]


@dataclass(frozen=True)
class Mode:
    run: Run
    costly: bool = True  # fetches pages or asks a model: counts against RANKED_CONCURRENCY_PER_KEY


def ranked(spec: Spec, fallback: Callable[[Run], Run] | None = None) -> Mode:
    """The mode that runs the one runner with the spec its upstreams and query give (`fallback`: what to do
    when its candidates cannot be gathered at all)."""
    async def run(query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
        return await run_ranked(query, ctx, up, spec(up, query))

    return Mode(fallback(run) if fallback else run)


MODES: dict[str, Mode] = {
    "keyword": Mode(keyword.run, costly=False),
    "semantic": ranked(semantic.spec),
    "hybrid": ranked(hybrid.spec),
    "vector": ranked(vector.spec, vector.keyword_when_unavailable),
    "hybrid_vector": ranked(hybrid_vector.spec),
}
