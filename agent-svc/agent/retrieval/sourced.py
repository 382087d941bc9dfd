"""The extra candidate sources (SEARCH_SOURCES) beside SearXNG: asked concurrently with it for the web bucket of a
search that names no categories or engines (which narrow SearXNG alone), their results merged with its own.

The merge takes each list's results in turn (SearXNG's first, then each source's first, in configured order, then
every list's second...), one result per URL key: a page found twice is the first hit, carrying the names of every
source that found it and the text one of them supplied. The sources' results pass the request's domain, time and
URL filters as SearXNG's do. SearXNG failing while a source answered leaves the source's results, with a warning;
a source that gave nothing says why in another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

from agent.core.context import SearchContext
from agent.core.hits import Hit
from agent.core.outcome import Degradation, SearchOutcome
from agent.core.query import SearchQuery
from agent.core.sources import DEFAULT_SOURCE
from agent.errors import BadRequest, WispError
from agent.retrieval.dedupe import normalize_url
from agent.retrieval.tbs import parse_tbs
from agent.retrieval.translation import ResultFilter
from agent.upstream.clients import Upstreams
from agent.upstream.sources.calls import Ask
from agent.upstream.sources.routing import Answered, CandidateSources


async def with_sources(searxng: Awaitable[SearchOutcome], query: SearchQuery, ctx: SearchContext, up: Upstreams,
                       bound_s: Callable[[], float]) -> SearchOutcome:
    """SearXNG's outcome (`searxng`, awaited here) with the extra sources' results merged into its web bucket;
    `bound_s`: the time the pipeline leaves them (SOURCES_TIMEOUT_S at most)."""
    web = next((s for s in query.sources if s.type == DEFAULT_SOURCE), None)
    if up.sources is None or web is None or query.categories or query.engines:
        return await searxng
    admitted = ResultFilter(tuple(query.include_domains), tuple(query.exclude_domains),
                            valid_urls_only=query.ignore_invalid_urls, time=parse_tbs(web.tbs or query.tbs))
    found, answered = await asyncio.gather(searxng, _asked(up.sources, query, ctx, bound_s()),
                                           return_exceptions=True)
    if isinstance(answered, BaseException):
        raise answered
    extra = [[h for h in a.hits if admitted.admits(h.url, h.published)] for a in answered]
    outcome = _searxng_or_alone(found, query, any(extra))
    merged = merged_hits([outcome.buckets.get(DEFAULT_SOURCE, []), *extra])
    skipped = [Degradation("extra_source", f"extra source {a.source} gave nothing ({a.skipped}): results without "
                                           "it") for a in answered if a.skipped]
    return replace(outcome, buckets={**outcome.buckets, DEFAULT_SOURCE: merged}).warned(*skipped)


async def _asked(sources: CandidateSources, query: SearchQuery, ctx: SearchContext, bound_s: float
                 ) -> tuple[Answered, ...]:
    ask = Ask(query.query, 0, False, tuple(query.include_domains), tuple(query.exclude_domains))
    with ctx.timings.stage("sources"):
        return await sources.search(ask, bound_s)


def _searxng_or_alone(found: SearchOutcome | BaseException, query: SearchQuery, sources_answered: bool
                      ) -> SearchOutcome:
    """SearXNG's outcome; when it failed but a source answered, an empty one that says so."""
    if not isinstance(found, BaseException):
        return found
    if isinstance(found, BadRequest) or not isinstance(found, WispError) or not sources_answered:
        raise found
    empty = SearchOutcome({s.type: [] for s in query.sources})
    return empty.warned(Degradation("searxng_unavailable", f"SearXNG failed ({found}): results from the extra "
                                                           "sources alone"))


def merged_hits(lists: list[list[Hit]]) -> list[Hit]:
    """The lists' hits in turn, one per URL key: the first, with what the later ones add (their sources and
    engines, a text)."""
    by_key: dict[str, Hit] = {}
    for hit in interleave(lists):
        key = normalize_url(hit.url)
        known = by_key.get(key)
        by_key[key] = hit if known is None else replace(
            known, found_by=known.found_by + tuple(s for s in hit.found_by if s not in known.found_by),
            engines=known.engines + tuple(e for e in hit.engines if e not in known.engines),
            text=known.text or hit.text)
    return list(by_key.values())


def interleave(lists: list[list[Hit]]) -> list[Hit]:
    merged = []
    for i in range(max(map(len, lists), default=0)):
        merged += [hits[i] for hits in lists if i < len(hits)]
    return merged
