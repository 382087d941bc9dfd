"""What a search produces: results per source bucket in final order, what degraded, and what ranking added."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agent.core.hits import Hit
from agent.core.pages import Page
from agent.core.passage import Passage


@dataclass(frozen=True)
class ResultDetail:
    """What a ranked mode knows about one result beyond SearXNG's hit."""

    score: float  # the model's relevance of its best passage (the index's cosine, the reranker's score)
    evidence: str  # "page" when its fetched content was scored, "snippet" otherwise
    passages: tuple[dict[str, Any], ...] = ()
    rank_score: float | None = None  # what the final order sorts by (the mode's fusion), when it is not `score`


@dataclass(frozen=True)
class SearchOutcome:
    buckets: dict[str, list[Hit]]
    warnings: tuple[str, ...] = ()
    details: dict[str, ResultDetail] = field(default_factory=dict)  # by URL
    context: str | None = None  # the packed passages, for modes that return them
    explain: tuple[dict[str, Any], ...] | None = None
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # scrapeOptions.formats, by URL
    packed: tuple[Passage, ...] = ()  # the passages of `context`, for a rich answer
    answer: dict[str, Any] | None = None  # search_type "rich"
    pages: Mapping[str, Page] = field(default_factory=dict)  # the pages fetched for the results, by URL
    timings: Mapping[str, float] = field(default_factory=dict)  # per stage, in ms, once the search is done

    def warned(self, *warnings: str | None) -> SearchOutcome:
        """The same outcome with these warnings added (None ones skipped)."""
        added = tuple(w for w in warnings if w)
        return replace(self, warnings=self.warnings + added) if added else self

    def limited(self, limit: int) -> SearchOutcome:
        """The same outcome with every bucket cut to `limit` results."""
        return replace(self, buckets={name: hits[:limit] for name, hits in self.buckets.items()})
