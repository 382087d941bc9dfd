"""Per-host politeness across replicas, on a real redis-server: two gates (two replicas) keep one host's bound
and pause together, a replica that dies gives its turns back after the lease, and Redis out of reach falls back
to the process's own gate."""

import asyncio
import itertools
import time

from redis.asyncio import Redis

from agent.state.politeness.memory import HostGate
from agent.state.politeness.redis import RedisHostGate
from offline_web.redis_server import RedisServer

from .test_memory import most_at_once, starts, visit


def gates(redis: Redis, concurrency: int, lease_s: float = 10.0) -> tuple[RedisHostGate, RedisHostGate]:
    return (RedisHostGate(redis, concurrency, HostGate(concurrency), lease_s),
            RedisHostGate(redis, concurrency, HostGate(concurrency), lease_s))


def test_two_replicas_hold_one_hosts_bound_together(redis_server: RedisServer) -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, second = gates(redis, concurrency=2)
        await asyncio.gather(*(visit(gate, "a.test", 0.0, log, hold_s=0.1) for gate in (first, second) * 3),
                             visit(first, "b.test", 0.0, log, hold_s=0.1))
        await redis.aclose()

    asyncio.run(main())
    a_log = [entry for entry in log if entry[0] == "a.test"]
    assert most_at_once(a_log) == 2 and len(starts(log, "a.test")) == 6
    assert starts(log, "b.test")[0] - min(starts(log, "a.test")) < 0.08  # another host does not wait


def test_a_pause_spaces_the_starts_of_both_replicas(redis_server: RedisServer) -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, second = gates(redis, concurrency=4)
        await asyncio.gather(visit(first, "a.test", 0.2, log), visit(second, "a.test", 0.2, log),
                             visit(first, "a.test", 0.2, log))
        await redis.aclose()

    asyncio.run(main())
    begun = sorted(starts(log, "a.test"))
    assert all(later - earlier >= 0.19 for earlier, later in itertools.pairwise(begun))


def test_a_turn_never_given_back_frees_after_its_lease(redis_server: RedisServer) -> None:
    async def main() -> float:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        dead, alive = gates(redis, concurrency=1, lease_s=1.0)
        held = dead.turn("a.test", 0.0)
        await held.__aenter__()  # a replica killed mid-request: it neither renews nor gives back
        for task in asyncio.all_tasks():
            if task.get_coro().__qualname__.endswith("LeasedSlots.keep"):
                task.cancel()
        started = time.monotonic()
        async with alive.turn("a.test", 0.0):
            waited = time.monotonic() - started
        await redis.aclose()
        return waited

    waited = asyncio.run(main())
    assert 0.5 < waited < 2.5


def test_a_held_turn_is_renewed_past_its_lease(redis_server: RedisServer) -> None:
    async def main() -> bool:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        first, second = gates(redis, concurrency=1, lease_s=0.6)
        async with first.turn("a.test", 0.0):
            await asyncio.sleep(1.5)
            try:
                async with asyncio.timeout(0.3):
                    async with second.turn("a.test", 0.0):
                        return False
            except TimeoutError:
                return True
            finally:
                await redis.aclose()

    assert asyncio.run(main())


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
