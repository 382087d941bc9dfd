"""One crawl, or batch scrape, from its seeds to its last page: the processor that owns the flow (crawl/__init__.py),
run by this process (`run_crawl`) or page by page on the replicas' queue (`seed`, `visit_claimed`: queued.py).

Each page: robots.txt → its host's turn (politeness) → fetch (the SSRF guard on every hop) → extraction in the
worker pool → the text into the vector index (ingest.py) → its links within the scope queued one hop deeper →
the Firecrawl Document kept for GET /v2/crawl/{id}. A page that fails is recorded with its error (GET
/v2/crawl/{id}/errors) and costs only itself; the index failing costs no page either, and the status's
warning says how many were not indexed.

A batch scrape is a crawl of its seeds alone (options.batch): no robots.txt, no sitemap, no link followed,
nothing indexed, and a page the site answered with an error status is a Document with that status and the
error page's content, as /v2/scrape gives it, not an error.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent.core.crawl_options import CrawlOptions
from agent.core.formats import DOCUMENT_FORMATS, needs_whole_page
from agent.core.pages import Extraction, Page
from agent.errors import Degraded
from agent.index.crawl.robots import RobotsCache
from agent.index.crawl.scope import Scope, url_key
from agent.index.crawl.settings import CrawlSettings
from agent.index.crawl.sitemaps import sitemap_candidates, sitemap_urls
from agent.index.ingest import Ingest
from agent.pages.documents import document
from agent.pages.loading import extracted
from agent.pages.rendering import PageFetcher
from agent.pages.workers import WorkerPool
from agent.state.jobs import COMPLETED, RUNNING, Job, QueuedPage
from agent.state.jobs.redis import Store
from agent.state.politeness import Gate

# the code of a page's failure in GET /v2/crawl/{id}/errors; other failures are SCRAPE_FAILED
_ERROR_CODES = {"timeout": "SCRAPE_TIMEOUT", "dns": "SCRAPE_BLOCKED", "blocked": "SCRAPE_BLOCKED",
                "http": "SCRAPE_HTTP_ERROR"}


@dataclass(frozen=True)
class CrawlTools:
    """What crawls use, given once at start-up."""

    settings: CrawlSettings  # the crawl's own
    fetcher: PageFetcher
    cpu_pool: WorkerPool  # the extraction workers that searches use too
    ingest: Ingest
    gate: Gate  # the process's one: crawls, batch scrapes and maps are polite to a host together


@dataclass(frozen=True)
class Crawl:
    """What one running crawl holds."""

    job: Job
    tools: CrawlTools
    store: Store
    scope: Scope
    robots: RobotsCache
    gate: Gate
    extract_slots: asyncio.Semaphore  # worker processes crawls may take: searches extract in the same pool

    @property
    def job_id(self) -> str:
        return self.job.id

    @property
    def options(self) -> CrawlOptions:
        return self.job.options

    def key(self, url: str) -> str:
        return url_key(url, self.options.ignore_query, self.options.dedupe_similar)


def crawl_of(job: Job, tools: CrawlTools, store: Store, extract_slots: asyncio.Semaphore | None = None) -> Crawl:
    """What visiting `job`'s pages takes. `extract_slots`: shared by every crawl, so that crawls leave extraction
    workers to searches; the tools' gate keeps them polite to a host together."""
    return Crawl(job, tools, store, Scope(job.options, tools.settings.crawl_junk_paths),
                 RobotsCache(tools.fetcher, tools.settings.crawl_page_timeout_s),
                 tools.gate, extract_slots or asyncio.Semaphore(1))


async def run_crawl(job: Job, tools: CrawlTools, store: Store, extract_slots: asyncio.Semaphore | None = None
                    ) -> None:
    """Crawl until no page is left queued, or until CRAWL_MAX_DURATION_S from the job's start, then mark it
    completed (a cancelled task stops at once)."""
    settings = tools.settings
    crawl = crawl_of(job, tools, store, extract_slots)
    await store.run(store.requeue_unfinished, job.id)  # pages a killed run had in flight
    await seed(crawl)
    ends = _ends(job, settings)
    while time.time() < ends:
        await _visit_queued(crawl, ends)
        if await store.run(store.finish, job.id, COMPLETED, None, True):
            return
        if (await store.run(store.job, job.id)).status != RUNNING:
            return  # cancelled while its last pages were visited
        # else pages were appended (a batch scrape's appendToId) as the last ones finished: visit them too
    await stop_at_time_limit(crawl)


async def seed(crawl: Crawl) -> None:
    """Queue the job's seeds and, unless it skips them, its sitemap's pages; once."""
    if not crawl.job.seeded:
        await _seed(crawl)
        await crawl.store.run(crawl.store.mark_seeded, crawl.job_id)


async def visit_claimed(crawl: Crawl, key: str) -> None:
    """One page of a crawl run as a queue of tasks (one per page, on any replica): claim it, visit it, then end
    the job if no page is left; past CRAWL_MAX_DURATION_S, end the job instead."""
    store = crawl.store
    if time.time() >= _ends(crawl.job, crawl.tools.settings):
        await stop_at_time_limit(crawl)
        return
    async with _job_slot(crawl):
        page = await store.run(store.claim, crawl.job_id, key)
        if page is not None:
            await _visit(crawl, page)
    await store.run(store.finish, crawl.job_id, COMPLETED, None, True)


def _job_slot(crawl: Crawl) -> AbstractAsyncContextManager[None]:
    """A crawl's maxConcurrency, over every replica visiting its pages (the gate's, named after the job)."""
    if not crawl.options.max_concurrency:
        return nullcontext()
    return crawl.gate.turn(f"crawl:{crawl.job_id}", 0.0, crawl.options.max_concurrency)


def _ends(job: Job, settings: CrawlSettings) -> float:
    return job.created + settings.crawl_max_duration_s


async def stop_at_time_limit(crawl: Crawl) -> None:
    """End the job, past CRAWL_MAX_DURATION_S from its start, saying how many pages it left."""
    store, max_duration_s = crawl.store, crawl.tools.settings.crawl_max_duration_s
    left = await store.run(store.queued, crawl.job_id)
    note = f"stopped after CRAWL_MAX_DURATION_S ({max_duration_s:g} s) with {left} pages not visited" if left else None
    await store.run(store.finish, crawl.job_id, COMPLETED, note)


async def _visit_queued(crawl: Crawl, ends: float) -> None:
    """Visit the queued pages, a few at once, until none is left or the time is up."""
    store, job = crawl.store, crawl.job
    settings = crawl.tools.settings
    concurrency = min(job.options.max_concurrency or settings.crawl_concurrency, settings.crawl_concurrency)
    running: set[asyncio.Task] = set()
    try:
        while time.time() < ends:
            if len(running) < concurrency:
                for page in await store.run(store.take, job.id, concurrency - len(running)):
                    running.add(asyncio.create_task(_visit(crawl, page)))
            if not running:
                break
            finished, running = await asyncio.wait(running, timeout=max(ends - time.time(), 0),
                                                   return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                task.result()  # a bug in a visit fails the job (the manager records it), not silently
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


async def _seed(crawl: Crawl) -> None:
    options = crawl.options
    seeds = [(crawl.key(url), url, 0) for url in options.seeds]
    await crawl.store.run(crawl.store.add_pages, crawl.job_id, seeds, options.limit)
    if options.sitemap == "skip" or (options.max_depth == 0 and options.sitemap != "only"):
        return
    robots = await crawl.robots.of(options.seed)
    listed = await sitemap_urls(crawl.tools.fetcher, sitemap_candidates(options.seed, robots.sitemaps()),
                                options.limit * 2, crawl.tools.settings.crawl_page_timeout_s)
    pages = [(crawl.key(url), url, 1) for url in listed if crawl.scope.follows(url) is None]
    await crawl.store.run(crawl.store.add_pages, crawl.job_id, pages, options.limit)


async def _visit(crawl: Crawl, queued: QueuedPage) -> None:
    store, job_id, options = crawl.store, crawl.job_id, crawl.options
    robots = None if options.batch else await crawl.robots.of(queued.url)
    if robots is not None and not options.ignore_robots and not robots.allows(queued.url):
        await store.run(store.failed, job_id, queued.key, "blocked by robots.txt", "ROBOTS_BLOCKED", "blocked")
        return
    page = await _page(crawl, queued.url, robots.crawl_delay_s() if robots is not None else 0.0)
    if page.extracted is None and not (options.batch and page.answered):
        error = str(page.error or "no text could be extracted")
        await store.run(store.failed, job_id, queued.key, error, _ERROR_CODES.get(page.failure, "SCRAPE_FAILED"))
        return
    if page.extracted is None:
        await store.run(store.done, job_id, queued.key, document(queued.url, "", "", page, []))
        return
    if not options.batch:
        await _index(crawl, page)
    # its links before the page is done: while it is being fetched no visit elsewhere can find the job drained
    # and end it, and a visit handed over after a crash adds them again (known pages are not queued twice)
    if _follows_links(crawl.options, queued.depth):
        links = [(crawl.key(url), url, queued.depth + 1) for url in page.extracted.links
                 if crawl.scope.follows(url) is None]
        await store.run(store.add_pages, job_id, list({k: (k, u, d) for k, u, d in links}.values()),
                        crawl.options.limit)
    formats = [f for f in crawl.options.formats if f in DOCUMENT_FORMATS]
    await store.run(store.done, job_id, queued.key,
                    document(queued.url, page.extracted.title, page.extracted.description, page, formats))


async def _page(crawl: Crawl, url: str, robots_delay_s: float) -> Page:
    settings = crawl.tools.settings
    timeout_s = crawl.options.page_timeout_s or settings.crawl_page_timeout_s
    delay = max(crawl.options.delay_s or 0.0, robots_delay_s, settings.crawl_host_delay_s)
    async with crawl.gate.turn(urlsplit(url).netloc, delay):
        fetched = await crawl.tools.fetcher.fetch_before(url, time.monotonic() + timeout_s,
                                                         cache_use=crawl.options.cache_use)
    how = Extraction(main_only=crawl.options.main_only, document=needs_whole_page(crawl.options.formats),
                     error_pages=crawl.options.batch)
    if not how.reads(fetched):
        return Page(fetched, error=fetched.error, extraction=how)
    # the wait for a slot, behind other pages, is not this page's extraction time; a timeout kills the worker
    async with crawl.extract_slots:
        return await extracted(fetched, how, crawl.tools.cpu_pool, time.monotonic() + timeout_s)


async def _index(crawl: Crawl, page: Page) -> None:
    """The page into the vector index; a failure is counted on the job, and the crawl goes on."""
    try:
        report = await crawl.tools.ingest.page(page)
    except Degraded as e:
        await crawl.store.run(crawl.store.indexed, crawl.job_id, 0, 0, 0, str(e))
        return
    await crawl.store.run(crawl.store.indexed, crawl.job_id, len(report.get("indexed") or []),
                          len(report.get("unchanged") or []), int(report.get("chunks") or 0), None)


def _follows_links(options: CrawlOptions, depth: int) -> bool:
    return options.sitemap != "only" and (options.max_depth is None or depth < options.max_depth)
