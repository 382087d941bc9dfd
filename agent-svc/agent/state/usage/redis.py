"""What each client has used, counted in the Redis of REDIS_URL, so that the team routes answer the same on every
replica behind a balancer. A credit is one Lua script, sent after its response (a background task): it adds one
to the client's count and records the success. The period the counts cover starts at the earliest credit, or at
the first read when none came before it, and outlives the replicas' restarts as the counts do. The clients kept
are bounded as the in-process counts are: past `max_clients`, the least recently credited is forgotten.

The requests in flight stay each replica's own (memory.py's counts, which concurrency-check reports): they are
this replica's work now, not a count that must add up over time.

Redis never fails a request here: a credit it cannot take is lost, counted in wisp_agent_usage_credits_lost_total
and logged, once a minute at most while Redis stays down. Reading the counts (the team routes) while Redis is out of
reach is a 503 (SharedStateUnavailable) rather than a count that would look like zero.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from redis.asyncio import Redis

from agent import metrics
from agent.errors import SharedStateUnavailable
from agent.state.unreachable import UNREACHABLE
from agent.state.usage import Counted
from agent.state.usage.memory import Usage

log = logging.getLogger(__name__)
PREFIX = "wisp:usage:"
_CREDITS, _LAST, _STARTED = (f"{PREFIX}{name}" for name in ("credits", "last", "started"))
MAX_WAITING = 1000  # credits on their way to Redis at once: past that, a slow Redis would hold ever more tasks
LOG_EVERY_S = 60.0

# KEYS: credits (a hash by client), last successes (a sorted set by client), the period's start; ARGV: the client,
# now (epoch seconds), the most clients kept
_COUNT = """
local started = redis.call('GET', KEYS[3])
if not started or tonumber(ARGV[2]) < tonumber(started) then  -- credits may land out of order: none predates it
    redis.call('SET', KEYS[3], ARGV[2])
end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[1])  -- GT: a replica whose clock lags moves nothing back
if redis.call('ZCARD', KEYS[2]) > tonumber(ARGV[3]) then
    local forgotten = redis.call('ZPOPMIN', KEYS[2])
    redis.call('HDEL', KEYS[1], forgotten[1])
end
"""
# the same KEYS and ARGV[1], ARGV[2]; a period no credit has started yet starts when it is first read
_READ = """
redis.call('SET', KEYS[3], ARGV[2], 'NX')
return {redis.call('GET', KEYS[3]), redis.call('HGET', KEYS[1], ARGV[1]), redis.call('ZSCORE', KEYS[2], ARGV[1])}
"""


class RedisUsage:
    def __init__(self, redis: Redis, max_clients: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        self._max_clients, self._clock = max_clients, clock
        self._here = Usage(max_clients)  # this replica's requests in flight; its credits are Redis's
        self._count, self._read = redis.register_script(_COUNT), redis.register_script(_READ)
        self._waiting: set[asyncio.Task] = set()
        self._lost_unlogged = 0
        self._log_after = 0.0

    def began(self, client: str) -> None:
        self._here.began(client)

    def ended(self, client: str, credited: bool) -> None:
        """The request is over; a credit goes to Redis in a background task, off the response's path."""
        self._here.ended(client, credited=False)
        if credited:
            self._count_later(client)

    def in_flight(self, client: str) -> int:
        return self._here.in_flight(client)

    async def counted(self, client: str) -> Counted:
        """`client`'s counts over every replica; SharedStateUnavailable when Redis cannot say."""
        try:
            started, credits, last_success = await self._read([_CREDITS, _LAST, _STARTED], [client, self._clock()])
        except UNREACHABLE as e:
            raise SharedStateUnavailable(f"the usage counts (Redis) cannot be reached: {e}") from e
        return Counted(float(started), int(credits or 0), None if last_success is None else float(last_success))

    async def drain(self) -> None:
        """Wait for the credits on their way to Redis (at shutdown, so that none is dropped)."""
        while self._waiting:
            await asyncio.gather(*self._waiting)

    def _count_later(self, client: str) -> None:
        if len(self._waiting) >= MAX_WAITING:
            self._lost(f"{MAX_WAITING} credits were waiting for Redis")
            return
        task = asyncio.create_task(self._credit(client, self._clock()))
        self._waiting.add(task)
        task.add_done_callback(self._waiting.discard)

    async def _credit(self, client: str, at: float) -> None:
        try:
            await self._count([_CREDITS, _LAST, _STARTED], [client, at, self._max_clients])
        except UNREACHABLE as e:
            self._lost(f"Redis cannot be reached: {e}")

    def _lost(self, why: str) -> None:
        metrics.USAGE_CREDITS_LOST.inc()
        self._lost_unlogged += 1
        if (now := time.monotonic()) >= self._log_after:
            log.warning("%d credit(s) not counted (%s): the usage counts are short by as many",
                        self._lost_unlogged, why)
            self._lost_unlogged, self._log_after = 0, now + LOG_EVERY_S
