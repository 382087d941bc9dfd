import asyncio

import pytest

from agent.errors import RateLimited
from agent.state.limits import WINDOW_S
from agent.state.limits.memory import ConcurrencyCap, RateLimiter, process_limits
from agent.state.settings import LimitsSettings

run = asyncio.run


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
    assert [run(limits.hit("a")) for _ in range(3)] == [None, None, None]
    clock.now += 20.2
    refusal = run(limits.hit("a"))
    assert isinstance(refusal, RateLimited) and refusal.status == 429
    assert refusal.retry_after_s == 40 and refusal.headers() == {"Retry-After": "40"}  # 39.8 s rounded up
    assert refusal.message == ("Rate limit exceeded. Consumed (req/min): 4, Remaining (req/min): 0. "
                               "Please retry after 40s, resets at 2026-01-01T00:01:00+00:00")
    clock.now += 39.7
    assert run(limits.hit("a")).retry_after_s == 1  # never "retry after 0s"
    clock.now += 0.1  # the window opened by the first request has ended
    assert [run(limits.hit("a")) for _ in range(3)] == [None, None, None]
    assert run(limits.hit("a")) is not None


def test_clients_are_counted_apart() -> None:
    clock = Clock()
    limits = limiter(1, clock)
    assert run(limits.hit("a")) is None and run(limits.hit("b")) is None
    assert run(limits.hit("a")) is not None and run(limits.hit("b")) is not None


def test_ended_windows_are_forgotten_so_memory_follows_the_clients_of_a_minute() -> None:
    clock = Clock()
    limits = limiter(5, clock)
    for n in range(1000):
        run(limits.hit(f"addr:{n}"))
    clock.now += WINDOW_S + 1
    run(limits.hit("addr:new"))
    assert list(limits._windows) == ["addr:new"]


def test_the_cap_refuses_one_more_and_frees_a_slot_on_release() -> None:
    cap = ConcurrencyCap(2)
    first, _ = run(cap.take("a")), run(cap.take("a"))
    with pytest.raises(RateLimited, match=r"^Rate limit exceeded\. Concurrent ranked or rich requests: 2, "
                                          r"allowed: 2\. Please retry after 1s") as refused:
        run(cap.take("a"))
    assert refused.value.headers() == {"Retry-After": "1"}
    run(cap.take("b"))  # another client's slots are its own
    run(first())
    run(cap.take("a"))
    with pytest.raises(RateLimited):
        run(cap.take("a"))


def test_released_clients_leave_nothing_behind() -> None:
    cap = ConcurrencyCap(1)
    run(run(cap.take("a"))())
    assert cap._running == {}


def test_process_limits_are_those_set() -> None:
    assert process_limits(LimitsSettings(rate_limit_per_min=0, ranked_concurrency_per_key=0)).per_minute is None
    limits = process_limits(LimitsSettings(rate_limit_per_min=5, ranked_concurrency_per_key=2))
    assert limits.per_minute.per_minute == 5 and limits.costly.per_client == 2 and limits.store is None
