"""POST /v2/similar: pages like a seed page (seed 001's recipe).

The seed page's title and its 8 most common words that are not stopwords make up to 3 SearXNG queries, and
the index is asked too when it holds pages; the first 10 candidates are fetched, and each one's first chunk is
compared by cosine with the mean of the seed's first 2 chunks. With normalized embeddings that cosine is
(cos(a, p) + cos(b, p)) / |a + b|, so semantic-svc's /similarity gives it exactly, without a vector API. When
the embedder is down the candidates keep SearXNG's order, and the warning says so.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import replace

from wisp_text.terms import content_terms

from agent import metrics
from agent.core.context import SearchContext
from agent.core.outcome import Degradation, ResultDetail, SearchOutcome
from agent.core.pages import Extraction
from agent.core.query import SearchQuery
from agent.core.sources import DEFAULT_SOURCE
from agent.errors import Degraded, SearchTimeout, WispError
from agent.pages.loading import failed_pages
from agent.ranking.candidates import Candidate
from agent.ranking.settings import RankingSettings
from agent.retrieval.dedupe import dedupe, normalize_url
from agent.retrieval.indexed import index_hits
from agent.retrieval.searxng_results import retrieve_candidates
from agent.retrieval.sourced import interleave
from agent.upstream.clients import Upstreams
from agent.upstream.semantic import SemanticClient

SEED_TERMS = 8
FETCHED = 10


class SeedUnreadable(WispError):
    status = 422
    code = "SEED_UNREADABLE"


async def run_similar(seed_url: str, limit: int, timeout_ms: int, ctx: SearchContext, up: Upstreams,
                      settings: RankingSettings) -> tuple[SearchOutcome, SearchQuery]:
    """`similar` within the request's timeout (408 past it), with its timings; also the query it ran with."""
    query = SearchQuery(query=seed_url, limit=limit, timeout_ms=timeout_ms)
    try:
        async with asyncio.timeout(timeout_ms / 1000):
            outcome = await similar(seed_url, query, ctx, up, settings)
            metrics.degraded(outcome.degradations)
            return replace(outcome, timings=ctx.timings.as_dict()), query
    except TimeoutError:
        raise SearchTimeout(f"similar pages were not found within the request's timeout of {timeout_ms} ms") from None
    finally:
        metrics.observe_stages("similar", ctx.timings)


async def similar(seed_url: str, query: SearchQuery, ctx: SearchContext, up: Upstreams, settings: RankingSettings
                  ) -> SearchOutcome:
    """The pages most like `seed_url`, best first, at most `query.limit` (`query` carries the request's
    options; its text is unused); read as the ranked modes read pages (CHUNK_CHARS, RANK_MAX_BYTES)."""
    how = Extraction(chunk_chars=settings.chunk_chars, max_bytes=settings.rank_max_bytes)
    seed = (await ctx.load_pages([seed_url], how))[seed_url]
    if seed.extracted is None or not seed.extracted.chunks:
        raise SeedUnreadable(f"the seed page could not be read: {seed.error or 'it holds no text'}")
    texts = [c.with_heading for c in seed.extracted.chunks]
    queries = seed_queries(seed.extracted.title, " ".join(texts))
    if not queries:
        raise SeedUnreadable("the seed page has no title and no word to search for")
    outcome, candidates = await _candidates(queries, seed_url, query, ctx, up)
    pages = await ctx.load_pages([c.url for c in candidates], how)
    candidates = [replace(c, page=pages[c.url]) for c in candidates]
    outcome = outcome.warned(failed_pages(pages))
    firsts = [(c.evidence() or (None,))[0] for c in candidates]
    try:
        with ctx.timings.stage("embed"):
            scores = await _cosine_to_mean(texts[:2], [p.scored_text if p else c.url for p, c in
                                                       zip(firsts, candidates, strict=True)], ctx, up.semantic)
    except Degraded as e:
        ordered = [(c, None) for c in candidates]
        outcome = outcome.warned(Degradation("searxng_order", f"semantic-svc failed ({e}): results keep SearXNG's "
                                               "order"))
    else:
        ordered = sorted(zip(candidates, scores, strict=True), key=lambda pair: pair[1], reverse=True)
    shown = ordered[: query.limit]
    details = {c.url: ResultDetail(s, "page" if c.has_content else "snippet") for c, s in shown if s is not None}
    return replace(outcome, buckets={DEFAULT_SOURCE: [c.hit for c, _ in shown]}, details=details)


def seed_queries(title: str, text: str) -> list[str]:
    """Up to 3 queries: the title, the seed's most common words, and the title with the first four of them."""
    counts = Counter(content_terms(text))
    terms = [t for t, _ in counts.most_common(SEED_TERMS)]
    queries = [title.strip(), " ".join(terms), f"{title.strip()} {' '.join(terms[:4])}".strip()]
    return [q for q in dict.fromkeys(queries) if q][:3]


async def _candidates(queries: list[str], seed_url: str, query: SearchQuery, ctx: SearchContext, up: Upstreams
                      ) -> tuple[SearchOutcome, list[Candidate]]:
    """SearXNG's results for each query, interleaved, then the index's; without the seed, each page once."""
    asks = [retrieve_candidates(replace(query, query=q, sources=query.sources[:1]), ctx, up) for q in queries]
    *searched, indexed = await asyncio.gather(*asks, index_hits(replace(query, query=" ".join(queries[1:2])
                                                                        or queries[0]), ctx, up, FETCHED),
                                              return_exceptions=True)
    warnings, lists = [], []
    for q, result in zip(queries, searched, strict=True):
        if isinstance(result, WispError):
            warnings.append(f"SearXNG failed on {q!r} ({result.message})")
        elif isinstance(result, BaseException):
            raise result
        else:
            lists.append(result.buckets.get(DEFAULT_SOURCE, []))
    if not lists and isinstance(indexed, BaseException):
        raise searched[0] if isinstance(searched[0], BaseException) else indexed
    index_list = [] if isinstance(indexed, BaseException) else [i.hit for i in indexed]
    seed_key = normalize_url(seed_url)
    merged = [h for h in dedupe(interleave(lists) + index_list, lambda h: h.url) if normalize_url(h.url) != seed_key]
    candidates = [Candidate(hit, rank) for rank, hit in enumerate(merged[:FETCHED], 1)]
    return SearchOutcome({DEFAULT_SOURCE: []}, tuple(warnings)), candidates


async def _cosine_to_mean(seed: list[str], passages: list[str], ctx: SearchContext, semantic: SemanticClient
                          ) -> list[float]:
    if len(seed) == 1:
        return list((await semantic.similarity(seed[0], passages, ctx.pipeline_remaining_s())).scores)
    rated_a, rated_b = await asyncio.gather(
        semantic.similarity(seed[0], [*passages, seed[1]], ctx.pipeline_remaining_s()),
        semantic.similarity(seed[1], passages, ctx.pipeline_remaining_s()))
    to_a, to_b = rated_a.scores, rated_b.scores
    norm = math.sqrt(max(2 + 2 * to_a[-1], 1e-9))  # |a + b| for unit vectors a, b
    return [(x + y) / norm for x, y in zip(to_a[:-1], to_b, strict=True)]

