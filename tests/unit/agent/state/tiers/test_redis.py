"""The tier states on a real redis-server: what one replica holds, the other sees; the last call of a day's cap
goes to one replica only; and Redis out of reach never skips a source: the replica keeps its own state and says
so."""

import asyncio
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from agent.state.tiers.redis import RedisTiers

UNREACHABLE = "redis://127.0.0.1:1/0"
DAY = "2026-12-06"


def replicas(url: str, steps: Callable[[RedisTiers, RedisTiers], Awaitable[None]]) -> None:
    async def main() -> None:
        clients = [Redis.from_url(url, socket_connect_timeout=1) for _ in range(2)]
        try:
            await steps(*(RedisTiers(c) for c in clients))
        finally:
            for client in clients:
                await client.aclose()
    asyncio.run(main())


def test_a_hold_on_one_replica_holds_on_the_other(redis_url: str) -> None:
    async def steps(one: RedisTiers, other: RedisTiers) -> None:
        assert (await other.claim("exa/keyed", 1000.5, DAY, 0)).granted
        await one.hold("exa/keyed", "parked", 5000.25)
        claim = await other.claim("exa/keyed", 1000.5, DAY, 0)
        assert not claim.granted and claim.state.parked_until == 5000.25 and claim.state.calls_today == 1
        assert (await other.claim("exa/keyed", 5000.25, DAY, 0)).granted
        assert await one.failed("exa/free") == 1 and await other.failed("exa/free") == 2
        await other.hold("exa/free", "backoff", 2000.0)
        assert not (await one.claim("exa/free", 1999.0, DAY, 0)).granted
        await one.recovered("exa/free")
        states = await other.states(["exa/keyed", "exa/free"], DAY)
        assert (states["exa/keyed"].calls_today, states["exa/free"].failures, states["exa/free"].backoff_until) == \
            (2, 0, 0.0)
        assert await one.warning() is None
    replicas(redis_url, steps)


def test_the_daily_cap_is_counted_over_every_replica(redis_url: str) -> None:
    async def steps(one: RedisTiers, other: RedisTiers) -> None:
        claims = await asyncio.gather(*(store.claim("exa/keyed", 10.0, DAY, 5) for store in [one, other] * 10))
        assert sum(c.granted for c in claims) == 5
        assert (await one.claim("exa/keyed", 10.0, "2026-12-07", 5)).granted  # a new day
    replicas(redis_url, steps)


def test_redis_out_of_reach_keeps_the_state_per_replica() -> None:
    async def main() -> None:
        client = Redis.from_url(UNREACHABLE, socket_connect_timeout=1)
        store = RedisTiers(client)
        try:
            assert (await store.claim("exa/keyed", 10.0, DAY, 0)).granted
            await store.hold("exa/keyed", "parked", 100.0)
            assert not (await store.claim("exa/keyed", 50.0, DAY, 0)).granted
            assert "kept per replica" in (await store.warning() or "")
        finally:
            await client.aclose()
    asyncio.run(main())
