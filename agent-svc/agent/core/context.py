"""One request's frozen budget and what it records: when each stage must stop, the stage timings, the pages it
loads (through one small interface, so that no page is fetched twice), and where a streamed answer goes.

Nothing here is a back channel: stages return what they produce; the context only bounds and records them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.core.pages import Extraction, Page
from agent.core.timings import StageTimings

# a stage bounded by the request's own timeout stops this early, so the search answers (degraded) instead of
# the timeout's 408 taking its work
RESPONSE_RESERVE_S = 0.25
FINISH_RESERVE_S = 0.15  # after scoring: fusing, packing and answering take a few milliseconds; the rest is slack


class PageLoader(Protocol):
    """The pages of one request: each fetched once, extracted as the caller asks."""

    async def load(self, urls: Sequence[str], how: Extraction, deadline: float, timings: StageTimings
                   ) -> dict[str, Page]:
        ...


class CpuPool(Protocol):
    """Runs a function out of the event loop; cancelling the call stops the work (pages.workers.WorkerPool)."""

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        ...


@dataclass(frozen=True)
class Spans:
    """What every request's budget is made of, fixed at start-up from the ranking's and the rich answer's
    settings."""

    pipeline_s: float = 8.0  # PIPELINE_DEADLINE_S
    rank_reserve_s: float = 1.5  # RANK_RESERVE_S
    rich_s: float = 60.0  # RICH_DEADLINE_S
    verify_reserve_s: float = 1.5  # VERIFY_RESERVE_S


@dataclass(frozen=True)
class Budget:
    """A request's deadlines, fixed when it starts (time.monotonic() values and the service's spans)."""

    deadline: float  # by which the request's own `timeout` runs out
    started: float
    pipeline_s: float  # PIPELINE_DEADLINE_S
    rank_reserve_s: float  # RANK_RESERVE_S
    rich_s: float  # RICH_DEADLINE_S
    verify_reserve_s: float  # VERIFY_RESERVE_S

    @classmethod
    def of(cls, spans: Spans, timeout_s: float) -> Budget:
        now = time.monotonic()
        return cls(now + timeout_s, now, spans.pipeline_s, spans.rank_reserve_s, spans.rich_s, spans.verify_reserve_s)


@dataclass(frozen=True)
class SearchContext:
    budget: Budget
    pages: PageLoader
    schemas: CpuPool  # applies callers' JSON Schemas to what the LLM wrote (answers/schemas.py)
    timings: StageTimings = field(default_factory=StageTimings)
    on_text: Callable[[str], None] | None = None  # `stream`: gets the answer's text as the model writes it

    @property
    def deadline(self) -> float:
        return self.budget.deadline

    def remaining_s(self) -> float:
        return max(self.budget.deadline - time.monotonic(), 0.0)

    def pipeline_deadline(self) -> float:
        """The earlier of the request's timeout and the pipeline's own deadline (8 s by default)."""
        return min(self.budget.deadline, self.budget.started + self.budget.pipeline_s)

    def pipeline_remaining_s(self) -> float:
        return max(self.pipeline_deadline() - time.monotonic(), 0.0)

    def scoring_deadline(self) -> float:
        """When a ranked mode's scoring must stop, so that the search still answers by its deadline."""
        return self.pipeline_deadline() - FINISH_RESERVE_S

    def rich_remaining_s(self) -> float:
        """Time left for a rich answer's LLM and claim check: the request's timeout, at most RICH_DEADLINE_S
        from the start (a CPU model reads a long context slowly; the ranking deadline would cut every answer)."""
        until = min(self.budget.deadline - RESPONSE_RESERVE_S, self.budget.started + self.budget.rich_s)
        return max(until - time.monotonic(), 0.0)

    def llm_remaining_s(self) -> float:
        """Time left for one LLM call: the rich answer's, less what the claim check needs after it."""
        return self.rich_remaining_s() - self.budget.verify_reserve_s

    def fetch_deadline(self) -> float:
        """When fetching must stop, leaving the ranking reserve (1.5 s by default) before the deadline."""
        return self.pipeline_deadline() - self.budget.rank_reserve_s

    async def load_pages(self, urls: Sequence[str], how: Extraction, deadline: float | None = None
                         ) -> dict[str, Page]:
        """The pages of `urls` extracted as `how` says, loading until `deadline` (by default the fetch
        deadline); a page this request loaded already is not fetched again."""
        return await self.pages.load(urls, how, self.fetch_deadline() if deadline is None else deadline,
                                     self.timings)
