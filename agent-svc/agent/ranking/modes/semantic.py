"""semantic: seed 000's two passes. Pass 1 scores every candidate's snippet by cosine to the query, to choose
what to fetch; pass 2 scores the best chunks of each fetched page (BM25 picks which chunks of a long page the
embedder reads) and the snippet of every other candidate, on the same cosine scale: the pages' best chunks
first, as much as the deadline allows (anytime.py); a page left unscored keeps its snippet's pass-1 score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from agent.core.context import SearchContext
from agent.core.passage import Passage
from agent.core.query import SearchQuery
from agent.core.ratings import Ratings
from agent.core.section import Section
from agent.ranking.anytime import score_in_time
from agent.ranking.candidates import Candidate
from agent.ranking.evidence import bm25_order
from agent.ranking.fusion import FITTED_WEIGHTS, FusionName, FusionWeights
from agent.ranking.runner import RankSpec, Scored
from agent.ranking.settings import ModeSettings
from agent.upstream.clients import Upstreams
from agent.upstream.semantic import SemanticClient


@dataclass(frozen=True)
class CosineOfBestChunks:
    chunks_per_page: int
    semantic: SemanticClient

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Ratings:
        texts = [_snippet_text(c) for c in candidates]
        # under load pass 1 may wait, but not into the time kept for fetching and pass 2
        budget = ctx.pipeline_remaining_s() - ctx.budget.rank_reserve_s  # left to fetching and pass 2
        with ctx.timings.stage("embed"):
            return await self.semantic.similarity(query, texts, budget)

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scored:
        with ctx.timings.stage("bm25"):
            asked = by_rounds([self._chosen(query, c) for c in candidates], [c.has_content for c in candidates])
        semantic = self.semantic
        with ctx.timings.stage("embed"):
            partial = await score_in_time([p.scored_text for _, p in asked], lambda texts, budget_s:
                                          semantic.similarity(query, texts, budget_s), ctx.scoring_deadline(),
                                          lambda: semantic.pace("embed"), ahead_s=semantic.lane_wait_s())
        return Scored.of(len(candidates), asked, partial)

    def _chosen(self, query: str, candidate: Candidate) -> tuple[Passage, ...]:
        evidence = candidate.evidence()
        if not candidate.has_content:
            return evidence
        return tuple(evidence[i] for i in bm25_order(query, evidence)[: self.chunks_per_page])


def by_rounds(chosen: Sequence[Sequence[Passage]], has_page: Sequence[bool]) -> list[tuple[int, Passage]]:
    """(candidate, passage) pairs in the order they are worth scoring: each page's best chunk, then each page's
    second, and so on, then the snippets (pass 1 scored them already: they cost nothing from the cache)."""
    pages = [i for i, page in enumerate(has_page) if page]
    rounds = max((len(chosen[i]) for i in pages), default=0)
    ordered = [(i, chosen[i][r]) for r in range(rounds) for i in pages if r < len(chosen[i])]
    return ordered + [(i, p) for i, passages in enumerate(chosen) if not has_page[i] for p in passages]


def _snippet_text(candidate: Candidate) -> str:
    snippet = candidate.snippet()
    return snippet[0].scored_text if snippet else candidate.url


class SemanticModeSettings(Section):
    """semantic mode's own tunables."""

    semantic_pool: int = Field(10, ge=1, le=50, description="SearXNG candidates semantic mode ranks")
    semantic_chunks_per_page: int = Field(2, ge=1, le=8, description="semantic mode: chunks of a page it scores")
    semantic_fusion: FusionName = Field("linear", description="semantic mode: the final order's fusion (rrf, linear)")
    semantic_fusion_weights: FusionWeights = Field(
        default_factory=lambda: dict(FITTED_WEIGHTS),
        description="semantic mode: the weight of each page feature in fusion")


def spec(modes: ModeSettings, up: Upstreams, query: SearchQuery) -> RankSpec:
    settings = modes.of(SemanticModeSettings)
    scorer = CosineOfBestChunks(settings.semantic_chunks_per_page, up.semantic)
    return RankSpec(settings.semantic_pool, scorer, settings.semantic_fusion,
                    settings.semantic_fusion_weights, model_kind="embed", model_passes=2)
