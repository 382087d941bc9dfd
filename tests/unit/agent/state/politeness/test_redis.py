"""Per-host politeness across replicas, on a real redis-server: two gates (two replicas) keep one host's bound
and pause together, a replica that dies gives its turns back after the lease, and Redis out of reach falls back
to the process's own gate. Leases run on Redis's clock: the tests read it rather than time their own steps."""

import asyncio
import itertools
import time

from redis.asyncio import Redis

from agent.state.leased_slots import FULL, LeasedSlots
from agent.state.politeness.memory import HostGate
from agent.state.politeness.redis import RedisHostGate
from offline_web.redis_server import RedisServer
from tests.waiting import DEADLINE_S, redis_ms, until_redis_clock

from .test_memory import most_at_once, starts, visit

HOLDERS = "wisp:host:a.test:holders"  # a.test's leased turns


async def lease_ends_ms(redis: Redis) -> float:
    """When the lease of a.test's one turn ends, on Redis's clock."""
    ((_, ends),) = await redis.zrange(HOLDERS, 0, -1, withscores=True)
    return ends


def gates(redis: Redis, concurrency: int, lease_s: float = 10.0) -> tuple[RedisHostGate, RedisHostGate]:
    return (RedisHostGate(redis, concurrency, HostGate(concurrency), lease_s),
            RedisHostGate(redis, concurrency, HostGate(concurrency), lease_s))


def test_two_replicas_hold_one_hosts_bound_together(redis_server: RedisServer) -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, second = gates(redis, concurrency=2)
        other_host_served = asyncio.Event()

        async def on_a(gate: RedisHostGate) -> None:
            async with gate.turn("a.test", 0.0):
                log.append(("a.test", "start", time.monotonic()))
                # a.test's turns last until b.test has had its own: had b.test to wait for them, it never would
                await asyncio.wait_for(other_host_served.wait(), DEADLINE_S)
                await asyncio.sleep(0.1)
                log.append(("a.test", "end", time.monotonic()))

        async def on_b() -> None:
            await visit(first, "b.test", 0.0, log)
            other_host_served.set()

        await asyncio.gather(*(on_a(gate) for gate in (first, second) * 3), on_b())
        await redis.aclose()

    asyncio.run(main())
    a_log = [entry for entry in log if entry[0] == "a.test"]
    assert most_at_once(a_log) == 2 and len(starts(log, "a.test")) == 6
    assert len(starts(log, "b.test")) == 1  # while a.test's turns were held, waiting for it


def test_a_pause_spaces_the_starts_of_both_replicas(redis_server: RedisServer) -> None:
    begun: list[int] = []

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, second = gates(redis, concurrency=4)

        async def paced(gate: RedisHostGate) -> None:
            async with gate.turn("a.test", 0.2):
                # when Redis gave this turn, on its clock: the pause it set then (one turn at a time holds it)
                begun.append(int(await redis.get("wisp:host:a.test:next")) - 200)

        await asyncio.gather(paced(first), paced(second), paced(first))
        await redis.aclose()

    asyncio.run(main())
    assert len(begun) == 3
    assert all(later - earlier >= 200 for earlier, later in itertools.pairwise(sorted(begun)))


def test_a_turn_never_given_back_frees_after_its_lease(redis_server: RedisServer) -> None:
    async def main() -> tuple[float, int]:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        dead, alive = gates(redis, concurrency=1, lease_s=1.0)
        held = dead.turn("a.test", 0.0)
        await held.__aenter__()  # a replica killed mid-request: it neither renews nor gives back
        for task in asyncio.all_tasks():
            if task.get_coro().__qualname__.endswith("LeasedSlots.keep"):
                task.cancel()
        lease_ends = await lease_ends_ms(redis)
        async with asyncio.timeout(DEADLINE_S), alive.turn("a.test", 0.0):
            entered = await redis_ms(redis)
        await redis.aclose()
        return lease_ends, entered

    lease_ends, entered = asyncio.run(main())
    assert entered >= lease_ends  # the other replica got the turn, once the lease had ended on Redis's clock


def test_a_held_turn_is_renewed_past_its_lease(redis_server: RedisServer) -> None:
    async def main() -> tuple[int, int]:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, _ = gates(redis, concurrency=1, lease_s=2.0)  # renewed every 2/3 s: 1.3 s late is still in time
        async with first.turn("a.test", 0.0):
            await until_redis_clock(redis, await lease_ends_ms(redis), "the turn's first lease over")
            # what the other replica's gate asks Redis for a turn, once: every slot of a.test is still held
            taken, _ = await LeasedSlots(redis, 2.0).take(HOLDERS, "other", 1, "wisp:host:a.test:next")
        holders = await redis.zcard(HOLDERS)
        await redis.aclose()
        return taken, holders

    assert asyncio.run(main()) == (FULL, 0)  # held past its lease, then given back


def test_redis_out_of_reach_falls_back_to_the_process_gate() -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        redis = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
        gate = RedisHostGate(redis, 1, HostGate(1))
        await asyncio.gather(*(visit(gate, "a.test", 0.0, log, hold_s=0.05) for _ in range(3)))
        await redis.aclose()

    asyncio.run(main())
    assert len(starts(log, "a.test")) == 3 and most_at_once(log) == 1


def test_a_crawls_own_bound_holds_over_both_replicas(redis_server: RedisServer) -> None:
    log: list[tuple[str, str, float]] = []

    async def held(gate: RedisHostGate) -> None:
        async with gate.turn("crawl:j", 0.0, slots=1):
            log.append(("crawl:j", "start", time.monotonic()))
            await asyncio.sleep(0.05)
            log.append(("crawl:j", "end", time.monotonic()))

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, second = gates(redis, concurrency=4)
        await asyncio.gather(*(held(gate) for gate in (first, second) * 2))
        await redis.aclose()

    asyncio.run(main())
    assert most_at_once(log) == 1 and len(starts(log, "crawl:j")) == 4
