"""The vector index as a source of results: the query's nearest chunks in Qdrant (through semantic-svc),
one result per page with its best chunk, nothing for a query the index does not answer.

Seed 001: without a floor the top hits of an index enter every query, however off-topic (sqlite.org/about.html
in shopping queries). VECTOR_FLOOR is the probability of relevance a query's best chunk must reach for the index
to answer it (docs/evaluation.md); without semantic-svc's calibration there is none, and no floor applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wisp_text.chunking import Chunk

from agent.core.context import SearchContext
from agent.core.hits import Hit
from agent.core.passage import Passage
from agent.core.query import SearchQuery
from agent.retrieval.dedupe import dedupe
from agent.retrieval.translation import ResultFilter
from agent.upstream.clients import Upstreams


@dataclass(frozen=True)
class IndexedHit:
    hit: Hit  # its description is the best chunk
    passage: Passage  # that chunk, scored by its cosine to the query

    @property
    def score(self) -> float:
        return self.passage.score


async def index_hits(query: SearchQuery, ctx: SearchContext, up: Upstreams, limit: int) -> list[IndexedHit]:
    """The index's best pages for the query, best first, in the index's order (its cosine fused with its lexical
    side); none when not one chunk reaches the relevance floor (raises Degraded when the index cannot answer).

    The floor gates the query, as it was calibrated (on each query's best cosine): an on-topic query keeps the
    pages its lexical side found below the floor, which a floor per chunk dropped (a page that names the query's
    rare words but reads unlike it to the embedder)."""
    reach = up.semantic.index_reach
    with ctx.timings.stage("index"):
        chunks = await up.semantic.index_search(query.query, min(limit * reach.chunks_per_result, 100),
                                                None, ctx.pipeline_remaining_s())
    admitted = ResultFilter(tuple(query.include_domains), tuple(query.exclude_domains))
    kept = [c for c in chunks if admitted.admits(c["url"], None)]
    best = max((p for c in kept if (p := _probability(c)) is not None), default=None)
    if best is not None and best < reach.floor:
        return []
    return [_indexed(chunk) for chunk in dedupe(kept, lambda c: c["url"])[:limit]]


def _probability(chunk: dict[str, Any]) -> float | None:
    """The chunk's probability of relevance; None without a calibration, or for a value that is no probability
    (the client of /rerank and /similarity refuses those the same way)."""
    probability = chunk.get("probability")
    return float(probability) if isinstance(probability, (int, float)) and 0 <= probability <= 1 else None


def _indexed(chunk: dict[str, Any]) -> IndexedHit:
    url, text = chunk["url"], str(chunk.get("text") or "")
    title = str(chunk.get("title") or url)
    passage = Passage(url, title, Chunk(int(chunk.get("chunk_index") or 0), text, str(chunk.get("heading") or "")),
                      float(chunk["score"]), _probability(chunk))
    return IndexedHit(Hit(url=url, title=title, content=text, engines=("index",), found_by=("index",)), passage)
