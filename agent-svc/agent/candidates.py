"""The candidate pool of the ranked modes, and how their decisions become the outcome.

Ranking can only reorder what SearXNG found (seed 001), so a ranked mode may ask for a wider pool than
`limit`: hybrid mode takes a second SearXNG page, which paid on the dev set; semantic mode does not, where it
did not. REFORMULATE also searches a keyword form of question-like queries (it did not pay; off by default).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from wisp_text.chunking import Chunk, chunk_text

from agent.context import Page, ResultDetail, SearchContext, SearchOutcome
from agent.dedupe import dedupe
from agent.pack import Passage, context_text, pack
from agent.pages import fetch_pages, snippet_warning
from agent.query import SearchQuery, SourceRequest
from agent.rank import freshness, is_time_sensitive
from agent.retrieve import retrieve_candidates
from agent.searxng_client import Hit

_QUESTION_WORDS = frozenset(
    "a an and are as at be by can could do does did for from how i in is it of on or should the to what when where "
    "which who whom why will with would vs versus into my me you your we our there this that these those".split()
)


@dataclass
class Candidate:
    hit: Hit
    rank: int  # SearXNG's, from 1
    page: Page | None = None
    pass1: float | None = None  # snippet score (semantic mode)
    score: float | None = None  # final score
    passages: list[Passage] = field(default_factory=list)
    decision: str = "not ranked"
    reason: str = ""

    @property
    def url(self) -> str:
        return self.hit.url

    @property
    def title(self) -> str:
        return (self.page.extracted.title if self.page and self.page.extracted else "") or self.hit.title

    def evidence(self, chunk_chars: int) -> list[Chunk]:
        """The page's chunks when it was fetched and extracted, else its SearXNG snippet as one chunk."""
        if self.page and self.page.extracted:
            return chunk_text(self.page.extracted.markdown, chunk_chars, self.title) or self._snippet()
        return self._snippet()

    def _snippet(self) -> list[Chunk]:
        text = self.hit.content or self.hit.title
        return [Chunk(0, text, self.hit.title)] if text.strip() else []  # nothing to score: no passage

    @property
    def published(self) -> datetime | None:
        extracted = self.page.extracted if self.page else None
        return self.hit.published or (extracted.published if extracted else None)


def keyword_form(text: str) -> str | None:
    """A question without its question words ("which PostgreSQL version added MERGE" → "PostgreSQL MERGE");
    None when that changes nothing or leaves too little."""
    words = re.findall(r"[\w.+#:-]+", text)
    kept = [w for w in words if w.lower() not in _QUESTION_WORDS]
    if len(kept) < 2 or len(kept) == len(words):
        return None
    return " ".join(kept)


async def candidate_pool(query: SearchQuery, ctx: SearchContext, size: int) -> tuple[SearchOutcome, list[Candidate]]:
    """SearXNG's results for the query, at least `size` of them; web hits become candidates."""
    settings = ctx.services.settings
    pool = replace(query, limit=max(query.limit, size))
    budget = _searxng_budget(ctx)
    if settings.reformulate and (keywords := keyword_form(query.query)):
        variant = replace(pool, query=keywords, sources=[SourceRequest("web")])
        outcome, extra = await asyncio.gather(retrieve_candidates(pool, ctx, budget),
                                              retrieve_candidates(variant, ctx, budget), return_exceptions=True)
        if isinstance(outcome, BaseException):
            raise outcome
        if isinstance(extra, BaseException):  # the widening is a bonus: its failure costs only itself
            outcome.warnings.append(f"the keyword form of the query failed ({extra}); searched as written")
        else:
            merged = _interleave([outcome.buckets.get("web", []), extra.buckets.get("web", [])])
            outcome.buckets["web"] = dedupe(merged, lambda h: h.url)
    else:
        outcome = await retrieve_candidates(pool, ctx, budget)
    return outcome, [Candidate(hit, rank) for rank, hit in enumerate(outcome.buckets.get("web", []), 1)]


async def fetch_first(ordered: list[Candidate], query: SearchQuery, ctx: SearchContext, outcome: SearchOutcome
                      ) -> list[Candidate]:
    """Fetch and extract the first FETCH_TOP (or the request's `fetch_top`) candidates; return them."""
    top = ordered[: query.fetch_top if query.fetch_top is not None else ctx.services.settings.fetch_top]
    # when formats will want these pages as Documents, one extraction serves ranking and the Documents both
    as_documents = bool(query.scrape_formats) and query.main_content_only
    pages = await fetch_pages([c.url for c in top], ctx, document=as_documents)
    for candidate in top:
        candidate.page = pages[candidate.url]
    if warning := snippet_warning(pages):
        outcome.warnings.append(warning)
    return top


def _searxng_budget(ctx: SearchContext) -> Callable[[], float]:
    """SearXNG may use the pipeline's time but the fetch and the ranking reserve (at least a second)."""
    reserve = ctx.services.settings.rank_reserve_s + 1.0
    return lambda: max(ctx.pipeline_remaining_s() - reserve, 1.0)


RECENCY_NOTE = "time-sensitive query: fresher pages were weighted up"


def recency_bonus(candidates: list[Candidate], query: SearchQuery, weight: float, margin: float
                  ) -> dict[str, float] | None:
    """For a time-sensitive query, what each page gains by its freshness (up to weight × margin, before any
    pruning); None for other queries."""
    if not is_time_sensitive(query.query, query.tbs) or weight <= 0:
        return None
    return {c.url: weight * margin * freshness(c.published) for c in candidates}


def finish(outcome: SearchOutcome, query: SearchQuery, ranked: list[Candidate], candidates: list[Candidate],
           ctx: SearchContext) -> SearchOutcome:
    """The kept candidates (best first) become the web bucket; their passages are packed into the context."""
    settings = ctx.services.settings
    kept = [c for c in ranked if c.decision == "kept"][: query.limit]
    outcome.buckets = {source: hits[: query.limit] for source, hits in outcome.buckets.items()}
    outcome.buckets["web"] = [c.hit for c in kept]
    outcome.details = {c.url: ResultDetail(c.score, "page" if c.page and c.page.extracted else "snippet",
                                           [_passage_json(p) for p in c.passages]) for c in kept}
    with ctx.timings.stage("pack"):
        packed = pack([p for c in kept for p in c.passages], settings.pack_chars, settings.pack_per_url)
        outcome.context = context_text(packed)
    if query.explain:
        outcome.explain = [_explain_row(c) for c in candidates]  # in SearXNG's order
    return outcome


def keep_searxng_order(outcome: SearchOutcome, query: SearchQuery, candidates: list[Candidate],
                       ctx: SearchContext, cause: str) -> SearchOutcome:
    """The degraded outcome when nothing could be scored: SearXNG's order, nothing pruned, and why."""
    outcome.warnings.append(f"{cause}: results keep SearXNG's order")
    for candidate in candidates:
        candidate.decision, candidate.reason = "kept", "SearXNG order (no scores)"
    return finish(outcome, query, candidates, candidates, ctx)


def _interleave(lists: list[list[Hit]]) -> list[Hit]:
    merged = []
    for i in range(max(map(len, lists), default=0)):
        merged += [hits[i] for hits in lists if i < len(hits)]
    return merged


def _passage_json(passage: Passage) -> dict[str, Any]:
    return {"heading": passage.heading, "text": passage.text, "score": round(passage.score, 4)}


def _explain_row(candidate: Candidate) -> dict[str, Any]:
    page = candidate.page
    return {
        "url": candidate.url, "title": candidate.title, "searxng_rank": candidate.rank,
        "fetch": None if page is None else ("ok" if page.extracted else page.error),
        "content_chars": len(page.extracted.markdown) if page and page.extracted else 0,
        "pass1_score": None if candidate.pass1 is None else round(candidate.pass1, 4),
        "score": None if candidate.score is None else round(candidate.score, 4),
        "decision": candidate.decision, "reason": candidate.reason,
    }
