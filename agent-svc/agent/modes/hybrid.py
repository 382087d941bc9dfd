"""hybrid: seed 001's pipeline. Every candidate's evidence (a fetched page's chunks, else its snippet) goes
through a BM25 shortlist to semantic-svc's reranker. The shortlist gives every candidate its best chunk first,
so that no page drops out unscored, then fills up with the best remaining chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent.config import Settings
from agent.evidence import Passage, bm25_order
from agent.pipeline import Busy, RankSpec
from agent.pool import Candidate
from agent.search_context import SearchContext


@dataclass(frozen=True)
class RerankShortlist:
    page_chunks: int  # chunks of fetched pages in the shortlist; snippets come on top

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> None:
        return None  # fetch in SearXNG's order

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext
                    ) -> tuple[tuple[Passage, ...], ...]:
        evidence = [(i, p) for i, c in enumerate(candidates) for p in c.evidence()]
        with ctx.timings.stage("bm25"):
            shortlist = self._shortlist(query, candidates, evidence)
        with ctx.timings.stage("rerank"):
            scores = await ctx.services.semantic.rerank(query, [p.scored_text for _, p in shortlist],
                                                        ctx.pipeline_remaining_s())
        scored: list[list[Passage]] = [[] for _ in candidates]
        for (i, passage), score in zip(shortlist, scores, strict=True):
            scored[i].append(replace(passage, score=score))
        return tuple(tuple(passages) for passages in scored)

    def _shortlist(self, query: str, candidates: Sequence[Candidate], evidence: list[tuple[int, Passage]]
                   ) -> list[tuple[int, Passage]]:
        order = bm25_order(query, [p for _, p in evidence])
        chosen = shortlisted(order, [i for i, _ in evidence], [c.has_content for c in candidates], self.page_chunks)
        return [evidence[k] for k in chosen]


def shortlisted(order: Sequence[int], owner: Sequence[int], has_page: Sequence[bool], page_chunks: int) -> list[int]:
    """Which pieces of evidence the reranker scores, ascending: every candidate's best (first in `order`), then
    the next best page chunks until `page_chunks` of them are in. `owner[k]` is the candidate of evidence k."""
    firsts: dict[int, int] = {}
    for k in order:
        firsts.setdefault(owner[k], k)
    chosen = set(firsts.values())
    taken = sum(has_page[owner[k]] for k in chosen)
    for k in order:
        if taken >= page_chunks:
            break
        if k not in chosen:
            chosen.add(k)
            taken += 1  # only pages have more than one piece of evidence
    return sorted(chosen)

def spec(settings: Settings) -> RankSpec:
    busy = Busy(settings.busy_searches, RerankShortlist(settings.busy_shortlist),
                f"scored a shortlist of {settings.busy_shortlist} page chunks instead of {settings.shortlist}"
                ) if settings.busy_shortlist < settings.shortlist else None
    return RankSpec(settings.hybrid_pool, settings.hybrid_margin, RerankShortlist(settings.shortlist),
                    settings.hybrid_fusion, settings.hybrid_fusion_weights, busy)
