"""The limits counted in Redis, against a real redis-server: replicas are several `shared_limits` of one
REDIS_URL in one process; Redis is killed and started again on the same folder, as a crash and a restart."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable

import anyio
import pytest
import redis
from prometheus_client import REGISTRY

from agent.api.gate.admission import CLIENT, RELEASES
from agent.api.gate.auth import Gate
from agent.config import Settings
from agent.errors import RateLimited
from agent.state.limits import Limits
from agent.state.limits.redis import RECHECK_S, _where, shared_limits
from offline_web.redis_server import RedisServer

WHO = "key:0a1b2c3d"


def replicas(redis_url: str, count: int = 2, **settings: object) -> list[Limits]:
    values = {"rate_limit_per_min": 0, "ranked_concurrency_per_key": 0, **settings}
    return [shared_limits(Settings(redis_url=redis_url, **values)) for _ in range(count)]


def fallbacks(limit: str) -> float:
    return REGISTRY.get_sample_value("wisp_agent_limits_fallbacks_total", {"limit": limit})


async def admitted(hit: Callable[[str], Awaitable[RateLimited | None]], times: int, client: str = WHO) -> int:
    return sum([await hit(client) is None for _ in range(times)])


async def closing(*limits: Limits) -> None:
    for each in limits:
        await each.close()


def test_replicas_sharing_redis_admit_the_limit_in_all(redis_url: str) -> None:
    async def scenario() -> tuple[list[bool], RateLimited, int]:
        a, b = replicas(redis_url, rate_limit_per_min=5)
        answers = [await (a if n % 2 else b).per_minute.hit(WHO) is None for n in range(12)]
        refusal = await a.per_minute.hit(WHO)
        other = await admitted(b.per_minute.hit, 6, "addr:10.0.0.9")
        await closing(a, b)
        return answers, refusal, other

    answers, refusal, other = asyncio.run(scenario())
    assert answers == [True] * 5 + [False] * 7  # 5 in all, not 5 each
    assert refusal.status == 429 and refusal.retry_after_s in (59, 60)
    # the moving window keeps the admitted only: the consumed count is theirs and this request's
    assert refusal.message.startswith("Rate limit exceeded. Consumed (req/min): 6, Remaining (req/min): 0. "
                                      f"Please retry after {refusal.retry_after_s}s, resets at 20")
    assert other == 5  # another client counts apart


def test_retry_after_is_when_the_oldest_admission_leaves_the_moving_window(redis_url: str) -> None:
    async def scenario() -> RateLimited:
        (limits,) = replicas(redis_url, count=1, rate_limit_per_min=2)
        await limits.per_minute.hit(WHO)
        await asyncio.sleep(2.2)
        await limits.per_minute.hit(WHO)
        refusal = await limits.per_minute.hit(WHO)
        await limits.close()
        return refusal

    assert asyncio.run(scenario()).retry_after_s == 58  # 60 s after the first, 2.2 s ago: not a window from now


def test_replicas_share_the_costly_slots(redis_url: str) -> None:
    async def scenario() -> None:
        a, b = replicas(redis_url, ranked_concurrency_per_key=2)
        first = await a.costly.take(WHO)
        await b.costly.take(WHO)
        with pytest.raises(RateLimited, match=r"^Rate limit exceeded\. Concurrent ranked or rich requests: 2, "
                                              r"allowed: 2\. Please retry after 1s"):
            await a.costly.take(WHO)
        await b.costly.take("key:other")  # another client's slots are its own
        await first()
        await b.costly.take(WHO)  # the slot a freed is b's to take
        with pytest.raises(RateLimited):
            await b.costly.take(WHO)
        await closing(a, b)

    asyncio.run(scenario())


def test_a_running_request_keeps_its_slot_past_its_lease(redis_url: str) -> None:
    async def scenario() -> None:
        first, second = replicas(redis_url, ranked_concurrency_per_key=1, costly_lease_s=0.3)
        held = await first.costly.take(WHO)
        await asyncio.sleep(1.0)  # three leases: renewed
        with pytest.raises(RateLimited):
            await second.costly.take(WHO)
        await held()
        await (await second.costly.take(WHO))()
        await closing(first, second)

    asyncio.run(scenario())


def test_a_slot_never_given_back_returns_when_its_lease_ends(redis_url: str) -> None:
    async def scenario() -> None:
        killed, alive = replicas(redis_url, ranked_concurrency_per_key=2, costly_lease_s=0.5)
        forgotten = await killed.costly.take(WHO)  # its replica dies before it gives it back...
        for task in asyncio.all_tasks():  # ...and so stops renewing its lease
            if task.get_coro().__qualname__.endswith("LeasedSlots.keep"):
                task.cancel()
        await asyncio.sleep(0.3)
        held = await alive.costly.take(WHO)
        with pytest.raises(RateLimited):
            await alive.costly.take(WHO)
        await asyncio.sleep(0.3)  # the first lease has ended, the second not: the set itself lives on
        taken = await alive.costly.take(WHO)
        await forgotten()  # a release after its lease ended frees nothing of the holders'
        with pytest.raises(RateLimited, match="requests: 2, allowed: 2"):
            await alive.costly.take(WHO)
        await held()
        await taken()
        await closing(killed, alive)

    asyncio.run(scenario())
    with redis.Redis.from_url(redis_url) as client:
        assert client.keys("*costly*") == []  # the last release left no set behind


def test_a_cancelled_request_still_gives_its_slot_back_in_redis(redis_url: str) -> None:
    """A client that hangs up cancels its request (an anyio cancel scope): the gate's release must still reach
    Redis, though it has to reconnect first (its connection was closed), which a cancelled scope interrupts."""

    async def scenario() -> int:
        (limits,) = replicas(redis_url, count=1, ranked_concurrency_per_key=1)
        holding = anyio.Event()

        async def handler(scope: dict, receive: object, send: object) -> None:
            scope[RELEASES].append(await limits.costly.take(scope[CLIENT]))
            holding.set()
            await anyio.sleep_forever()

        scope = {"type": "http", "path": "/v2/search", "method": "POST", "headers": [], "client": ("10.0.0.7", 1)}
        with redis.Redis.from_url(redis_url) as client:
            async with anyio.create_task_group() as requests:
                requests.start_soon(Gate(handler, None, None), scope, None, None)
                await holding.wait()
                client.client_kill_filter(_type="normal", skipme=True)  # the replica's pooled connection
                requests.cancel_scope.cancel()
            held = client.zcard("wisp:limits:costly:addr:10.0.0.7")
        await limits.close()
        return held

    assert asyncio.run(scenario()) == 0


def test_redis_down_falls_back_to_the_process_then_redis_back_is_shared_again(redis_server: RedisServer,
                                                                            redis_url: str) -> None:
    before = fallbacks("per_minute"), fallbacks("costly")

    async def scenario() -> None:
        a, b = replicas(redis_url, rate_limit_per_min=3, ranked_concurrency_per_key=1)
        assert await admitted(a.per_minute.hit, 2) == 2  # 2 of the 3 in Redis, which keeps them (AOF)
        assert await a.warnings() == []
        redis_server.kill()
        # every request is still answered, each replica counting alone: 3 of a fixed window each
        assert await admitted(a.per_minute.hit, 5) == 3 and await admitted(b.per_minute.hit, 5) == 3
        slot = await a.costly.take(WHO)
        with pytest.raises(RateLimited):
            await a.costly.take(WHO)
        await b.costly.take(WHO)  # b's own process cap
        await slot()
        (warning,) = await a.warnings()
        assert warning.startswith(f"limits: Redis at 127.0.0.1:{redis_server.port} has not answered for ")
        assert "ConnectionError" in warning and "counted by each replica alone" in warning

        redis_server.start()
        await asyncio.sleep(RECHECK_S + 0.1)  # the replicas leave a failed Redis alone that long
        assert await a.warnings() == [] and await b.warnings() == []
        # shared again: the window Redis kept has room for 1 more, for both replicas together
        assert await admitted(b.per_minute.hit, 3) + await admitted(a.per_minute.hit, 3) == 1
        await a.costly.take(WHO)
        with pytest.raises(RateLimited):
            await b.costly.take(WHO)
        await closing(a, b)

    asyncio.run(scenario())
    assert fallbacks("per_minute") - before[0] == 10
    assert fallbacks("costly") - before[1] == 3


def test_a_redis_that_hangs_costs_one_timeout_a_second_not_one_a_request(caplog: pytest.LogCaptureFixture) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts connections, never answers
    url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"

    async def scenario() -> tuple[list[float], list[str]]:
        (limits,) = replicas(url, count=1, rate_limit_per_min=2, limits_redis_timeout_s=0.2)
        took = []
        for _ in range(20):
            started = time.perf_counter()
            await limits.per_minute.hit(WHO)
            took.append(time.perf_counter() - started)
        warnings = await limits.warnings()
        await limits.close()
        return took, warnings

    with silent, caplog.at_level(logging.WARNING, logger="agent"):
        took, warnings = asyncio.run(scenario())
    assert 0.2 <= took[0] < 0.4  # the first waits for the timeout once (no retry after a timeout)
    assert sum(took[1:]) < 0.1  # the next ones count in the process at once
    assert "TimeoutError" in warnings[0]
    (logged,) = caplog.records  # one warning, not one a request
    assert logged.getMessage().startswith(f"limits: Redis at {url[8:-2]} does not answer (TimeoutError")


def test_the_log_and_readyz_name_redis_by_host_and_port_never_its_password() -> None:
    assert _where("redis://:s3cret@redis.internal:6380/2") == "redis.internal:6380"
    assert _where("rediss://user:s3cret@cache/0") == "cache:6379"
    assert _where("unix:///run/redis.sock") == "unix:"
