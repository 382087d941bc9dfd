"""Per-host politeness across replicas (REDIS_URL): the same rules as politeness.HostGate (at most
CRAWL_HOST_CONCURRENCY requests to a host at once, one at a time with a pause between them when a job or
robots.txt asks for one), kept in Redis so that three replicas crawling one site are as polite as one.

A turn is a token in the host's sorted set, scored by when its lease ends; the holder renews the lease while
its request runs, so a replica that dies gives its turns back within LEASE_S. Time is Redis's clock, the one
every replica shares. Redis out of reach: the process's own gate takes over for that turn, with a warning.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent.index.crawl.politeness import MAX_DELAY_S, HostGate

log = logging.getLogger(__name__)
LEASE_S = 10.0
BUSY_POLL_S = 0.05  # how often a request waiting for a slot asks again

# KEYS: the host's holders, its next start; ARGV: token, concurrency, pause (ms), lease (ms). 0: the turn is
# taken; > 0: milliseconds until the pause is over; -1: every slot is held.
_TAKE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local pause = tonumber(ARGV[3])
local slots = pause > 0 and 1 or tonumber(ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= slots then return -1 end
local next_start = tonumber(redis.call('GET', KEYS[2]) or '0')
if now < next_start then return next_start - now end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) * 2)
if pause > 0 then redis.call('SET', KEYS[2], now + pause, 'PX', pause) end
return 0
"""

# KEYS: the host's holders; ARGV: token, lease (ms). Renews a held turn's lease.
_RENEW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
    redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return 0
"""


class RedisHostGate:
    def __init__(self, redis: Redis, concurrency: int, local: HostGate, lease_s: float = LEASE_S) -> None:
        self._redis, self._concurrency, self._local, self._lease_ms = redis, concurrency, local, int(lease_s * 1000)
        self._take = redis.register_script(_TAKE)
        self._renew = redis.register_script(_RENEW)

    @asynccontextmanager
    async def turn(self, host: str, delay_s: float, slots: int | None = None) -> AsyncIterator[None]:
        pause_ms = int(min(max(delay_s, 0.0), MAX_DELAY_S) * 1000)
        token = uuid.uuid4().hex
        try:
            await self._wait_turn(host, token, pause_ms, slots or self._concurrency)
        except (RedisError, OSError) as e:
            log.warning("per-host politeness falls back to this replica's own (Redis: %s)", e)
            async with self._local.turn(host, delay_s, slots):
                yield
            return
        renewing = asyncio.create_task(self._keep(host, token))
        try:
            yield
        finally:
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
            await self._give_back(host, token)

    async def _wait_turn(self, host: str, token: str, pause_ms: int, slots: int) -> None:
        while True:
            wait_ms = await self._take(keys=_keys(host), args=[token, slots, pause_ms, self._lease_ms])
            if wait_ms == 0:
                return
            await asyncio.sleep(BUSY_POLL_S if wait_ms < 0 else wait_ms / 1000)

    async def _keep(self, host: str, token: str) -> None:
        while True:
            await asyncio.sleep(self._lease_ms / 3000)
            try:
                await self._renew(keys=_keys(host)[:1], args=[token, self._lease_ms])
            except (RedisError, OSError) as e:
                log.warning("could not renew a turn on %s: %s", host, e)

    async def _give_back(self, host: str, token: str) -> None:
        try:
            await self._redis.zrem(_keys(host)[0], token)
        except (RedisError, OSError) as e:  # the lease ends it anyway
            log.warning("could not give back a turn on %s: %s", host, e)


def _keys(host: str) -> list[str]:
    return [f"wisp:host:{host}:holders", f"wisp:host:{host}:next"]
