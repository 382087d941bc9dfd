"""Waiting for what a test expects rather than for a time: on a loaded machine a fixed sleep is too short, and a
bound on how fast something happened fails for no fault of the code. A test waits for the condition, with a
deadline that only stops a hang, then asserts what happened.

Leases and expiries kept in Redis run on Redis's clock: `redis_ms` reads it, and `until_redis_clock` waits for it
to pass a moment read from Redis (a lease's end, the score of its token), so a test knows that moment has passed
however slowly it ran.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

DEADLINE_S = 30.0  # only a hang takes this long: every wait here ends as soon as its condition holds


async def until(condition: Callable[[], bool | Awaitable[bool]], what: str, timeout_s: float = DEADLINE_S,
                every_s: float = 0.05) -> None:
    """Return once `condition()` (awaited when it is a coroutine) is true; fail naming `what` if it is not within
    `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not await _holds(condition):
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s:.0f} s"
        await asyncio.sleep(every_s)


async def _holds(condition: Callable[[], bool | Awaitable[bool]]) -> bool:
    found = condition()
    return bool(await found) if inspect.isawaitable(found) else bool(found)


def until_sync(condition: Callable[[], bool], what: str, timeout_s: float = DEADLINE_S, every_s: float = 0.05) -> None:
    """`until` for code without an event loop."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s:.0f} s"
        time.sleep(every_s)


async def redis_ms(redis: Redis) -> int:
    """Redis's clock in milliseconds, as the Lua scripts read it (TIME)."""
    seconds, micros = await redis.time()
    return seconds * 1000 + micros // 1000


async def until_redis_clock(redis: Redis, past_ms: float, what: str, timeout_s: float = DEADLINE_S) -> None:
    """Return once Redis's clock is past `past_ms` (a lease's end as Redis scored it)."""
    async def passed() -> bool:
        return await redis_ms(redis) > past_ms
    await until(passed, what, timeout_s, every_s=0.05)
