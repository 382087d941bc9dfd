"""Fetching and extraction bounded by the deadline: a page that takes too long falls back to its snippet."""

import asyncio
import time

from agent.core.pages import Extraction, PageError

from ..fake_searxng import FakeSearxng, replaced

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
        pages = await asyncio.wait_for(  # without the deadline's bound this would wait forever
            ctx.load_pages([URL], Extraction(chunk_chars=1200), time.monotonic() + 0.2), timeout=5)
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
