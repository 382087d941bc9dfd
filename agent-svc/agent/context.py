"""What every search stage shares: the process's services, the request's deadlines, timings and pages."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.config import Settings
from agent.extract import Extracted
from agent.fetch import Fetched, Fetcher
from agent.searxng_client import Hit, SearxngClient
from agent.semantic_client import SemanticClient
from agent.timings import StageTimings

if TYPE_CHECKING:
    from agent.pages import WorkerPool


@dataclass
class Services:
    """One per process, made at start-up: settings and the clients of the upstreams."""

    settings: Settings
    searxng: SearxngClient
    semantic: SemanticClient
    fetcher: Fetcher
    cpu_pool: WorkerPool  # page extraction, off the event loop and out of its GIL


@dataclass
class Page:
    """A result's page as this request fetched it: extracted text, or why there is none."""

    fetched: Fetched
    extracted: Extracted | None = None
    error: str | None = None
    mode: tuple[bool, bool] | None = None  # (main content only, document formats) it was extracted with

    def extracted_as(self, main_only: bool, document: bool) -> bool:
        """Whether this extraction serves: fetch errors need none, and document formats serve ranking too."""
        if self.mode is None:
            return False
        return not self.fetched.ok or (self.mode[0] == main_only and (self.mode[1] or not document))

@dataclass
class SearchContext:
    services: Services
    deadline: float  # time.monotonic() by which the request's own `timeout` runs out
    timings: StageTimings = field(default_factory=StageTimings)
    started: float = field(default_factory=time.monotonic)
    pages: dict[str, Page] = field(default_factory=dict)  # by URL, so no page is fetched twice

    def remaining_s(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    def pipeline_deadline(self) -> float:
        """The earlier of the request's timeout and the pipeline's own deadline (seed 001: 8 s)."""
        return min(self.deadline, self.started + self.services.settings.pipeline_deadline_s)

    def pipeline_remaining_s(self) -> float:
        return max(self.pipeline_deadline() - time.monotonic(), 0.0)

    def fetch_deadline(self) -> float:
        """When fetching must stop, leaving the ranking reserve (seed 001: 1.5 s) before the deadline."""
        return self.pipeline_deadline() - self.services.settings.rank_reserve_s


@dataclass
class ResultDetail:
    """What a ranked mode knows about one result beyond SearXNG's hit."""

    score: float | None = None
    evidence: str | None = None  # "page" when its fetched content was scored, "snippet" otherwise
    passages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SearchOutcome:
    """What a retrieval mode returns: results per source bucket, in final order, and what degraded."""

    buckets: dict[str, list[Hit]]
    warnings: list[str] = field(default_factory=list)
    details: dict[str, ResultDetail] = field(default_factory=dict)  # by URL
    context: str | None = None  # the packed passages, for modes that return them
    explain: list[dict[str, Any]] | None = None
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # scrapeOptions.formats, by URL
