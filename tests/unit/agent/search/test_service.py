import asyncio
import time

import pytest

from agent.app import create_app
from agent.config import Settings
from agent.core.query import SearchQuery
from agent.errors import BadRequest, SearchTimeout
from agent.ranking.modes import MODES
from agent.search.service import SEARCH_TYPES

from ..fake_searxng import FakeSearxng


def run(fake: FakeSearxng, **fields):
    search = fake.search()
    return asyncio.run(search.run(search.prepared(SearchQuery(**{"query": "q", "limit": 3, **fields}))))


def test_keyword_mode_keeps_searxng_order_up_to_the_limit() -> None:
    outcome = run(FakeSearxng())
    assert [h.url for h in outcome.buckets["web"]] == ["https://general.test/0", "https://general.test/1",
                                                       "https://general.test/2"]
    assert set(outcome.timings) == {"searxng", "total"}


@pytest.mark.parametrize(("field", "value", "registry"), [("retrieval_mode", "neural", MODES),
                                                          ("search_type", "deep", SEARCH_TYPES)])
def test_names_outside_the_registries_are_a_400_listing_them(field: str, value: str, registry: dict) -> None:
    with pytest.raises(BadRequest, match=f"unknown {field} '{value}'; available: {', '.join(registry)}$"):
        run(FakeSearxng(), **{field: value})


def test_the_query_and_domain_bounds_hold_whichever_api_built_the_query() -> None:
    search = FakeSearxng().search(max_query_chars=10, max_domains=2)
    with pytest.raises(BadRequest, match=r"^the last user message has 11 characters; at most 10 are accepted$"):
        search.prepared(SearchQuery("x" * 11, 3), "the last user message")
    with pytest.raises(BadRequest, match=r"^3 domains to include or exclude; at most 2 are accepted$"):
        search.prepared(SearchQuery("x", 3, exclude_domains=["a.test", "b.test", "c.test"]))
    assert search.prepared(SearchQuery("x" * 10, 3, include_domains=["a.test", "b.test"])).query == "x" * 10


def test_settings_are_checked_against_the_registries_when_they_are_read() -> None:
    """A typo fails the start, naming the variable (pydantic names the field, which is the variable's name)."""
    FakeSearxng().search(default_retrieval_mode="hybrid", hybrid_fusion_weights={"score": 1, "title": 0.2})
    for bad, message in [({"default_retrieval_mode": "neural"}, "DEFAULT_RETRIEVAL_MODE 'neural' is not registered"),
                         ({"default_search_type": "deep"}, "DEFAULT_SEARCH_TYPE 'deep' is not registered")]:
        with pytest.raises(ValueError, match=message):
            create_app(Settings.of(**bad))
    for bad, message in [({"semantic_fusion": "magic"}, r"semantic_fusion\n.*'magic' is not a registered fusion"),
                         ({"hybrid_fusion_weights": {"clicks": 1.0}},
                          r"hybrid_fusion_weights\n.*'clicks' not a page feature")]:
        with pytest.raises(ValueError, match=message):
            Settings.of(**bad)


def test_the_requests_timeout_is_a_408_not_a_hang() -> None:
    started = time.monotonic()
    with pytest.raises(SearchTimeout, match="within the request's timeout of 300 ms"):
        run(FakeSearxng(delay_s=60), timeout_ms=300)
    assert time.monotonic() - started < 30  # the timeout ended it, long before SearXNG would have answered


def test_searxng_is_told_the_time_left() -> None:
    fake = FakeSearxng()
    run(fake, timeout_ms=2000)
    assert 1.5 <= float(fake.requests[0]["timeout_limit"]) <= 1.75


def test_unsupported_formats_are_reported() -> None:
    outcome = run(FakeSearxng(), scrape_formats=["screenshot", "branding"])
    assert outcome.warnings == ("scrapeOptions.formats ['branding', 'screenshot'] are not supported yet and were "
                                "skipped",)
