import asyncio
from dataclasses import replace

import pytest

from agent.api.gate.admission import is_costly
from agent.core.query import SearchQuery
from agent.state.limits import Limits, over_cap, over_per_minute

PLAIN = SearchQuery(query="q", limit=3, retrieval_mode="keyword", search_type="fast")


@pytest.mark.parametrize(("change", "costly"), [
    ({}, False), ({"retrieval_mode": "hybrid"}, True), ({"retrieval_mode": "vector"}, True),
    ({"rerank": True}, True), ({"search_type": "rich"}, True), ({"scrape_formats": ["markdown"]}, True),
])
def test_costly_searches(change: dict, costly: bool) -> None:
    assert is_costly(replace(PLAIN, **change)) is costly


def test_the_refusals_use_firecrawls_wording_and_never_say_retry_after_0s() -> None:
    refusal = over_per_minute(61, 0.2, 1_767_225_600.0)
    assert refusal.status == 429 and refusal.headers() == {"Retry-After": "1"}
    assert refusal.message == ("Rate limit exceeded. Consumed (req/min): 61, Remaining (req/min): 0. "
                               "Please retry after 1s, resets at 2026-01-01T00:00:00+00:00")
    assert over_per_minute(4, 41.5, 1_767_225_600.0).retry_after_s == 42
    capped = over_cap(3, 3)
    assert capped.headers() == {"Retry-After": "1"} and capped.message.startswith(
        "Rate limit exceeded. Concurrent ranked or rich requests: 3, allowed: 3. Please retry after 1s")


class Store:
    def __init__(self, warning: str | None) -> None:
        self._warning = warning
        self.closed = False

    async def warning(self) -> str | None:
        return self._warning

    async def close(self) -> None:
        self.closed = True


def test_limits_report_their_stores_warning_and_close_it() -> None:
    assert asyncio.run(Limits().warnings()) == []
    assert asyncio.run(Limits(store=Store(None)).warnings()) == []
    store = Store("limits: Redis down")
    limits = Limits(store=store)
    assert asyncio.run(limits.warnings()) == ["limits: Redis down"]
    asyncio.run(limits.close())
    assert store.closed
