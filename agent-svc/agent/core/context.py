"""One request's running state: its deadlines, its stage timings, and the pages it has fetched so far."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.core.pages import Page
from agent.core.timings import StageTimings
from agent.services import Services

# a stage bounded by the request's own timeout stops this early, so the search answers (degraded) instead of
# the timeout's 408 taking its work
RESPONSE_RESERVE_S = 0.25
FINISH_RESERVE_S = 0.15  # after scoring: fusing, packing and answering take a few milliseconds; the rest is slack
VERIFY_RESERVE_S = 1.5  # kept from the LLM for a rich answer's claim check (0.5–1.2 s measured)


@dataclass
class SearchContext:
    services: Services
    deadline: float  # time.monotonic() by which the request's own `timeout` runs out
    timings: StageTimings = field(default_factory=StageTimings)
    started: float = field(default_factory=time.monotonic)
    on_text: Callable[[str], None] | None = None  # `stream`: gets the answer's text as the model writes it
    pages: dict[str, Page] = field(default_factory=dict)  # by URL, so no page is fetched twice

    def remaining_s(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def pipeline_deadline(self) -> float:
        """The earlier of the request's timeout and the pipeline's own deadline (seed 001: 8 s)."""
        return min(self.deadline, self.started + self.services.settings.pipeline_deadline_s)

    def pipeline_remaining_s(self) -> float:
        return max(self.pipeline_deadline() - time.monotonic(), 0.0)

    def scoring_deadline(self) -> float:
        """When a ranked mode's scoring must stop, so that the search still answers by its deadline."""
        return self.pipeline_deadline() - FINISH_RESERVE_S

    def rich_remaining_s(self) -> float:
        """Time left for a rich answer's LLM and claim check: the request's timeout, at most RICH_DEADLINE_S
        from the start (a CPU model reads a long context slowly; the ranking deadline would cut every answer)."""
        until = min(self.deadline - RESPONSE_RESERVE_S, self.started + self.services.settings.rich_deadline_s)
        return max(until - time.monotonic(), 0.0)

    def llm_remaining_s(self) -> float:
        """Time left for one LLM call: the rich answer's, less what the claim check needs after it."""
        return self.rich_remaining_s() - VERIFY_RESERVE_S

    def fetch_deadline(self) -> float:
        """When fetching must stop, leaving the ranking reserve (seed 001: 1.5 s) before the deadline."""
        return self.pipeline_deadline() - self.services.settings.rank_reserve_s
