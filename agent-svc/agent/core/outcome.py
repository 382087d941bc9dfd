"""What a search produces: results per source bucket in final order, what degraded, and what ranking added."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agent.core.hits import Hit
from agent.core.pages import Page
from agent.core.passage import Passage

# why a stage fell back: each counted (wisp_agent_degradations_total) and told in the response's warning
Cause = Literal[
    "searxng_order",  # nothing could be scored and no page was fetched: SearXNG's order
    "first_pass",  # the model could not score in time: ranked by BM25 and page features over the fetched pages
    "snippet_scores",  # page content could not be scored: ranked by pass 1's snippet scores (semantic mode)
    "snippets",  # pages that failed to load or extract: their SearXNG snippets stood in
    "partial_scores",  # the deadline came before every text was scored: ranked with those that were
    "abstained",  # no passage reached RELEVANCE_FLOOR: no result presented
    "uncalibrated",  # semantic-svc's model has no relevance calibration: nothing pruned, no abstaining
    "keyword_form",  # the keyword form of a question failed: searched as written
    "source_failed",  # one source's SearXNG request failed: its bucket is empty
    "searxng_page",  # a later SearXNG page failed: fewer results
    "engines_unresponsive",  # SearXNG engines did not answer: results may be incomplete
    "engine_catalog",  # SearXNG's engine list unreadable: engines and categories not checked
    "index_unavailable",  # the vector index could not answer: SearXNG's results alone
    "searxng_unavailable",  # SearXNG failed: the vector index's or the extra sources' results alone
    "extra_source",  # an extra source (SEARCH_SOURCES) gave nothing: its tiers held, failing or out of time
    "llm_unavailable",  # rich: the LLM failed; sources without an answer
    "llm_echo",  # rich: the LLM wrote back its prompt
    "llm_citations",  # rich: the LLM cited only sources that do not exist
    "llm_unsupported",  # rich: no claim of the LLM's answer supported; the sources' own sentences answer
    "claims_unchecked",  # rich: claims not checked, none marked supported
    "output_schema",  # rich: no JSON that validates
    "page_formats",  # summary, question or json formats of pages that failed
    "no_content",  # scrapeOptions: pages that failed to load or extract; their Documents carry metadata.error
]


@dataclass(frozen=True)
class Degradation:
    """A stage fell back instead of failing: why (counted by cause) and what the response's warning says."""

    cause: Cause
    warning: str


@dataclass(frozen=True)
class ResultDetail:
    """What a ranked mode knows about one result beyond SearXNG's hit."""

    score: float  # the model's relevance of its best passage (the index's cosine, the reranker's score)
    evidence: str  # "page" (its fetched content was scored), "index" (the index's chunk) or "snippet"
    passages: tuple[dict[str, Any], ...] = ()
    rank_score: float | None = None  # what the final order sorts by (the mode's fusion), when it is not `score`
    probability: float | None = None  # of relevance, its most relevant passage's (semantic-svc's calibration)


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
    reason: str | None = None  # why it is not supported (low similarity, terms not found); None when it is


@dataclass(frozen=True)
class LLMDraft:
    """The LLM's own answer where the sources' sentences replaced it: its reply as written, its claims checked."""

    text: str
    claims: tuple[CheckedClaim, ...]


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
    extractive: bool = False  # the text is the sources' own sentences, not the LLM's (RICH_EXTRACTIVE_FALLBACK)
    llm_draft: LLMDraft | None = None  # what the LLM wrote when the answer is extractive, with `explain`


@dataclass(frozen=True)
class ExplainRow:
    """`explain`: what the runner decided about one candidate, and why."""

    url: str
    title: str
    searxng_rank: int  # its place in the pool (SearXNG's, the extra sources' in turn, or the fusion with the index)
    fetch: str | None  # "ok", "supplied" (its source gave the text), the page's error, or None when not fetched
    content_chars: int
    pass1_score: float | None
    score: float | None
    rank_score: float | None
    decision: str  # "kept" or "pruned"
    reason: str
    features: Mapping[str, float]
    probability: float | None = None  # of relevance: its most relevant passage's
    found_by: tuple[str, ...] = ()  # the sources that returned it: searxng, index, a SEARCH_SOURCES name


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
    degradations: tuple[Cause, ...] = ()  # counted once, when the request ends
    abstained: bool = False  # a ranked mode found nothing relevant enough to present (RELEVANCE_FLOOR)

    def warned(self, *notes: str | Degradation | None) -> SearchOutcome:
        """The same outcome with these warnings added in order (None ones skipped). A Degradation's cause is
        also noted, for counting once when the request ends: one call both counts a fallback and warns."""
        added = [n for n in notes if n]
        if not added:
            return self
        return replace(self, warnings=self.warnings + tuple(n.warning if isinstance(n, Degradation) else n
                                                             for n in added),
                       degradations=self.degradations + tuple(n.cause for n in added if isinstance(n, Degradation)))

    def limited(self, limit: int) -> SearchOutcome:
        """The same outcome with every bucket cut to `limit` results."""
        return replace(self, buckets={name: hits[:limit] for name, hits in self.buckets.items()})
