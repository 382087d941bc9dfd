"""Fetching and extraction bounded by the deadline: a page that takes too long falls back to its snippet."""

import asyncio
import time

import httpx

from agent.core.pages import CacheUse, Extraction, Fetched, Page, PageError
from agent.core.timings import StageTimings
from agent.pages.cache import PageCache
from agent.pages.fetch import Fetcher, FetchPolicy
from agent.pages.loading import RequestPages, failed_pages
from agent.pages.rendering import PageFetcher
from agent.pages.ssrf import Allowlist
from agent.state.page_cache.memory import MemoryStore

from ..fake_searxng import FakeSearxng, InlinePool, replaced
from .test_fetch import CountingSite

URL = "https://general.test/slow.html"
PAGE = "<html><body><article><p>" + "A page that would take long to extract. " * 20 + "</p></article></body></html>"


class StuckPool:
    """A worker pool whose extractions never finish, as one of a 5 MB page would not in time."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, fn, *args):
        self.started.set()
        await asyncio.Event().wait()


def test_a_page_still_extracting_at_the_deadline_gets_an_error_and_the_request_goes_on() -> None:
    async def main():
        services = replaced(FakeSearxng(total=1).services(pages={URL: PAGE}), cpu_pool=StuckPool())
        ctx = services.context(30)
        # the deadline leaves the in-memory fetch ample time, however loaded the machine, to hand the page to the
        # extraction that never ends; without the deadline's bound this would wait forever
        pages = await asyncio.wait_for(
            ctx.load_pages([URL], Extraction(chunk_chars=1200), time.monotonic() + 1.0), timeout=30)
        return services.cpu_pool, pages[URL]

    pool, page = asyncio.run(main())
    assert pool.started.is_set()
    assert page.error == PageError("timeout", "still extracting at the deadline") and page.extracted is None
    assert page.extraction is None  # so Documents, which may wait longer, extract it again


def test_a_page_extracted_in_time_has_its_chunks() -> None:
    async def main():
        services = FakeSearxng(total=1).services(pages={URL: PAGE})
        ctx = services.context(30)
        return (await ctx.load_pages([URL], Extraction(chunk_chars=1200)))[URL]

    page = asyncio.run(main())
    assert page.error is None and page.extracted.chunks


def test_a_later_request_with_a_max_age_loads_its_pages_from_the_cache() -> None:
    """A repeated ranked search skips the network for the pages fetched within its maxAge (or the service's)."""
    site, urls = CountingSite(), ["http://127.0.0.1/a.html", "http://127.0.0.1/b.html"]

    async def requests(*uses: CacheUse) -> list[dict]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(site.handle)) as http:
            fetcher = PageFetcher(Fetcher(http, FetchPolicy(Allowlist.parse("127.0.0.1"), 10_000, 3, "test"),
                                          PageCache(MemoryStore(10_000_000), 60_000)), None, "never")
            return [await RequestPages(fetcher, InlinePool(), use).load(urls, Extraction(), time.monotonic() + 5,
                                                                         StageTimings()) for use in uses]

    first, second, default, fresh = asyncio.run(requests(CacheUse(0), CacheUse(60_000), CacheUse(), CacheUse(0)))
    assert [p.fetched.cache_state for p in first.values()] == [None, None]
    assert [p.fetched.cache_state for p in second.values()] == ["hit", "hit"]
    assert [p.fetched.cache_state for p in default.values()] == ["hit", "hit"]  # the service's 60 s
    assert [p.fetched.cache_state for p in fresh.values()] == [None, None] and len(site.requests) == 4
    assert [p.fetched.body for p in second.values()] == [p.fetched.body for p in first.values()]


def test_a_failed_page_that_was_not_rendered_says_why_beside_its_own_error() -> None:
    shell = Fetched("https://app.test/", "https://app.test/", 200, "text/html", b"<div id=app></div><script></script>",
                    unrendered="still rendering at the deadline")
    pages = {"https://app.test/": Page(shell, error=PageError("unextracted", "no text in the page")),
             "https://docs.test/": Page(Fetched("https://docs.test/", "https://docs.test/", 200, "text/html"))}
    degradation = failed_pages(pages)
    assert degradation is not None and degradation.cause == "snippets"
    assert degradation.warning == ("1 of 2 pages used their SearXNG snippet instead: https://app.test/ (no text in the "
                                   "page; not rendered: still rendering at the deadline)")
