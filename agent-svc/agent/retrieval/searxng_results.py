"""Stage 1, retrieve: ask SearXNG for every source's plan, concurrently, page by page until `limit` is met.

Results keep SearXNG's order (page 1 before page 2), lose duplicates by normalized URL and lose what the
post-filters reject. A source whose SearXNG request fails leaves its bucket empty and a warning; only
when every source fails does the search fail.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agent.core.context import SearchContext
from agent.core.hits import EngineCatalog, Hit
from agent.core.outcome import Degradation, SearchOutcome
from agent.core.query import SearchQuery
from agent.core.sources import source
from agent.errors import BadRequest, UpstreamError, WispError
from agent.retrieval.dedupe import dedupe
from agent.retrieval.translation import SourcePlan, needs_catalog, plan_sources
from agent.upstream.clients import Upstreams
from agent.upstream.searxng import SearxngClient, SearxngPage


@dataclass
class SourceResult:
    source: str
    hits: list[Hit] = field(default_factory=list)
    warnings: list[str | Degradation] = field(default_factory=list)  # a Degradation is counted too
    error: WispError | None = None  # set when the source produced nothing because SearXNG failed


async def retrieve_candidates(query: SearchQuery, ctx: SearchContext, up: Upstreams,
                              remaining_s: Callable[[], float] | None = None) -> SearchOutcome:
    """Translate the query, ask SearXNG for every source and gather hits per bucket, in SearXNG order.

    Raises the SearXNG failure when no source produced anything; otherwise failures become warnings.
    `remaining_s` bounds each SearXNG call (default: what is left of the request's timeout).
    """
    searxng = up.searxng
    catalog, warnings = await _catalog_if_needed(query, searxng)
    plans, plan_warnings = plan_sources(query, catalog)
    with ctx.timings.stage("searxng"):
        results = await retrieve(plans, query.limit, searxng, remaining_s or ctx.remaining_s)
    failures = [r.error for r in results if r.error]
    if any(isinstance(e, BadRequest) for e in failures):
        raise next(e for e in failures if isinstance(e, BadRequest))
    if failures and len(failures) == len(results):
        raise failures[0]
    for r in results:
        warnings += [Degradation("source_failed", f"{r.source}: {r.error.message}; its results are empty")] \
            if r.error else r.warnings
    return SearchOutcome({r.source: r.hits for r in results}).warned(*warnings, *plan_warnings)


async def _catalog_if_needed(query: SearchQuery, searxng: SearxngClient
                             ) -> tuple[EngineCatalog | None, list[str | Degradation]]:
    if not needs_catalog(query):
        return None, []
    try:
        return await searxng.catalog(), []
    except UpstreamError as e:
        return None, [Degradation("engine_catalog", f"could not read SearXNG's engine list ({e.message}); engines "
                                  "and categories were not checked")]


async def retrieve(plans: list[SourcePlan], limit: int, client: SearxngClient,
                   remaining_s: Callable[[], float]) -> list[SourceResult]:
    """Run every plan concurrently; each result holds that source's hits in SearXNG order.

    `remaining_s` tells the time left of the request's budget when each page is asked for.
    """
    if len(plans) == 1:  # the common search: awaited as is, without a task to create and schedule
        return [await _retrieve_source(plans[0], limit, client, remaining_s)]
    return list(await asyncio.gather(*(_retrieve_source(p, limit, client, remaining_s) for p in plans)))


async def _retrieve_source(plan: SourcePlan, limit: int, client: SearxngClient,
                           remaining_s: Callable[[], float]) -> SourceResult:
    result = SourceResult(plan.source)
    if plan.skip_reason:
        result.warnings.append(f"{plan.source}: {plan.skip_reason}; its results are empty")
        return result
    collected: list[Hit] = []
    next_page, exhausted, malformed, policy = 1, False, 0, client.pages
    while not exhausted and next_page <= policy.max_pages:
        wanted = math.ceil(max(limit - len(result.hits), 1) / policy.page_size)
        batch = range(next_page, min(next_page + wanted, policy.max_pages + 1))
        budget = remaining_s()
        if len(batch) == 1:  # one page (a limit within SEARXNG_PAGE_SIZE): awaited without the task gather makes
            pages: list[SearxngPage | BaseException] = [await _page_or_error(client, plan, batch[0], budget)]
        else:
            pages = await asyncio.gather(*(_page(client, plan, n, budget) for n in batch), return_exceptions=True)
        next_page = batch.stop
        for number, page in zip(batch, pages, strict=True):
            if isinstance(page, WispError):
                _record_failure(result, number, page)
                exhausted = True
                break
            if isinstance(page, BaseException):
                raise page
            _note_unresponsive(result, page)
            malformed += page.malformed
            if number == 1 and not page.hits and page.unresponsive:
                result.error = _all_engines_failed(plan.source, page)
            if not page.hits:
                exhausted = True
                break
            collected += page.hits
        result.hits = _kept(collected, plan)
        if len(result.hits) >= limit:
            break
    if malformed:
        result.warnings.append(f"{plan.source}: {malformed} SearXNG results had a malformed URL and were dropped")
    return result


async def _page(client: SearxngClient, plan: SourcePlan, number: int, budget_s: float) -> SearxngPage:
    return await client.search({**plan.params, "pageno": str(number)}, budget_s)


async def _page_or_error(client: SearxngClient, plan: SourcePlan, number: int, budget_s: float
                         ) -> SearxngPage | Exception:
    """The page, or its error returned as gather(return_exceptions=True) would."""
    try:
        return await _page(client, plan, number, budget_s)
    except Exception as e:
        return e


def _kept(hits: list[Hit], plan: SourcePlan) -> list[Hit]:
    kept = [h for h in dedupe(hits, source(plan.source).dedupe_key) if plan.filter.admits(h.url, h.published)]
    if plan.filter.time.sort_by_date:
        undated = datetime.min.replace(tzinfo=UTC)
        kept.sort(key=lambda h: h.published or undated, reverse=True)
    return kept


def _record_failure(result: SourceResult, page_number: int, error: WispError) -> None:
    if page_number == 1:
        result.error = error
    else:
        result.warnings.append(Degradation("searxng_page", f"{result.source}: SearXNG page {page_number} failed "
                                           f"({error.message}); fewer results than asked for"))


def _note_unresponsive(result: SourceResult, page: SearxngPage) -> None:
    engines = ", ".join(f"{name} ({reason})" for name, reason in page.unresponsive)
    warning = f"{result.source}: some SearXNG engines did not answer: {engines}; results may be incomplete"
    noted = Degradation("engines_unresponsive", warning)
    if page.unresponsive and noted not in result.warnings:
        result.warnings.append(noted)


def _all_engines_failed(source: str, page: SearxngPage) -> WispError:
    engines = ", ".join(f"{name} ({reason})" for name, reason in page.unresponsive)
    return UpstreamError(f"every SearXNG engine asked for {source} failed: {engines}")
