"""hybrid_vector: SearXNG and the vector index in parallel, merged by reciprocal rank fusion with URL
de-duplication; the merged pool then goes through hybrid mode's scoring (fetch, BM25 shortlist, reranker,
margin, fusion). With `rerank: false` the merged order is the answer, with nothing fetched (tens of
milliseconds), and the index's chunks as the packed context.

A page both sides found is one result and carries the index's best chunk, better evidence than a snippet.
Either side failing leaves the other's results, with a warning naming the cause.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial

from pydantic import Field

from agent.core.context import SearchContext
from agent.core.hits import Hit
from agent.core.outcome import Degradation, SearchOutcome
from agent.core.query import SearchQuery
from agent.core.section import Section
from agent.errors import Degraded, WispError
from agent.ranking.candidates import Candidate, candidate_pool
from agent.ranking.fusion import merged_scores
from agent.ranking.modes import hybrid
from agent.ranking.modes.vector import AsGathered
from agent.ranking.runner import RankSpec
from agent.ranking.settings import ModeSettings, RankingSettings
from agent.retrieval.dedupe import normalize_url
from agent.retrieval.indexed import IndexedHit, index_hits
from agent.upstream.clients import Upstreams


class HybridVectorSettings(Section):
    """hybrid_vector's own tunable (it scores with hybrid's)."""

    hybrid_vector_index_weight: float = Field(
        1.0, ge=0, description="hybrid_vector: the index's weight against SearXNG's (1.0) in rank fusion")


def spec(modes: ModeSettings, up: Upstreams, query: SearchQuery) -> RankSpec:
    gather = partial(merged_pool, index_weight=modes.of(HybridVectorSettings).hybrid_vector_index_weight)
    if query.rerank is False:
        return RankSpec(pool=0, scorer=AsGathered(), fusion="linear", weights={"score": 1.0}, gather=gather,
                        fetch=False, recency=False, by_relevance=False)
    return replace(hybrid.spec(modes, up, query), gather=gather)


async def merged_pool(query: SearchQuery, ctx: SearchContext, up: Upstreams, size: int, ranked: str,
                      settings: RankingSettings, index_weight: float) -> tuple[SearchOutcome, tuple[Candidate, ...]]:
    """SearXNG's candidates and the index's, merged; each carries its fused score, and the index's chunk when
    the index found it."""
    size = max(size, query.limit)
    outcome, hits, indexed = await _both_sides(query, ctx, up, size, ranked, settings)
    by_key = {normalize_url(h.url): h for h in hits}
    chunks = {normalize_url(i.hit.url): i for i in indexed}
    for key, found in chunks.items():  # the index's hit carries the page's best chunk
        searx_hit = by_key.get(key)
        by_key[key] = replace(found.hit, engines=found.hit.engines + searx_hit.engines,
                              found_by=searx_hit.found_by + found.hit.found_by, text=searx_hit.text
                              ) if searx_hit else found.hit
    fused = merged_scores([[normalize_url(h.url) for h in hits], [normalize_url(i.hit.url) for i in indexed]],
                          [1.0, index_weight], settings.rrf_k)
    return outcome, tuple(Candidate(by_key[key], rank, indexed=chunks[key].passage if key in chunks else None,
                                    gathered=score) for rank, (key, score) in enumerate(fused, 1))


async def _both_sides(query: SearchQuery, ctx: SearchContext, up: Upstreams, size: int, ranked: str,
                      settings: RankingSettings) -> tuple[SearchOutcome, list[Hit], list[IndexedHit]]:
    searx, index = await asyncio.gather(candidate_pool(query, ctx, up, size, ranked, settings),
                                        index_hits(query, ctx, up, size), return_exceptions=True)
    for side in (searx, index):
        if isinstance(side, BaseException) and not isinstance(side, (WispError, Degraded)):
            raise side
    if isinstance(searx, BaseException):
        if isinstance(index, BaseException):
            raise searx
        empty = SearchOutcome({s.type: [] for s in query.sources})
        return empty.warned(Degradation("searxng_unavailable", f"SearXNG failed ({searx}): results from the "
                                          "vector index alone")), [], index
    outcome, candidates = searx
    if isinstance(index, BaseException):
        alone = Degradation("index_unavailable", f"the vector index could not answer ({index}): SearXNG's results "
                            "alone")
        return outcome.warned(alone), [c.hit for c in candidates], []
    return outcome, [c.hit for c in candidates], index
