import asyncio
import time

import pytest

from agent.errors import NotImplementedYet, SearchTimeout
from agent.modes import MODES, get_mode
from agent.query import SearchQuery
from agent.search import run_search

from .fake_searxng import FakeSearxng


def run(fake: FakeSearxng, **fields):
    return asyncio.run(run_search(SearchQuery(**{"query": "q", "limit": 3, **fields}), fake.services()))


def test_keyword_mode_keeps_searxng_order_up_to_the_limit() -> None:
    outcome, ctx = run(FakeSearxng())
    assert [h.url for h in outcome.buckets["web"]] == ["https://general.test/0", "https://general.test/1",
                                                       "https://general.test/2"]
    assert set(ctx.timings.as_dict()) == {"searxng", "total"}


@pytest.mark.parametrize("mode", ["vector", "hybrid_vector"])
def test_modes_not_built_yet_say_so(mode: str) -> None:
    with pytest.raises(NotImplementedYet, match=f"retrieval_mode '{mode}' is not implemented yet"):
        get_mode(mode)
    assert list(MODES) == ["keyword", "semantic", "hybrid"]


def test_rich_search_type_is_not_built_yet() -> None:
    with pytest.raises(NotImplementedYet, match="search_type 'rich'"):
        run(FakeSearxng(), search_type="rich")


def test_the_requests_timeout_is_a_408_not_a_hang() -> None:
    started = time.monotonic()
    with pytest.raises(SearchTimeout, match="within the request's timeout of 300 ms"):
        run(FakeSearxng(delay_s=3), timeout_ms=300)
    assert time.monotonic() - started < 2


def test_searxng_is_told_the_time_left() -> None:
    fake = FakeSearxng()
    run(fake, timeout_ms=2000)
    assert 1.5 <= float(fake.requests[0]["timeout_limit"]) <= 1.75


def test_unsupported_formats_are_reported() -> None:
    outcome, _ = run(FakeSearxng(), scrape_formats=["summary", "json"])
    assert outcome.warnings == ["scrapeOptions.formats ['json', 'summary'] are not supported yet and were skipped"]
