"""Stage 1 of the ranked modes, the candidate pool: SearXNG's web results, each a candidate with its rank.

Ranking can only reorder what SearXNG found (seed 001), so a ranked mode may ask for a wider pool than
`limit`: hybrid mode takes a second SearXNG page, which paid on the dev set; semantic mode does not, where it
did not. REFORMULATE also searches a keyword form of question-like queries (it did not pay; off by default).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from agent.core.context import SearchContext
from agent.core.hits import Hit
from agent.core.outcome import Degradation, SearchOutcome
from agent.core.pages import Page
from agent.core.passage import Passage, snippet_chunk
from agent.core.query import SearchQuery, SourceRequest
from agent.core.sources import DEFAULT_SOURCE
from agent.ranking.settings import RankingSettings
from agent.retrieval.searxng_results import retrieve_candidates
from agent.retrieval.sourced import merged_hits, with_sources
from agent.upstream.clients import Upstreams

_QUESTION_WORDS = frozenset(
    "a an and are as at be by can could do does did for from how i in is it of on or should the to what when where "
    "which who whom why will with would vs versus into my me you your we our there this that these those".split()
)


@dataclass(frozen=True)
class Candidate:
    hit: Hit
    rank: int  # SearXNG's, from 1
    page: Page | None = None  # once fetched
    indexed: Passage | None = None  # the vector index's best chunk of the page, when the index found it
    gathered: float | None = None  # the score the source that gathered it gave (the index's cosine, a fusion)

    @property
    def url(self) -> str:
        return self.hit.url

    @property
    def title(self) -> str:
        return (self.page.extracted.title if self.page and self.page.extracted else "") or self.hit.title

    @property
    def has_content(self) -> bool:
        return bool(self.page and self.page.extracted and self.page.extracted.chunks)

    @property
    def published(self) -> datetime | None:
        extracted = self.page.extracted if self.page else None
        return self.hit.published or (extracted.published if extracted else None)

    def snippet(self) -> tuple[Passage, ...]:
        """The result's SearXNG snippet as its one passage (none when it has no text)."""
        chunk = snippet_chunk(self.hit.title, self.hit.content)
        return (Passage(self.url, self.hit.title, chunk),) if chunk else ()

    @property
    def evidence_kind(self) -> str:
        """What its evidence is: "page", "index" (the index's chunk) or "snippet"."""
        return "page" if self.has_content else "index" if self.indexed else "snippet"

    def evidence(self) -> tuple[Passage, ...]:
        """The page's chunks when it was fetched and extracted, else the index's chunk, else its snippet."""
        if self.has_content:
            assert self.page and self.page.extracted
            return tuple(Passage(self.url, self.title, chunk) for chunk in self.page.extracted.chunks)
        return (self.indexed,) if self.indexed else self.snippet()


def keyword_form(text: str) -> str | None:
    """A question without its question words ("which PostgreSQL version added MERGE" → "PostgreSQL MERGE");
    None when that changes nothing or leaves too little."""
    words = re.findall(r"[\w.+#:-]+", text)
    kept = [w for w in words if w.lower() not in _QUESTION_WORDS]
    if len(kept) < 2 or len(kept) == len(words):
        return None
    return " ".join(kept)


async def candidate_pool(query: SearchQuery, ctx: SearchContext, up: Upstreams, size: int, ranked: str,
                         settings: RankingSettings) -> tuple[SearchOutcome, tuple[Candidate, ...]]:
    """SearXNG's results for the query, at least `size` of them, and the extra sources' (SEARCH_SOURCES); the
    `ranked` bucket's hits become candidates (with REFORMULATE, a question's keyword form is searched too)."""
    pool = replace(query, limit=max(query.limit, size))
    budget = _searxng_budget(ctx)
    if settings.reformulate and ranked == DEFAULT_SOURCE and (keywords := keyword_form(query.query)):
        searxng = _with_keyword_form(pool, keywords, ctx, up, budget)
    else:
        searxng = retrieve_candidates(pool, ctx, up, budget)
    outcome = await with_sources(searxng, pool, ctx, up, budget)
    return outcome, tuple(Candidate(hit, rank) for rank, hit in enumerate(outcome.buckets.get(ranked, []), 1))


async def _with_keyword_form(pool: SearchQuery, keywords: str, ctx: SearchContext, up: Upstreams,
                             budget: Callable[[], float]) -> SearchOutcome:
    variant = replace(pool, query=keywords, sources=[SourceRequest(DEFAULT_SOURCE)])
    outcome, extra = await asyncio.gather(retrieve_candidates(pool, ctx, up, budget),
                                          retrieve_candidates(variant, ctx, up, budget), return_exceptions=True)
    if isinstance(outcome, BaseException):
        raise outcome
    if isinstance(extra, BaseException):  # the widening is a bonus: its failure costs only itself
        return outcome.warned(Degradation("keyword_form", f"the keyword form of the query failed ({extra}); "
                                            "searched as written"))
    merged = merged_hits([outcome.buckets.get(DEFAULT_SOURCE, []), extra.buckets.get(DEFAULT_SOURCE, [])])
    return replace(outcome, buckets={**outcome.buckets, DEFAULT_SOURCE: merged})


def _searxng_budget(ctx: SearchContext) -> Callable[[], float]:
    """SearXNG may use the pipeline's time but the fetch and the ranking reserve (at least a second)."""
    reserve = ctx.budget.rank_reserve_s + 1.0
    return lambda: max(ctx.pipeline_remaining_s() - reserve, 1.0)
