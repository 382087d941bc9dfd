"""What every search stage shares: the process's services, the request's deadline and timings."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agent.config import Settings
from agent.searxng_client import Hit, SearxngClient
from agent.timings import StageTimings


@dataclass
class Services:
    """One per process, made at start-up: settings and the clients of the upstreams."""

    settings: Settings
    searxng: SearxngClient


@dataclass
class SearchContext:
    services: Services
    deadline: float  # time.monotonic() by which the request's own `timeout` runs out
    timings: StageTimings = field(default_factory=StageTimings)

    def remaining_s(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)


@dataclass
class SearchOutcome:
    """What a retrieval mode returns: results per source bucket, in final order, and what degraded."""

    buckets: dict[str, list[Hit]]
    warnings: list[str] = field(default_factory=list)
