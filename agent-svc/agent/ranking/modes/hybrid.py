"""hybrid: seed 001's pipeline. Every candidate's evidence (a fetched page's chunks, else its snippet) goes
through a BM25 shortlist to semantic-svc's reranker. The shortlist gives every candidate its best chunk first,
so that no page drops out unscored, then fills up with the best remaining chunks; it is scored in that order,
as much of it as the deadline allows (anytime.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from agent.core.context import SearchContext
from agent.core.passage import Passage
from agent.core.query import SearchQuery
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
class RerankShortlist:
    page_chunks: int  # chunks of fetched pages in the shortlist; snippets come on top
    semantic: SemanticClient

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> None:
        return None  # fetch in SearXNG's order

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scored:
        evidence = [(i, p) for i, c in enumerate(candidates) for p in c.evidence()]
        with ctx.timings.stage("bm25"):
            shortlist = self._shortlist(query, candidates, evidence)
        semantic = self.semantic
        with ctx.timings.stage("rerank"):
            partial = await score_in_time([p.scored_text for _, p in shortlist], lambda texts, budget_s:
                                          semantic.rerank(query, texts, budget_s), ctx.scoring_deadline(),
                                          lambda: semantic.pace("rerank"), extra_chars=len(query),
                                          ahead_s=semantic.lane_wait_s())
        return Scored.of(len(candidates), shortlist, partial)

    def _shortlist(self, query: str, candidates: Sequence[Candidate], evidence: list[tuple[int, Passage]]
                   ) -> list[tuple[int, Passage]]:
        order = bm25_order(query, [p for _, p in evidence])
        chosen = shortlisted(order, [i for i, _ in evidence], [c.has_content for c in candidates], self.page_chunks)
        return [evidence[k] for k in chosen]


def shortlisted(order: Sequence[int], owner: Sequence[int], has_page: Sequence[bool], page_chunks: int) -> list[int]:
    """Which pieces of evidence the reranker scores, best first: every candidate's best (first in `order`), in
    that order, then the next best page chunks until `page_chunks` of them are in. `owner[k]` is the candidate
    of evidence k."""
    firsts: dict[int, int] = {}
    for k in order:
        firsts.setdefault(owner[k], k)
    chosen = list(firsts.values())
    best = set(chosen)
    taken = sum(has_page[owner[k]] for k in chosen)
    for k in order:
        if taken >= page_chunks:
            break
        if k not in best:
            chosen.append(k)
            taken += 1  # only pages have more than one piece of evidence
    return chosen


class HybridSettings(Section):
    """hybrid mode's own tunables (vector and hybrid_vector score with them too)."""

    hybrid_pool: int = Field(20, ge=1, le=50, description="SearXNG candidates hybrid mode ranks (a second page)")
    shortlist: int = Field(16, ge=1, le=64, description="hybrid mode: page chunks of the BM25 shortlist the "
                           "reranker scores (every candidate's best chunk first; snippets on top)")
    hybrid_fusion: FusionName = Field("linear", description="hybrid mode: the final order's fusion (rrf, linear)")
    hybrid_fusion_weights: FusionWeights = Field(
        default_factory=lambda: dict(FITTED_WEIGHTS),
        description="hybrid mode: the weight of each page feature in fusion")


def spec(modes: ModeSettings, up: Upstreams, query: SearchQuery) -> RankSpec:
    settings = modes.of(HybridSettings)
    return RankSpec(settings.hybrid_pool, RerankShortlist(settings.shortlist, up.semantic),
                    settings.hybrid_fusion, settings.hybrid_fusion_weights, model_kind="rerank")
