"""The ranking stage as the search stage sees it: made once at start-up from the ranked modes' settings, so that
no stage above reads them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial

from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.ranking.modes import bound_modes
from agent.ranking.runner import Run
from agent.ranking.settings import ModeSettings, RankingSettings
from agent.ranking.similar import run_similar
from agent.upstream.clients import Upstreams

# /v2/similar: (seed URL, limit, timeout in ms, context, upstreams) → the outcome and the query it ran with
Similar = Callable[[str, int, int, SearchContext, Upstreams], Awaitable[tuple[SearchOutcome, SearchQuery]]]


@dataclass(frozen=True)
class Ranking:
    modes: Mapping[str, Run]  # every registered mode, bound to its settings
    similar: Similar

    @classmethod
    def of(cls, modes: ModeSettings, settings: RankingSettings) -> Ranking:
        return cls(bound_modes(modes, settings), partial(run_similar, settings=settings))
