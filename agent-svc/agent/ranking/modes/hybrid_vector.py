"""hybrid_vector: SearXNG and the vector index in parallel, merged by reciprocal rank fusion with URL
de-duplication (seed 003). With `rerank: true` the merged pool then goes through hybrid mode's scoring (fetch,
BM25 shortlist, reranker, margin, fusion); without it the merged order is the answer, with nothing fetched
(tens of milliseconds), and the index's chunks as the packed context.

A page both sides found is one result and carries the index's best chunk, better evidence than a snippet.
Either side failing leaves the other's results, with a warning naming the cause.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from agent import metrics
from agent.config import Settings
from agent.core.context import SearchContext
from agent.core.hits import Hit
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.core.sources import DEFAULT_SOURCE
from agent.errors import Degraded, WispError
from agent.ranking.candidates import Candidate, candidate_pool
from agent.ranking.fusion import merged_lists
from agent.ranking.modes import hybrid, keyword
from agent.ranking.pack import context_text, pack
from agent.ranking.runner import RankSpec, run_ranked
from agent.retrieval.dedupe import normalize_url
from agent.retrieval.indexed import IndexedHit, index_hits


async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    if not any(s.type == DEFAULT_SOURCE for s in query.sources):
        return await keyword.run(query, ctx)  # the index holds web pages only
    if query.rerank:
        return await run_ranked(query, ctx, spec(ctx.services.settings))
    outcome, hits, indexed = await _both_sides(query, ctx, query.limit, DEFAULT_SOURCE)
    merged = _merged(hits, indexed, ctx.services.settings.hybrid_vector_index_weight)[: query.limit]
    shown = [i for i in indexed if i.hit.url in {h.url for h in merged}]
    settings = ctx.services.settings
    packed = pack([i.passage for i in shown], settings.pack_chars, settings.pack_per_url)
    limited = outcome.limited(query.limit)
    return replace(limited, buckets={**limited.buckets, DEFAULT_SOURCE: merged},
                   details={i.hit.url: i.detail() for i in shown}, context=context_text(packed) if packed else None,
                   packed=tuple(packed))


def spec(settings: Settings) -> RankSpec:
    return replace(hybrid.spec(settings), gather=merged_pool)


async def merged_pool(query: SearchQuery, ctx: SearchContext, size: int, ranked: str
                      ) -> tuple[SearchOutcome, tuple[Candidate, ...]]:
    """The ranked pipeline's pool: SearXNG's candidates and the index's, merged."""
    outcome, hits, indexed = await _both_sides(query, ctx, size, ranked)
    merged = _merged(hits, indexed, ctx.services.settings.hybrid_vector_index_weight)
    return outcome, tuple(Candidate(hit, rank) for rank, hit in enumerate(merged, 1))


async def _both_sides(query: SearchQuery, ctx: SearchContext, size: int, ranked: str
                      ) -> tuple[SearchOutcome, list[Hit], list[IndexedHit]]:
    searx, index = await asyncio.gather(candidate_pool(query, ctx, size, ranked), index_hits(query, ctx, size),
                                        return_exceptions=True)
    for side in (searx, index):
        if isinstance(side, BaseException) and not isinstance(side, (WispError, Degraded)):
            raise side
    if isinstance(searx, BaseException):
        if isinstance(index, BaseException):
            raise searx
        metrics.degraded("searxng_unavailable")
        empty = SearchOutcome({s.type: [] for s in query.sources})
        return empty.warned(f"SearXNG failed ({searx}): results from the vector index alone"), [], index
    outcome, candidates = searx
    if isinstance(index, BaseException):
        metrics.degraded("index_unavailable")
        return outcome.warned(f"the vector index could not answer ({index}): SearXNG's results alone"), \
            [c.hit for c in candidates], []
    return outcome, [c.hit for c in candidates], index


def _merged(hits: list[Hit], indexed: list[IndexedHit], index_weight: float) -> list[Hit]:
    by_key = {normalize_url(h.url): h for h in hits}
    for i in indexed:  # the index's hit carries the page's best chunk
        key = normalize_url(i.hit.url)
        searx_hit = by_key.get(key)
        by_key[key] = replace(i.hit, engines=i.hit.engines + searx_hit.engines) if searx_hit else i.hit
    order = merged_lists([[normalize_url(h.url) for h in hits], [normalize_url(i.hit.url) for i in indexed]],
                         [1.0, index_weight])
    return [by_key[key] for key in order]
