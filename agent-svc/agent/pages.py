"""Fetch and extract the pages of some results within the fetch deadline; each result keeps what it got.

A page that fails, is blocked or is still loading at the deadline gets an error and its result falls back to
its SearXNG snippet (seed 000: per source, never the whole request).
"""

from __future__ import annotations

import asyncio

from agent.context import Page, SearchContext
from agent.extract import ExtractionFailed, extract
from agent.fetch import Fetched


async def fetch_pages(urls: list[str], ctx: SearchContext, main_only: bool = True, want_html: bool = False,
                      deadline: float | None = None) -> dict[str, Page]:
    """The pages of `urls`, fetched and extracted once per request (later calls reuse them)."""
    missing = [u for u in dict.fromkeys(urls) if u not in ctx.pages]
    if missing:
        with ctx.timings.stage("fetch"):
            fetched = await ctx.services.fetcher.fetch_all(missing, deadline or ctx.fetch_deadline())
        with ctx.timings.stage("extract"):
            pages = await asyncio.gather(*(extract_page(ctx, f, main_only, want_html) for f in fetched.values()))
        ctx.pages.update(zip(fetched, pages, strict=True))
    return {u: ctx.pages[u] for u in urls}


async def extract_page(ctx: SearchContext, fetched: Fetched, main_only: bool = True, want_html: bool = False
                       ) -> Page:
    """Extraction is CPU work under the GIL: it runs in the process pool, so pages extract in parallel."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(ctx.services.cpu_pool, _extract, fetched, main_only, want_html)


def snippet_warning(pages: dict[str, Page]) -> str | None:
    """One warning naming the pages whose snippets stood in, and why."""
    failed = [(url, page.error) for url, page in pages.items() if page.error]
    if not failed:
        return None
    reasons = "; ".join(f"{url} ({error})" for url, error in failed[:5])
    more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
    return f"{len(failed)} of {len(pages)} pages used their SearXNG snippet instead: {reasons}{more}"


def _extract(fetched: Fetched, main_only: bool, want_html: bool) -> Page:
    if not fetched.ok:
        return Page(fetched, error=fetched.error)
    try:
        return Page(fetched, extract(fetched, main_only, want_html))
    except ExtractionFailed as e:
        return Page(fetched, error=str(e))
