"""The retrieval modes of /v2/search, found through one registry: the only place their names live.

A mode takes the query, the request's context and the upstream clients, and returns the results per bucket in
final order. A ranked mode is a `RankSpec` (where its candidates come from, how they are scored, pool, margin,
fusion) that the one runner in `ranking.runner` executes, so adding one is a module with its scorer, its `spec`
and, when it has tunables of its own, its settings (a `Section`: read from the environment with every other
setting), and a line here. A mode's properties (what it costs) live in its entry, so that no other module
names a mode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.core.section import Section
from agent.ranking.modes import hybrid, hybrid_vector, keyword, semantic, vector
from agent.ranking.runner import RankSpec, Run, run_ranked
from agent.ranking.settings import ModeSettings, RankingSettings
from agent.upstream.clients import Upstreams

Spec = Callable[[ModeSettings, Upstreams, SearchQuery], RankSpec]


@dataclass(frozen=True)
class Mode:
    bind: Callable[[ModeSettings, RankingSettings], Run]  # the mode's run, given the settings it reads
    settings: type[Section] | None = None  # its own tunables, if any
    costly: bool = True  # fetches pages or asks a model: counts against RANKED_CONCURRENCY_PER_KEY


def ranked(spec: Spec, settings: type[Section] | None = None, fallback: Callable[[Run], Run] | None = None
           ) -> Mode:
    """The mode that runs the one runner with the spec its settings, upstreams and query give (`fallback`: what
    to do when its candidates cannot be gathered at all)."""
    def bind(modes: ModeSettings, ranking: RankingSettings) -> Run:
        async def run(query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
            return await run_ranked(query, ctx, up, spec(modes, up, query), ranking)

        return fallback(run) if fallback else run

    return Mode(bind, settings)


def unranked(run: Run) -> Mode:
    """A mode that ranks nothing and reads no setting."""
    return Mode(lambda modes, ranking: run, costly=False)


MODES: dict[str, Mode] = {
    "keyword": unranked(keyword.run),
    "semantic": ranked(semantic.spec, semantic.SemanticModeSettings),
    "hybrid": ranked(hybrid.spec, hybrid.HybridSettings),
    "vector": ranked(vector.spec, fallback=vector.keyword_when_unavailable),
    "hybrid_vector": ranked(hybrid_vector.spec, hybrid_vector.HybridVectorSettings),
}


def bound_modes(modes: ModeSettings, ranking: RankingSettings) -> dict[str, Run]:
    """Each mode's run with its settings, made once at start-up."""
    return {name: mode.bind(modes, ranking) for name, mode in MODES.items()}
