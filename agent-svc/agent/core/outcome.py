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
class Citation:
    number: int  # the [n] the answer's text uses
    url: str
    title: str


@dataclass(frozen=True)
class CheckedClaim:
    """One sentence of an answer, and whether the passages it cites support it."""

    text: str
    citations: tuple[int, ...]
    supported: bool
    score: float | None  # the best cosine between the sentence and what it cites; None: it cites nothing


@dataclass(frozen=True)
class Answer:
    """search_type "rich": the cited answer, its checked claims and the JSON its output_schema asked for."""

    text: str
    citations: tuple[Citation, ...]  # the sources its claims cite
    claims: tuple[CheckedClaim, ...]
    abstained: bool
    json: Any
    model: str
    timings_ms: Mapping[str, float]


@dataclass(frozen=True)
class ExplainRow:
    """`explain`: what the runner decided about one candidate, and why."""

    url: str
    title: str
    searxng_rank: int
    fetch: str | None  # "ok", the page's error, or None when it was not fetched
    content_chars: int
    pass1_score: float | None
    score: float | None
    rank_score: float | None
    decision: str  # "kept" or "pruned"
    reason: str
    features: Mapping[str, float]


@dataclass(frozen=True)
class SearchOutcome:
    buckets: dict[str, list[Hit]]
    warnings: tuple[str, ...] = ()
    details: dict[str, ResultDetail] = field(default_factory=dict)  # by URL
    context: str | None = None  # the packed passages, for modes that return them
    explain: tuple[ExplainRow, ...] | None = None
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # scrapeOptions.formats, by URL
    packed: tuple[Passage, ...] = ()  # the passages of `context`, for a rich answer
    answer: Answer | None = None  # search_type "rich"
    pages: Mapping[str, Page] = field(default_factory=dict)  # the pages fetched for the results, by URL
    timings: Mapping[str, float] = field(default_factory=dict)  # per stage, in ms, once the search is done

    def warned(self, *warnings: str | None) -> SearchOutcome:
        """The same outcome with these warnings added (None ones skipped)."""
        added = tuple(w for w in warnings if w)
        return replace(self, warnings=self.warnings + added) if added else self

    def limited(self, limit: int) -> SearchOutcome:
        """The same outcome with every bucket cut to `limit` results."""
        return replace(self, buckets={name: hits[:limit] for name, hits in self.buckets.items()})
