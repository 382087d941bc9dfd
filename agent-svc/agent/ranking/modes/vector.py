"""vector: the query against the vector index alone: embed the query, search Qdrant (its cosine fused with its
lexical side), one result per page with its best chunk as evidence and its cosine as score, in the index's order;
nothing below the relevance floor, nothing fetched. With `rerank: true` hybrid mode's reranker scores the
index's chunks.

Other sources than web have nothing in the index and come back empty. When the index cannot answer
(semantic-svc down, nothing crawled yet), the results are SearXNG's keyword results, and the warning says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent.core.context import SearchContext
from agent.core.outcome import Degradation, SearchOutcome
from agent.core.query import SearchQuery
from agent.core.sources import DEFAULT_SOURCE
from agent.errors import Degraded
from agent.ranking.candidates import Candidate
from agent.ranking.modes import hybrid, keyword
from agent.ranking.runner import RankSpec, Run, Scored
from agent.ranking.settings import ModeSettings, RankingSettings
from agent.retrieval.indexed import IndexedHit, index_hits
from agent.upstream.clients import Upstreams


@dataclass(frozen=True)
class AsGathered:
    """Scores each candidate by what the source that gathered it gave (the index's cosine, a fused rank):
    nothing fetched, no model called."""

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> None:
        return None

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scored:
        return Scored(tuple(tuple(replace(p, score=c.gathered or 0.0) for p in c.evidence()[:1])
                            for c in candidates))


def _indexed_candidate(found: IndexedHit, rank: int) -> Candidate:
    return Candidate(found.hit, rank, indexed=found.passage, gathered=found.score)


async def index_pool(query: SearchQuery, ctx: SearchContext, up: Upstreams, size: int, ranked: str,
                     settings: RankingSettings) -> tuple[SearchOutcome, tuple[Candidate, ...]]:
    """The index's pages for the query; every other bucket empty, and warnings for what the index cannot do."""
    found = await index_hits(query, ctx, up, max(size, query.limit))
    buckets = {s.type: [] for s in query.sources}
    warnings = []
    if others := [name for name in buckets if name != DEFAULT_SOURCE]:
        warnings.append(_web_only(others))
    if query.tbs or any(s.tbs for s in query.sources):
        warnings.append("the vector index keeps no dates: tbs was not applied")
    if not found:
        warnings.append(f"no indexed page reaches the relevance floor (VECTOR_FLOOR {up.semantic.index_reach.floor})")
    candidates = tuple(_indexed_candidate(f, rank) for rank, f in enumerate(found, 1))
    return SearchOutcome(buckets, tuple(warnings)), candidates


def spec(modes: ModeSettings, up: Upstreams, query: SearchQuery) -> RankSpec:
    if query.rerank:  # the index's pages scored by hybrid mode's reranker on their chunks; nothing fetched
        return replace(hybrid.spec(modes, up, query), gather=index_pool, fetch=False, recency=False)
    # the index's own order (its cosine fused with its lexical side) is the answer: `prior` is the gathered rank
    # the index's floor decided what is an answer (VECTOR_FLOOR): nothing is pruned after it
    return RankSpec(pool=0, scorer=AsGathered(), fusion="linear", weights={"prior": 1.0}, gather=index_pool,
                    fetch=False, recency=False, by_relevance=False)


def keyword_when_unavailable(run: Run) -> Run:
    """vector mode's fallback: SearXNG's keyword results when the index cannot answer, saying why."""
    async def guarded(query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
        if not any(s.type == DEFAULT_SOURCE for s in query.sources):
            names = [s.type for s in query.sources]
            return SearchOutcome({name: [] for name in names}, (_web_only(names),))
        try:
            return await run(query, ctx, up)
        except Degraded as e:
            outcome = await keyword.run(query, ctx, up)
            return outcome.warned(Degradation("index_unavailable", f"the vector index could not answer ({e}): "
                                                "keyword results from SearXNG instead"))

    return guarded


def _web_only(sources: list[str]) -> str:
    return f"the vector index holds web pages only: {', '.join(sources)} came back empty"
