"""The tier states in the Redis of REDIS_URL, so that every replica parks and backs off a tier together: a 402
seen by one replica is not paid for again by the others.

One hash per tier (`parked`, `backoff`: epoch seconds; `failures`) and one counter per tier and day, which expires
two days later. A claim is one Lua script, so that replicas racing for the last call of a day's cap cannot both
take it. Redis is never a reason to skip a source: on any Redis error, or a wait past REDIS_WAIT_S, the replica
keeps its own state (memory.py) and leaves Redis alone for RECHECK_S; /readyz says so meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis

from agent.core.tiers import Claim, Hold, TierState
from agent.state.tiers.memory import ProcessTiers
from agent.state.unreachable import UNREACHABLE

PREFIX = "wisp:sources:"
DAY_TTL_S = 2 * 86_400
REDIS_WAIT_S = 0.25  # a search waits no longer than this for its source's state
RECHECK_S = 5.0
T = TypeVar("T")

# KEYS: the tier's hash, its counter of the day; ARGV: now, the daily cap (0: none), the counter's TTL.
# Numbers travel as strings: Lua would round a float it returns to an integer.
_CLAIM = """
local held = redis.call('HMGET', KEYS[1], 'parked', 'backoff', 'failures')
local calls = tonumber(redis.call('GET', KEYS[2]) or '0')
local now, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local parked, backoff = tonumber(held[1] or '0'), tonumber(held[2] or '0')
local granted = 0
if now >= parked and now >= backoff and (cap == 0 or calls < cap) then
    redis.call('INCR', KEYS[2])
    redis.call('EXPIRE', KEYS[2], ARGV[3])
    granted = 1
end
return {granted, held[1] or '0', held[2] or '0', held[3] or '0', tostring(calls)}
"""


class RedisTiers:
    def __init__(self, redis: Redis, clock: Callable[[], float] = time.monotonic) -> None:
        self._redis, self._clock = redis, clock
        self._claim = redis.register_script(_CLAIM)
        self._here = ProcessTiers()
        self._skip_until = 0.0
        self._error: str | None = None

    async def claim(self, tier: str, now: float, day: str, daily_cap: int) -> Claim:
        async def shared() -> Claim:
            granted, parked, backoff, failures, calls = await self._claim(
                [_key(tier), _day_key(tier, day)], [now, daily_cap, DAY_TTL_S])
            return Claim(bool(int(granted)), TierState(float(parked), float(backoff), int(failures), int(calls)))

        return await self._first(shared, lambda: self._here.claim(tier, now, day, daily_cap))

    async def failed(self, tier: str) -> int:
        async def shared() -> int:
            return int(await self._redis.hincrby(_key(tier), "failures", 1))

        return await self._first(shared, lambda: self._here.failed(tier))

    async def hold(self, tier: str, hold: Hold, until: float) -> None:
        async def shared() -> None:
            await self._redis.hset(_key(tier), hold, repr(until))

        await self._here.hold(tier, hold, until)  # kept here too: a Redis that fails next still holds it here
        await self._first(shared, _nothing)

    async def recovered(self, tier: str) -> None:
        async def shared() -> None:
            await self._redis.hset(_key(tier), mapping={"failures": 0, "backoff": 0})

        await self._here.recovered(tier)
        await self._first(shared, _nothing)

    async def states(self, tiers: list[str], day: str) -> dict[str, TierState]:
        async def shared() -> dict[str, TierState]:
            async with self._redis.pipeline(transaction=False) as pipe:
                for tier in tiers:
                    pipe.hmget(_key(tier), "parked", "backoff", "failures")
                    pipe.get(_day_key(tier, day))
                answers = await pipe.execute()
            return {tier: TierState(float(held[0] or 0), float(held[1] or 0), int(held[2] or 0), int(calls or 0))
                    for tier, held, calls in zip(tiers, answers[::2], answers[1::2], strict=True)}

        return await self._first(shared, lambda: self._here.states(tiers, day))

    async def warning(self) -> str | None:
        return self._error

    async def _first(self, shared: Callable[[], Awaitable[T]], local: Callable[[], Awaitable[T]]) -> T:
        """`shared()` while Redis answers within REDIS_WAIT_S; `local()` when it fails, and for RECHECK_S after."""
        if self._clock() >= self._skip_until:
            try:
                async with asyncio.timeout(REDIS_WAIT_S):
                    found = await shared()
            except UNREACHABLE as e:
                self._skip_until = self._clock() + RECHECK_S
                self._error = (f"the extra sources' tier states are kept per replica: Redis did not answer "
                               f"({type(e).__name__}: {e})")
            else:
                self._error = None
                return found
        return await local()


def _key(tier: str) -> str:
    return f"{PREFIX}{tier}"


def _day_key(tier: str, day: str) -> str:
    return f"{PREFIX}{tier}:calls:{day}"


async def _nothing() -> None:
    return None
