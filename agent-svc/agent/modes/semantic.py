"""semantic: seed 000's two passes. Pass 1 scores every candidate's snippet by cosine to the query, to choose
what to fetch; pass 2 scores the best chunks of each fetched page (BM25 picks which chunks of a long page the
embedder reads) and the snippet of every other candidate, on the same cosine scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent.config import Settings
from agent.evidence import Passage, bm25_order
from agent.pipeline import RankSpec, Scores
from agent.pool import Candidate
from agent.search_context import SearchContext


@dataclass(frozen=True)
class CosineOfBestChunks:
    chunks_per_page: int

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scores:
        texts = [_snippet_text(c) for c in candidates]
        # under load pass 1 may wait, but not into the time kept for fetching and pass 2
        budget = ctx.pipeline_remaining_s() - ctx.services.settings.rank_reserve_s
        with ctx.timings.stage("embed"):
            return tuple(await ctx.services.semantic.similarity(query, texts, budget))

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext
                    ) -> tuple[tuple[Passage, ...], ...]:
        with ctx.timings.stage("bm25"):
            chosen = [self._chosen(query, c) for c in candidates]
        flat = [p for passages in chosen for p in passages]
        with ctx.timings.stage("embed"):
            scores = iter(await ctx.services.semantic.similarity(query, [p.scored_text for p in flat],
                                                                 ctx.pipeline_remaining_s()))
        return tuple(tuple(replace(p, score=next(scores)) for p in passages) for passages in chosen)

    def _chosen(self, query: str, candidate: Candidate) -> tuple[Passage, ...]:
        evidence = candidate.evidence()
        if not candidate.has_content:
            return evidence
        best = sorted(bm25_order(query, evidence)[: self.chunks_per_page])
        return tuple(evidence[i] for i in best)


def _snippet_text(candidate: Candidate) -> str:
    snippet = candidate.snippet()
    return snippet[0].scored_text if snippet else candidate.url


def spec(settings: Settings) -> RankSpec:
    return RankSpec(settings.semantic_pool, settings.semantic_margin,
                    CosineOfBestChunks(settings.semantic_chunks_per_page), settings.semantic_fusion,
                    settings.semantic_fusion_weights)
