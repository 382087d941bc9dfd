"""The process's services, made once at start-up: the upstream clients, the page fetcher and its extraction workers,
the index's writer, the per-host politeness gate, the answer stage, and the tools of crawls and maps. Only the API
and the request services (search/, extract/) see this whole set; every stage below gets the few parts it uses.
No setting is here: each stage was made with its own section."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.answers.rich import Answers
from agent.core.browsing import NO_BROWSER_WORK, BrowserWork
from agent.core.context import Budget, SearchContext, Spans
from agent.core.pages import SERVICE_CACHE_USE, CacheUse
from agent.index.crawl.crawler import CrawlTools
from agent.index.ingest import Ingest
from agent.index.map.site_map import MapTools
from agent.pages.loading import RequestPages
from agent.pages.rendering import PageFetcher
from agent.pages.workers import WorkerPool
from agent.state.politeness import Gate
from agent.upstream.clients import Upstreams


@dataclass(frozen=True)
class Services:
    upstreams: Upstreams
    fetcher: PageFetcher
    cpu_pool: WorkerPool  # page extraction, off the event loop and out of its GIL
    ingest: Ingest  # pages into the vector index
    gate: Gate  # per-host politeness: every crawl, batch scrape and map of the process waits its turn here
    schema_pool: WorkerPool  # callers' JSON Schemas applied to the LLM's JSON: apart, so no crawl delays them
    answers: Answers  # rich answers and the LLM's reading of pages
    crawl_tools: CrawlTools
    map_tools: MapTools
    spans: Spans = field(default_factory=Spans)  # what each request's budget is made of

    def context(self, timeout_s: float, on_text: Callable[[str], None] | None = None,
                cache_use: CacheUse = SERVICE_CACHE_USE, work: BrowserWork = NO_BROWSER_WORK) -> SearchContext:
        """A new request's context: its budget from now, and its own pages (`cache_use`: from the page cache when
        the request allows; `work`: what the browser does on them)."""
        return SearchContext(Budget.of(self.spans, timeout_s),
                             RequestPages(self.fetcher, self.cpu_pool, cache_use, work), self.schema_pool,
                             on_text=on_text)
