"""Fetch and extract the pages of some results within the fetch deadline; each result keeps what it got.

A page that fails, is blocked or is still loading at the deadline gets an error and its result falls back to
its SearXNG snippet (seed 000: per source, never the whole request).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from agent.context import Page, SearchContext
from agent.extract import ExtractionFailed, extract
from agent.fetch import Fetched


class WorkerPool:
    """Processes for extraction (CPU work under the GIL), replaced if one dies rather than broken for good."""

    def __init__(self, workers: int, make: Callable[[int], Executor] | None = None) -> None:
        self._workers = workers
        self._make = make or _spawned_processes
        self._pool = self._make(workers)

    async def run(self, fn: Callable, *args: object) -> object:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._make(self._workers)
            raise

    def submit(self, fn: Callable, *args: object) -> None:
        self._pool.submit(fn, *args)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _spawned_processes(workers: int) -> Executor:
    # forking a process that runs threads (asyncio, httpx) is unsafe; spawned workers start clean
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))


async def fetch_pages(urls: list[str], ctx: SearchContext, deadline: float | None = None, main_only: bool = True,
                      document: bool = False) -> dict[str, Page]:
    """The pages of `urls`, fetched once per request and extracted as asked (ranking wants main content only;
    scrapeOptions may want the whole body or Firecrawl's other formats)."""
    urls = list(dict.fromkeys(urls))
    missing = [u for u in urls if u not in ctx.pages]
    if missing:
        with ctx.timings.stage("fetch"):
            fetched = await ctx.services.fetcher.fetch_all(missing, ctx.fetch_deadline() if deadline is None
                                                           else deadline)
        ctx.pages.update({u: Page(f) for u, f in fetched.items()})
    stale = [u for u in urls if not ctx.pages[u].extracted_as(main_only, document)]
    if stale:
        with ctx.timings.stage("extract"):
            pages = await asyncio.gather(*(_extract_page(ctx, ctx.pages[u].fetched, main_only, document)
                                           for u in stale))
        ctx.pages.update(zip(stale, pages, strict=True))
    return {u: ctx.pages[u] for u in urls}


def snippet_warning(pages: dict[str, Page]) -> str | None:
    """One warning naming the pages whose snippets stood in, and why."""
    failed = [(url, page.error) for url, page in pages.items() if page.error]
    if not failed:
        return None
    reasons = "; ".join(f"{url} ({error})" for url, error in failed[:5])
    more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
    return f"{len(failed)} of {len(pages)} pages used their SearXNG snippet instead: {reasons}{more}"


async def _extract_page(ctx: SearchContext, fetched: Fetched, main_only: bool, document: bool) -> Page:
    try:
        return await ctx.services.cpu_pool.run(_extract, fetched, main_only, document)
    except BrokenProcessPool:
        return Page(fetched, error="the extraction worker died", mode=(main_only, document))


def _extract(fetched: Fetched, main_only: bool, document: bool) -> Page:
    mode = (main_only, document)
    if not fetched.ok:
        return Page(fetched, error=fetched.error, mode=mode)
    try:
        return Page(fetched, extract(fetched, main_only, document), mode=mode)
    except ExtractionFailed as e:
        return Page(fetched, error=str(e), mode=mode)
    except Exception as e:  # trafilatura, lxml or pypdf on a hostile page: this page's failure only
        return Page(fetched, error=f"extraction failed ({type(e).__name__}: {e})", mode=mode)
