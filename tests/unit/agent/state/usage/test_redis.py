"""The replicas' usage counts on a real redis-server: credits counted through either replica add up on both, the
requests in flight stay each replica's, the clients kept are bounded, and Redis out of reach or behind never fails
a request: a credit lost is counted and logged, and a read is a 503."""

import asyncio
import logging
from collections.abc import Awaitable, Callable

import pytest
import redis
from redis.asyncio import Redis

from agent.errors import SharedStateUnavailable
from agent.state.usage import Counted
from agent.state.usage import redis as usage_redis
from agent.state.usage.redis import RedisUsage

from ...api.gate.test_usage import Inner, metering, request
from ...test_metrics import Moved

LOST = "wisp_agent_usage_credits_lost_total"
UNREACHABLE = "redis://127.0.0.1:1/0"


def replicas(url: str, steps: Callable[[RedisUsage, RedisUsage], Awaitable[None]], max_clients: int = 100) -> None:
    """Two replicas' counts on the Redis at `url`, each with a client of its own; their credits drained after."""
    async def main() -> None:
        clients = [Redis.from_url(url, socket_connect_timeout=1) for _ in range(2)]
        usages = [RedisUsage(client, max_clients) for client in clients]
        try:
            await steps(*usages)
        finally:
            for usage, client in zip(usages, clients, strict=True):
                await usage.drain()
                await client.aclose()
    asyncio.run(main())


def test_credits_through_either_replica_add_up_on_both(redis_url: str) -> None:
    async def steps(one: RedisUsage, other: RedisUsage) -> None:
        for usage in (one, other, one):
            await request(metering(Inner(usage), usage))
        await request(metering(Inner(other), other), client="key:b")
        await request(metering(Inner(other, status=429), other))  # refused: no credit
        await request(metering(Inner(one), one), "GET", "/v2/crawl/active")  # a read starts nothing
        for usage in (one, other):
            await usage.drain()
        mine, theirs = await one.counted("key:a"), await other.counted("key:a")
        assert mine == theirs and mine.credits == 3 and mine.started <= mine.last_success
        assert (await one.counted("key:b")).credits == 1
        nobody = await other.counted("key:c")
        assert nobody.credits == 0 and nobody.last_success is None and nobody.started == mine.started
    replicas(redis_url, steps)


def test_the_period_starts_at_the_first_count_or_read_and_stays(redis_url: str) -> None:
    async def steps(one: RedisUsage, other: RedisUsage) -> None:
        first = (await one.counted("key:a")).started
        await asyncio.sleep(0.05)
        await request(metering(Inner(other), other))
        await other.drain()
        assert (await other.counted("key:a")).started == first < (await other.counted("key:a")).last_success
    replicas(redis_url, steps)


def test_a_replica_whose_clock_lags_moves_neither_the_last_success_back_nor_the_start_forward(redis_url: str) -> None:
    async def main() -> None:
        client = Redis.from_url(redis_url)
        ahead, behind = RedisUsage(client, clock=lambda: 2000.0), RedisUsage(client, clock=lambda: 1000.0)
        for usage in (ahead, behind):
            await request(metering(Inner(usage), usage))
            await usage.drain()
        assert await ahead.counted("key:a") == Counted(1000.0, 2, 2000.0)
        await client.aclose()
    asyncio.run(main())


def test_requests_in_flight_are_each_replicas_own(redis_url: str) -> None:
    async def steps(one: RedisUsage, other: RedisUsage) -> None:
        seen_elsewhere: list[int] = []

        class Peeking(Inner):
            async def __call__(self, scope, receive, send) -> None:
                seen_elsewhere.append(other.in_flight("key:a"))
                await super().__call__(scope, receive, send)

        inner = Peeking(one)
        await request(metering(inner, one))
        assert inner.in_flight == [1] and seen_elsewhere == [0] and one.in_flight("key:a") == 0
    replicas(redis_url, steps)


def test_past_the_bound_the_least_recently_credited_client_is_forgotten(redis_url: str) -> None:
    async def steps(one: RedisUsage, other: RedisUsage) -> None:
        for n, client in enumerate(("key:a", "key:b", "key:c")):
            usage = (one, other)[n % 2]
            await request(metering(Inner(usage), usage), client=client)
            await usage.drain()
        assert [(await one.counted(c)).credits for c in ("key:a", "key:b", "key:c")] == [0, 1, 1]
    replicas(redis_url, steps, max_clients=2)
    with redis.Redis.from_url(redis_url) as client:
        assert client.hlen("wisp:usage:credits") == client.zcard("wisp:usage:last") == 2


def test_credits_past_those_waiting_for_redis_are_lost_and_counted(redis_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage_redis, "MAX_WAITING", 2)

    async def steps(one: RedisUsage, _: RedisUsage) -> None:
        for _ in range(5):  # nothing here yields to the loop: the credits' tasks have not run yet
            await request(metering(Inner(one), one))
        await one.drain()
        assert (await one.counted("key:a")).credits == 2
    with Moved(LOST) as lost:
        replicas(redis_url, steps)
    assert lost.by == 3


def test_redis_out_of_reach_fails_no_request_and_a_read_is_a_503(caplog: pytest.LogCaptureFixture) -> None:
    async def steps(one: RedisUsage, _: RedisUsage) -> None:
        for _ in range(3):
            await request(metering(Inner(one), one))
            await one.drain()
        with pytest.raises(SharedStateUnavailable):
            await one.counted("key:a")
        assert one.in_flight("key:a") == 0
    with Moved(LOST) as lost, caplog.at_level(logging.WARNING, logger="agent.state.usage.redis"):
        replicas(UNREACHABLE, steps)
    assert lost.by == 3
    warnings = [r for r in caplog.records if "not counted" in r.getMessage()]
    assert len(warnings) == 1, warnings  # once a minute at most while Redis stays down
