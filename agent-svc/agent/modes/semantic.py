"""semantic: seed 000's two passes. Pass 1 reorders SearXNG's candidates by the cosine of their snippets to
the query; the top ones are fetched; pass 2 scores their real content, reorders and prunes by a margin
relative to the best score.
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
    outcome, candidates = await candidate_pool(query, ctx, settings.semantic_pool)
    if not candidates:
        return finish(outcome, query, [], [], ctx)
    try:
        await _pass_one(query, candidates, ctx)
    except SemanticUnavailable as e:
        return keep_searxng_order(outcome, query, candidates, ctx, f"semantic-svc failed ({e})")
    # pass 1 reorders by snippet cosine fused with SearXNG's rank: on thin snippets cosine alone left pages
    # SearXNG had right unfetched (measured on the dev set), and only fetched pages can prove themselves
    by_snippet = fused_order(candidates, lambda c: c.pass1)
    top = await fetch_first(by_snippet, query, ctx, outcome)
    try:
        await _pass_two(query, top, ctx)
    except SemanticUnavailable as e:
        outcome.warnings.append(f"semantic-svc failed on page content ({e}): ranked by snippets alone")
    for candidate in by_snippet:
        if candidate.score is None:  # not fetched: its snippet score stands in, on the same cosine scale
            candidate.score = candidate.pass1
            candidate.passages = [Passage(candidate.url, candidate.hit.title, "", candidate.hit.content or
                                          candidate.hit.title, candidate.pass1)]
    if (bonus := recency_bonus(candidates, query, settings.recency_weight, settings.semantic_margin)) is not None:
        for candidate in candidates:
            candidate.score += bonus[candidate.url]
        outcome.warnings.append(RECENCY_NOTE)
    ranked = fused_order(candidates, lambda c: c.score)
    best = max(c.score for c in candidates)
    for candidate, keep in zip(candidates, within_margin([c.score for c in candidates], settings.semantic_margin),
                               strict=True):
        candidate.decision = "kept" if keep else "pruned"
        candidate.reason = f"{best - candidate.score:.3f} below the top (margin {settings.semantic_margin})"
    return finish(outcome, query, ranked, candidates, ctx)


async def _pass_one(query: SearchQuery, candidates: list[Candidate], ctx: SearchContext) -> None:
    snippets = [f"{c.hit.title}. {c.hit.content}".strip() for c in candidates]
    with ctx.timings.stage("embed"):
        scores = await ctx.services.semantic.similarity(query.query, snippets, ctx.pipeline_remaining_s())
    for candidate, score in zip(candidates, scores, strict=True):
        candidate.pass1 = score


async def _pass_two(query: SearchQuery, fetched: list[Candidate], ctx: SearchContext) -> None:
    """Score each fetched page by its best chunks: BM25 picks which chunks of a long page the embedder reads."""
    settings = ctx.services.settings
    chosen: list[tuple[Candidate, Passage]] = []
    with ctx.timings.stage("bm25"):
        for candidate in fetched:
            if not (candidate.page and candidate.page.extracted):
                continue
            chunks = candidate.evidence(settings.chunk_chars)
            lexical = bm25_scores(query.query, [c.with_heading for c in chunks])
            best = sorted(range(len(chunks)), key=lambda i: lexical[i], reverse=True)
            best = best[: settings.semantic_chunks_per_page]
            chosen += [(candidate, Passage(candidate.url, candidate.title, chunks[i].heading, chunks[i].text, 0.0))
                       for i in sorted(best)]
    if not chosen:
        return
    with ctx.timings.stage("embed"):
        scores = await ctx.services.semantic.similarity(
            query.query, [p.with_heading for _, p in chosen],
            ctx.pipeline_remaining_s())
    for (candidate, passage), score in zip(chosen, scores, strict=True):
        candidate.passages.append(Passage(passage.url, passage.title, passage.heading, passage.text, score))
    for candidate in {c.url: c for c, _ in chosen}.values():
        candidate.passages.sort(key=lambda p: p.score, reverse=True)
        candidate.score = candidate.passages[0].score
