"""Stage 3, fetch and extract: the pages of some results, each extracted as soon as it arrives, fetching
bounded by the fetch deadline; each result keeps what it got.

A page that fails, is blocked, or is still loading or extracting at the deadline gets an error and its result
falls back to its SearXNG snippet (seed 000: per source, never the whole request).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from agent import metrics
from agent.core.pages import Extraction, Fetched, Page
from agent.pages.extract import extract_page
from agent.pages.workers import WorkerDied

if TYPE_CHECKING:  # the search context holds the pages
    from agent.core.context import SearchContext


async def fetch_pages(urls: list[str], ctx: SearchContext, how: Extraction, deadline: float | None = None
                      ) -> dict[str, Page]:
    """The pages of `urls` extracted as `how` says; each is fetched once per request (`deadline`: when
    fetching stops, by default the fetch deadline), and a page extracts while the others still load.

    Timings: `fetch` is the wait for the last download, `extract` the wait for extraction after it.
    """
    urls = list(dict.fromkeys(urls))
    stale = [u for u in urls if u not in ctx.pages or not ctx.pages[u].serves(how)]
    if stale:
        started = time.perf_counter()
        fetched_at: list[float] = []
        until = ctx.fetch_deadline() if deadline is None else deadline
        pages = await asyncio.gather(*(_page(ctx, url, how, until, fetched_at) for url in stale))
        done = time.perf_counter()
        last_fetch = max(fetched_at, default=done)
        ctx.timings.add("fetch", (last_fetch - started) * 1000)
        ctx.timings.add("extract", (done - last_fetch) * 1000)
        ctx.pages.update(zip(stale, pages, strict=True))
    return {u: ctx.pages[u] for u in urls}


def failure_warning(pages: dict[str, Page], consequence: str = "used their SearXNG snippet instead",
                    cause: metrics.Cause = "snippets") -> str | None:
    """One warning naming the pages that failed, why, and what came of it; counted as a degradation."""
    failed = [(url, page.error) for url, page in pages.items() if page.error]
    if not failed:
        return None
    metrics.degraded(cause)
    reasons = "; ".join(f"{url} ({error})" for url, error in failed[:5])
    more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
    return f"{len(failed)} of {len(pages)} pages {consequence}: {reasons}{more}"


async def _page(ctx: SearchContext, url: str, how: Extraction, deadline: float, fetched_at: list[float]) -> Page:
    known = ctx.pages.get(url)
    fetched = known.fetched if known else await ctx.services.fetcher.fetch_before(url, deadline)
    fetched_at.append(time.perf_counter())
    return await _extract(ctx, fetched, how, deadline)


async def _extract(ctx: SearchContext, fetched: Fetched, how: Extraction, deadline: float) -> Page:
    if not fetched.ok:
        return Page(fetched, error=fetched.error, extraction=how)
    try:
        async with asyncio.timeout_at(deadline):
            return await ctx.services.cpu_pool.run(extract_page, fetched, how)
    except TimeoutError:  # not marked extracted: Documents, which may wait longer, extract it again
        return Page(fetched, error="still extracting at the deadline")
    except WorkerDied as e:
        return Page(fetched, error=str(e), extraction=how)
