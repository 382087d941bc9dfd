"""hybrid: seed 001's pipeline. The top candidates are fetched and chunked; BM25 shortlists the chunks, the
reranker of semantic-svc scores the shortlist, passages within a margin of the best survive, and the best
are packed into the context (at most 3 per page). Results are the pages of the surviving passages.
"""

from __future__ import annotations

from wisp_text.bm25 import bm25_scores

from agent.candidates import (
    RECENCY_NOTE,
    Candidate,
    candidate_pool,
    fetch_first,
    finish,
    keep_searxng_order,
    recency_bonus,
)
from agent.context import SearchContext, SearchOutcome
from agent.pack import Passage
from agent.query import SearchQuery
from agent.rank import fused_order, within_margin
from agent.semantic_client import SemanticUnavailable


async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    settings = ctx.services.settings
    outcome, candidates = await candidate_pool(query, ctx, settings.hybrid_pool)
    if not candidates:
        return finish(outcome, query, [], [], ctx)
    await fetch_first(candidates, query, ctx, outcome)

    passages = [Passage(c.url, c.title, chunk.heading, chunk.text, 0.0)
                for c in candidates for chunk in c.evidence(settings.chunk_chars)]
    with ctx.timings.stage("bm25"):
        lexical = bm25_scores(query.query, [p.with_heading for p in passages])
        order = sorted(range(len(passages)), key=lambda i: lexical[i], reverse=True)
        shortlist = [passages[i] for i in order[: settings.shortlist]]
    try:
        with ctx.timings.stage("rerank"):
            scores = await ctx.services.semantic.rerank(query.query, [p.with_heading for p in shortlist],
                                                           ctx.pipeline_remaining_s())
    except SemanticUnavailable as e:
        return keep_searxng_order(outcome, query, candidates, ctx, f"semantic-svc failed ({e})")

    by_url = {c.url: c for c in candidates}
    bonus = recency_bonus(candidates, query, settings.recency_weight, settings.hybrid_margin)
    if bonus is not None:
        outcome.warnings.append(RECENCY_NOTE)
    scored = sorted((Passage(p.url, p.title, p.heading, p.text, s + (bonus[p.url] if bonus else 0.0))
                     for p, s in zip(shortlist, scores, strict=True)), key=lambda p: p.score, reverse=True)
    for passage, keep in zip(scored, within_margin([p.score for p in scored], settings.hybrid_margin), strict=True):
        candidate = by_url[passage.url]
        if candidate.score is None:  # passages come best first: the first is the page's best
            candidate.score = passage.score
        if keep:
            candidate.passages.append(passage)
    _decide(candidates, scored[0].score, settings.hybrid_margin)
    # pages in the order of their best passage fused with SearXNG's: as in semantic mode, the reranker alone
    # demoted pages SearXNG had right (measured on the dev set)
    ranked = fused_order([c for c in candidates if c.score is not None], lambda c: c.score)
    return finish(outcome, query, ranked, candidates, ctx)


def _decide(candidates: list[Candidate], top: float, margin: float) -> None:
    for candidate in candidates:
        if candidate.passages:
            candidate.decision = "kept"
            candidate.reason = f"best passage {top - candidate.passages[0].score:.3f} below the top (margin {margin})"
        elif candidate.score is not None:
            candidate.decision = "pruned"
            candidate.reason = f"best passage {top - candidate.score:.3f} below the top (margin {margin})"
        else:
            candidate.decision = "pruned"
            candidate.reason = "no passage in the BM25 shortlist"
