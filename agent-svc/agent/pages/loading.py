"""Stage 3, fetch and extract: the pages of some results, each extracted as soon as it arrives, fetching
bounded by a deadline; each result keeps what it got.

A page that fails, is blocked, or is still loading or extracting at the deadline gets an error and its result
falls back to its SearXNG snippet (per source, never the whole request).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from agent.core.browsing import NO_BROWSER_WORK, BrowserWork
from agent.core.outcome import Cause, Degradation
from agent.core.pages import CacheUse, Extraction, Fetched, Page, PageError
from agent.core.timings import StageTimings
from agent.pages.extract import extract_page
from agent.pages.rendering import PageFetcher
from agent.pages.workers import WorkerDied, WorkerPool


class RequestPages:
    """One request's pages (core.context.PageLoader): each fetched once, extracted again only when a later
    stage asks for more than an earlier one got (Documents after ranking); `cache_use`: how the request uses the
    page cache; `work`: what it asks of the browser (a scrape's screenshot and actions)."""

    def __init__(self, fetcher: PageFetcher, pool: WorkerPool, cache_use: CacheUse,
                 work: BrowserWork = NO_BROWSER_WORK) -> None:
        self._fetcher, self._pool, self._cache_use, self._work = fetcher, pool, cache_use, work
        self._pages: dict[str, Page] = {}

    async def load(self, urls: Sequence[str], how: Extraction, deadline: float, timings: StageTimings
                   ) -> dict[str, Page]:
        """The pages of `urls` extracted as `how` says, a page extracting while the others still load.
        Timings: `fetch` is the wait for the last download (rendering included), `extract` the wait for extraction
        after it, and `render` the longest a page took in the browser."""
        urls = list(dict.fromkeys(urls))
        stale = [u for u in urls if u not in self._pages or not self._pages[u].serves(how)]
        if stale:
            started = time.perf_counter()
            fetched_at: list[float] = []
            pages = await asyncio.gather(*(self._page(url, how, deadline, fetched_at) for url in stale))
            done = time.perf_counter()
            last_fetch = max(fetched_at, default=done)
            timings.add("fetch", (last_fetch - started) * 1000)
            timings.add("extract", (done - last_fetch) * 1000)
            if rendered := [p.fetched.rendered.ms for p in pages if p.fetched.rendered]:
                timings.add("render", max(rendered))
            self._pages.update(zip(stale, pages, strict=True))
        return {u: self._pages[u] for u in urls}

    async def _page(self, url: str, how: Extraction, deadline: float, fetched_at: list[float]) -> Page:
        if known := self._pages.get(url):
            fetched = known.fetched
        else:
            fetched = await self._fetcher.fetch_before(url, deadline, cache_use=self._cache_use, work=self._work)
        fetched_at.append(time.perf_counter())
        return await extracted(fetched, how, self._pool, deadline)


async def extracted(fetched: Fetched, how: Extraction, pool: WorkerPool, deadline: float) -> Page:
    """A fetched page extracted in the worker pool by `deadline` (time.monotonic()); every failure is the
    page's error, never an exception. Searches and crawls extract through this one function."""
    if not how.reads(fetched):
        return Page(fetched, error=fetched.error, extraction=how)
    try:
        async with asyncio.timeout_at(deadline):
            return await pool.run(extract_page, fetched, how)
    except TimeoutError:  # not marked extracted: Documents, which may wait longer, extract it again
        return Page(fetched, error=PageError("timeout", "still extracting at the deadline"))
    except WorkerDied as e:
        return Page(fetched, error=PageError("unextracted", str(e)), extraction=how)


def failed_pages(pages: dict[str, Page], consequence: str = "used their SearXNG snippet instead",
                 cause: Cause = "snippets") -> Degradation | None:
    """One degradation naming the pages that failed, why, and what came of it (None when none failed)."""
    failed = [(url, _why(page)) for url, page in pages.items() if page.error]
    if not failed:
        return None
    reasons = "; ".join(f"{url} ({error})" for url, error in failed[:5])
    more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
    return Degradation(cause, f"{len(failed)} of {len(pages)} pages {consequence}: {reasons}{more}")


def _why(page: Page) -> str:
    """A failed page's error, and why the browser did not render it when it needed to."""
    unrendered = page.fetched.unrendered
    return f"{page.error}; not rendered: {unrendered}" if unrendered else str(page.error)
