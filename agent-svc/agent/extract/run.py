"""One /v2/extract job: gather the pages (the URLs given, the sites named with `/*` as /v2/map lists them, and
Wisp's own search for the prompt when `enableWebSearch` is set or no URL is given), read them, and ask the LLM
for the JSON (answers.extraction: batches within RICH_CONTEXT_CHARS, merged). The request's wire format is
api/firecrawl/extract_wire.py's; the jobs and their status live in state/extracts/ (extract/jobs.py picks the store).

A job never raises for what it met: no page to read, no valid JSON from any batch, or the deadline passed is
a result with `error` (status "failed"); pages that fail beside others that did not are a warning.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from agent.answers.extraction import PageText
from agent.core.context import SearchContext
from agent.core.extract_job import ExtractJob, ExtractResult
from agent.core.pages import Extraction, Page
from agent.core.query import SearchQuery
from agent.errors import WispError
from agent.extract.settings import ExtractSettings
from agent.index.map.site_map import MapJob, PageReader, SiteMap, map_site
from agent.pages.loading import failed_pages
from agent.search.service import Search


@dataclass(frozen=True)
class Extractor:
    """The extraction stage, made once at start-up: its settings, and the search it reads the web with."""

    settings: ExtractSettings
    search: Search
    page_timeout_s: float  # SCRAPE_TIMEOUT_S: the pages are read, and a site mapped, within this


async def run_extract(job: ExtractJob, extractor: Extractor) -> ExtractResult:
    """The job's JSON and its sources, or why there is none; within the job's timeout."""
    try:
        async with asyncio.timeout(job.timeout_s):
            return await _extract(job, extractor)
    except TimeoutError:
        return ExtractResult(warnings=job.warnings,
                             error=f"the extraction did not finish within its timeout of {job.timeout_s:g} s")


async def _extract(job: ExtractJob, extractor: Extractor) -> ExtractResult:
    services = extractor.search.services
    ctx = services.context(job.timeout_s)
    deadline = time.monotonic() + job.timeout_s
    how = Extraction(job.main_only)
    urls, warnings = await _gathered(job, _request_pages(ctx, how), extractor)
    if not urls:
        return ExtractResult(warnings=warnings, error="no pages to read: " + "; ".join(warnings or ["none given"]))
    fetched_by = min(deadline, time.monotonic() + extractor.page_timeout_s)
    pages = await ctx.load_pages(urls, how, fetched_by)
    texts = [PageText(url, page.extracted.title, page.extracted.markdown) for url, page in pages.items()
             if _readable(page)]
    unread = failed_pages(pages, "could not be read")
    warnings += (unread.warning,) if unread else ()
    if not texts:
        return ExtractResult(warnings=warnings, error=f"none of the {len(urls)} pages could be read: "
                             f"{unread.warning if unread else 'they hold no text'}")
    extracted = await services.answers.extract(job.prompt, job.schema, job.system_prompt, texts,
                                               lambda: deadline - time.monotonic(), ctx.schemas)
    return ExtractResult(extracted.value, extracted.sources or {}, warnings + extracted.warnings, extracted.error)


async def _gathered(job: ExtractJob, read: PageReader, extractor: Extractor) -> tuple[list[str], tuple[str, ...]]:
    """The URLs to read, each once, and the warnings of what could not be gathered."""
    urls, warnings = list(job.urls), list(job.warnings)
    # at once: each map may take SCRAPE_TIMEOUT_S, and a few slow sites one after another would outlast the job
    sites = await asyncio.gather(*(_site(seed, job, read, extractor) for seed in job.sites))
    for seed, site in zip(job.sites, sites, strict=True):
        urls += [link.url for link in site.links] or [seed]  # as Firecrawl's: a site with no page found is its URL
        warnings += site.warnings
    if job.prompt and (job.web_search or not urls):
        found, problem = await _searched(job.prompt, extractor)
        urls += found
        warnings += [problem] if problem else []
    return list(dict.fromkeys(urls)), tuple(warnings)


async def _site(seed: str, job: ExtractJob, read: PageReader, extractor: Extractor) -> SiteMap:
    """The pages of the seed's site as /v2/map lists them without a search (the seed, its sitemaps, its pages'
    links, SearXNG's), at most `site_limit`, gathered within SCRAPE_TIMEOUT_S."""
    map_job = MapJob(seed, job.site_limit, extractor.page_timeout_s, subdomains=job.subdomains,
                     external=job.external)
    return await map_site(map_job, extractor.search.services.map_tools, read)


def _request_pages(ctx: SearchContext, how: Extraction) -> PageReader:
    """The request's pages as a map's reader: a page the map reads for its links is extracted as the job will
    read it, so that it is fetched and extracted once."""
    async def read(url: str, deadline: float) -> Page:
        return (await ctx.load_pages([url], how, deadline))[url]
    return read


async def _searched(prompt: str, extractor: Extractor) -> tuple[list[str], str | None]:
    """The URLs Wisp's search finds for the prompt (its first MAX_QUERY_CHARS), or why there are none."""
    search = extractor.search
    # keyword mode: its pages are read in full next, a ranked mode would fetch them twice
    query = SearchQuery(query=search.query_limit(prompt), limit=extractor.settings.extract_web_results,
                        timeout_ms=round(search.services.upstreams.searxng.timeout_s * 1000),
                        retrieval_mode="keyword")
    try:
        outcome = await search.run(search.prepared(query))
    except WispError as e:
        return [], f"the web search for the prompt failed: {e.message}"
    urls = [hit.url for bucket in outcome.buckets.values() for hit in bucket]
    return urls, None if urls else "the web search for the prompt found nothing"


def _readable(page: Page) -> bool:
    return page.extracted is not None and bool(page.extracted.markdown.strip())
