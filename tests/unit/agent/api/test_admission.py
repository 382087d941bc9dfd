from dataclasses import replace

import pytest

from agent.api.admission import WINDOW_S, ConcurrencyCap, RateLimiter, is_costly
from agent.core.query import SearchQuery
from agent.errors import RateLimited


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def limiter(per_minute: int, clock: Clock) -> RateLimiter:
    return RateLimiter(per_minute, clock=clock, wall_clock=lambda: 1_767_225_600.0 + clock.now - 1000.0)


def test_a_client_gets_its_limit_then_a_429_until_its_window_ends() -> None:
    clock = Clock()
    limits = limiter(3, clock)
    assert [limits.hit("a") for _ in range(3)] == [None, None, None]
    clock.now += 20.2
    refusal = limits.hit("a")
    assert isinstance(refusal, RateLimited) and refusal.status == 429
    assert refusal.retry_after_s == 40 and refusal.headers() == {"Retry-After": "40"}  # 39.8 s rounded up
    assert refusal.message == ("Rate limit exceeded. Consumed (req/min): 4, Remaining (req/min): 0. "
                               "Please retry after 40s, resets at 2026-01-01T00:01:00+00:00")
    clock.now += 39.7
    assert limits.hit("a").retry_after_s == 1  # never "retry after 0s"
    clock.now += 0.1  # the window opened by the first request has ended
    assert [limits.hit("a") for _ in range(3)] == [None, None, None]
    assert limits.hit("a") is not None


def test_clients_are_counted_apart() -> None:
    clock = Clock()
    limits = limiter(1, clock)
    assert limits.hit("a") is None and limits.hit("b") is None
    assert limits.hit("a") is not None and limits.hit("b") is not None


def test_ended_windows_are_forgotten_so_memory_follows_the_clients_of_a_minute() -> None:
    clock = Clock()
    limits = limiter(5, clock)
    for n in range(1000):
        limits.hit(f"addr:{n}")
    clock.now += WINDOW_S + 1
    limits.hit("addr:new")
    assert list(limits._windows) == ["addr:new"]


def test_the_cap_refuses_one_more_and_frees_a_slot_on_release() -> None:
    cap = ConcurrencyCap(2)
    first, _ = cap.take("a"), cap.take("a")
    with pytest.raises(RateLimited, match=r"^Rate limit exceeded\. Concurrent ranked or rich requests: 2, "
                                          r"allowed: 2\. Please retry after 1s") as refused:
        cap.take("a")
    assert refused.value.headers() == {"Retry-After": "1"}
    cap.take("b")  # another client's slots are its own
    first()
    cap.take("a")
    with pytest.raises(RateLimited):
        cap.take("a")


def test_released_clients_leave_nothing_behind() -> None:
    cap = ConcurrencyCap(1)
    cap.take("a")()
    assert cap._running == {}


PLAIN = SearchQuery(query="q", limit=3, retrieval_mode="keyword", search_type="fast")


@pytest.mark.parametrize(("change", "costly"), [
    ({}, False), ({"retrieval_mode": "hybrid"}, True), ({"retrieval_mode": "vector"}, True),
    ({"rerank": True}, True), ({"search_type": "rich"}, True), ({"scrape_formats": ["markdown"]}, True),
])
def test_costly_searches(change: dict, costly: bool) -> None:
    assert is_costly(replace(PLAIN, **change)) is costly
