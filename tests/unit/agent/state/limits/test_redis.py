"""The limits counted in Redis, against a real redis-server: replicas are several `shared_limits` of one
REDIS_URL in one process; Redis is killed and started again on the same folder, as a crash and a restart.
Leases run on Redis's clock and the moving window on the wall clock: the tests read those clocks rather than
time their own steps, so a loaded machine changes how long they take, not what they find."""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import time
from collections.abc import Awaitable, Callable

import anyio
import pytest
import redis
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from agent.api.gate.admission import CLIENT, RELEASES
from agent.api.gate.auth import Gate
from agent.errors import RateLimited
from agent.state.limits import Limits
from agent.state.limits.redis import RECHECK_S, _where, shared_limits
from agent.state.settings import LimitsSettings
from offline_web.redis_server import RedisServer
from tests.waiting import until_redis_clock

from .test_memory import Clock

WHO = "key:0a1b2c3d"
SLOTS = f"wisp:limits:costly:{WHO}"  # the sorted set of WHO's leased slots
LEASE_S = 2.0  # renewed every third of it: a renewal may come 1.3 s late before the lease ends


def replicas(redis_url: str, count: int = 2, clock: Clock | None = None, **settings: object) -> list[Limits]:
    values = {"rate_limit_per_min": 0, "ranked_concurrency_per_key": 0, **settings}
    return [shared_limits(LimitsSettings(**values), redis_url, clock or time.monotonic) for _ in range(count)]


def retry_after_bounds(since_first_s: float, spent_s: float) -> tuple[int, int]:
    """The Retry-After a refusal may say when the window's oldest admission was at least `since_first_s` ago and at
    most `spent_s` (the scenario's whole time, however slowly it ran): a minute after that admission."""
    return math.ceil(60 - spent_s), math.ceil(60 - since_first_s)


async def lease_ends_ms(redis_url: str) -> float:
    """When the lease of WHO's one slot ends, on Redis's clock."""
    async with Redis.from_url(redis_url) as client:
        ((_, ends),) = await client.zrange(SLOTS, 0, -1, withscores=True)
    return ends


async def until_redis_past(redis_url: str, ms: float, what: str) -> None:
    async with Redis.from_url(redis_url) as client:
        await until_redis_clock(client, ms, what)


def fallbacks(limit: str) -> float:
    return REGISTRY.get_sample_value("wisp_agent_limits_fallbacks_total", {"limit": limit})


async def admitted(hit: Callable[[str], Awaitable[RateLimited | None]], times: int, client: str = WHO) -> int:
    return sum([await hit(client) is None for _ in range(times)])


async def closing(*limits: Limits) -> None:
    for each in limits:
        await each.close()


def test_replicas_sharing_redis_admit_the_limit_in_all(redis_url: str) -> None:
    async def scenario() -> tuple[list[bool], RateLimited, int, float]:
        a, b = replicas(redis_url, rate_limit_per_min=5)
        started = time.time()  # the moving window's clock
        answers = [await (a if n % 2 else b).per_minute.hit(WHO) is None for n in range(12)]
        refusal = await a.per_minute.hit(WHO)
        spent = time.time() - started
        other = await admitted(b.per_minute.hit, 6, "addr:10.0.0.9")
        await closing(a, b)
        return answers, refusal, other, spent

    answers, refusal, other, spent = asyncio.run(scenario())
    assert answers == [True] * 5 + [False] * 7  # 5 in all, not 5 each
    low, high = retry_after_bounds(0, spent)
    assert refusal.status == 429 and low <= refusal.retry_after_s <= high  # 60 when all of it took under 1 s
    # the moving window keeps the admitted only: the consumed count is theirs and this request's
    assert refusal.message.startswith("Rate limit exceeded. Consumed (req/min): 6, Remaining (req/min): 0. "
                                      f"Please retry after {refusal.retry_after_s}s, resets at 20")
    assert other == 5  # another client counts apart


def test_retry_after_is_when_the_oldest_admission_leaves_the_moving_window(redis_url: str) -> None:
    async def scenario() -> tuple[RateLimited, float]:
        (limits,) = replicas(redis_url, count=1, rate_limit_per_min=2)
        started = time.time()
        await limits.per_minute.hit(WHO)
        await asyncio.sleep(2.2)
        await limits.per_minute.hit(WHO)
        refusal = await limits.per_minute.hit(WHO)
        spent = time.time() - started
        await limits.close()
        return refusal, spent

    refusal, spent = asyncio.run(scenario())
    low, high = retry_after_bounds(2.2, spent)
    # 60 s after the first admission, at least 2.2 s ago (58 on an idle machine): not a window from now (60),
    # nor from the second admission
    assert high == 58 and low <= refusal.retry_after_s <= high


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
        first, second = replicas(redis_url, ranked_concurrency_per_key=1, costly_lease_s=LEASE_S)
        held = await first.costly.take(WHO)
        first_term_ends = await lease_ends_ms(redis_url)
        await until_redis_past(redis_url, first_term_ends, "the slot's first lease over")  # renewed meanwhile
        with pytest.raises(RateLimited):
            await second.costly.take(WHO)
        await held()
        await (await second.costly.take(WHO))()
        await closing(first, second)

    asyncio.run(scenario())


def test_a_slot_never_given_back_returns_when_its_lease_ends(redis_url: str) -> None:
    async def scenario() -> None:
        killed, alive = replicas(redis_url, ranked_concurrency_per_key=2, costly_lease_s=LEASE_S)
        forgotten = await killed.costly.take(WHO)  # its replica dies before it gives it back...
        for task in asyncio.all_tasks():  # ...and so stops renewing its lease
            if task.get_coro().__qualname__.endswith("LeasedSlots.keep"):
                task.cancel()
        forgotten_ends = await lease_ends_ms(redis_url)
        held = await alive.costly.take(WHO)
        with pytest.raises(RateLimited):
            await alive.costly.take(WHO)
        await until_redis_past(redis_url, forgotten_ends, "the forgotten slot's lease over")
        taken = await alive.costly.take(WHO)  # the first lease has ended, the second (renewed) not
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
    """The second is the guard's clock, which stands still here unless the test moves it; what Redis is asked is
    counted as the connections it was sent (each attempt opens one, since none is answered), not timed."""
    silent = socket.create_server(("127.0.0.1", 0))  # takes connections into its backlog, never answers
    url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
    clock = Clock()

    def connections() -> int:
        """The connections made to the silent Redis since the last call."""
        count = 0
        while True:
            try:
                connection, _ = silent.accept()
            except BlockingIOError:
                return count
            connection.close()
            count += 1

    async def scenario() -> tuple[float, list[int], list[RateLimited | None], list[str]]:
        (limits,) = replicas(url, count=1, clock=clock, rate_limit_per_min=2, limits_redis_timeout_s=0.2)
        started = time.perf_counter()
        answers = [await limits.per_minute.hit(WHO)]
        waited = time.perf_counter() - started
        asked = [connections()]
        answers += [await limits.per_minute.hit(WHO) for _ in range(19)]  # within the guard's second
        asked.append(connections())
        clock.now += RECHECK_S
        answers += [await limits.per_minute.hit(WHO) for _ in range(5)]  # a second later
        asked.append(connections())
        warnings = await limits.warnings()
        await limits.close()
        return waited, asked, answers, warnings

    silent.setblocking(False)
    with silent, caplog.at_level(logging.WARNING, logger="agent"):
        waited, asked, answers, warnings = asyncio.run(scenario())
    assert waited >= 0.2  # the first waits for the timeout...
    # ...once (no retry after a timeout); the next 19 are counted in the process without asking Redis; a second
    # later one request asks it again, once, and the others go on counting in the process
    assert asked == [1, 0, 1]
    assert answers[:2] == [None, None] and all(isinstance(answer, RateLimited) for answer in answers[2:])
    assert "TimeoutError" in warnings[0]
    (logged,) = caplog.records  # one warning, not one a request
    assert logged.getMessage().startswith(f"limits: Redis at {url[8:-2]} does not answer (TimeoutError")


def test_the_log_and_readyz_name_redis_by_host_and_port_never_its_password() -> None:
    assert _where("redis://:s3cret@redis.internal:6380/2") == "redis.internal:6380"
    assert _where("rediss://user:s3cret@cache/0") == "cache:6379"
    assert _where("unix:///run/redis.sock") == "unix:"
