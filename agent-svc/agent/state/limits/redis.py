"""The limits counted in the Redis of REDIS_URL, so that every replica behind a balancer counts one limit.

RATE_LIMIT_PER_MIN is the `limits` package's moving window; RANKED_CONCURRENCY_PER_KEY a semaphore with leases
(a sorted set of the requests in flight per client, scored by the end of their lease), since `limits` has none.
Redis is never a reason to refuse a request: on any Redis error (a short socket timeout bounds the wait) the
request is counted by the process alone (memory.py), Redis is left alone for a second, and then one
request tries it again; /readyz carries a warning meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar
from urllib.parse import urlsplit

from limits import RateLimitItemPerMinute
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from agent import metrics
from agent.errors import RateLimited
from agent.metrics import SharedLimit
from agent.state.leased_slots import LeasedSlots
from agent.state.limits import CostlyCap, Limits, PerMinuteLimit, Release, over_cap, over_per_minute
from agent.state.limits.memory import Clock, process_limits
from agent.state.settings import LimitsSettings
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger("agent")

KEY_PREFIX = "wisp:limits"
RECHECK_S = 1.0  # how long a Redis that failed is left alone: a dead one costs one attempt a second, not one a request
LOG_EVERY_S = 60.0  # while Redis stays down, one warning a minute rather than one a recheck
T = TypeVar("T")


class RedisRateLimiter:
    """RATE_LIMIT_PER_MIN over every replica: a moving window of the last 60 s per client, so `per_minute`
    admissions in any minute however the balancer spreads the requests."""

    def __init__(self, storage: RedisStorage, per_minute: int, wall_clock: Clock = time.time) -> None:
        self._window = MovingWindowRateLimiter(storage)
        self._item = RateLimitItemPerMinute(per_minute)
        self._wall_clock = wall_clock

    async def hit(self, client: str) -> RateLimited | None:
        if await self._window.hit(self._item, client):
            return None
        stats = await self._window.get_window_stats(self._item, client)  # a second round trip, for refusals only
        now = self._wall_clock()
        # the window holds the admitted requests only: this one is counted on top, as Firecrawl counts it
        return over_per_minute(self._item.amount - stats.remaining + 1, stats.reset_time - now, now)


class RedisCap:
    """RANKED_CONCURRENCY_PER_KEY over every replica: each client's slots are leased (state/leased_slots.py) and
    renewed while their request runs, so the slots of a replica killed while holding them come back within
    `lease_s`, and a long request keeps its own."""

    def __init__(self, redis: Redis, per_client: int, lease_s: float) -> None:
        self.per_client = per_client
        self._slots = LeasedSlots(redis, lease_s)

    async def take(self, client: str) -> Release:
        key, token = f"{KEY_PREFIX}:costly:{client}", secrets.token_hex(8)
        refused, running = await self._slots.take(key, token, self.per_client)
        if refused:
            raise over_cap(running, self.per_client)
        renewing = asyncio.create_task(self._slots.keep(key, token))

        async def release() -> None:
            renewing.cancel()
            await self._slots.give_back(key, token)

        return release


class RedisGuard:
    """Whether Redis is asked: after an error it is not, for RECHECK_S, then one request asks it again while the
    others keep counting in the process, until Redis answers. It warns (the log, /readyz) while Redis is down."""

    def __init__(self, redis: Redis, pool: ConnectionPool, address: str, recheck_s: float = RECHECK_S,
                 clock: Clock = time.monotonic) -> None:
        self._redis, self._pool, self._address = redis, pool, address
        self._recheck_s, self._clock = recheck_s, clock
        self._down_since: float | None = None
        self._error = ""
        self._retry_at = self._logged_at = 0.0
        self._fallbacks = 0

    async def first(self, limit: SharedLimit, shared: Callable[[], Awaitable[T]],
                    local: Callable[[], Awaitable[T]]) -> T:
        """`shared()` while Redis answers; `local()` when it fails or is left alone, counted as a fallback."""
        if self._may_ask():
            try:
                found = await shared()
            except UNREACHABLE as error:
                self.failed(error)
            except RateLimited:
                self._answered()
                raise
            else:
                self._answered()
                return found
        self._fallbacks += 1
        metrics.limits_fell_back(limit)
        return await local()

    def failed(self, error: Exception) -> None:
        """Redis did not answer: leave it alone for a while, and say so (the first time, then once a minute)."""
        now = self._clock()
        self._retry_at = now + self._recheck_s
        self._error = f"{type(error).__name__}: {error}"
        if self._down_since is None:
            self._down_since = self._logged_at = now
            log.warning("limits: Redis at %s does not answer (%s); each replica counts the limits alone until it "
                        "does", self._address, self._error)
        elif now - self._logged_at >= LOG_EVERY_S:
            self._logged_at = now
            log.warning("limits: Redis at %s still does not answer after %.0f s (%s); %d requests counted by this "
                        "replica alone", self._address, now - self._down_since, self._error, self._fallbacks)

    async def warning(self) -> str | None:
        """Asks Redis (unless it is being left alone), then what /readyz says: why the limits count per replica."""
        if self._may_ask():
            try:
                await self._redis.ping()
            except UNREACHABLE as error:
                self.failed(error)
            else:
                self._answered()
        if self._down_since is None:
            return None
        return (f"limits: Redis at {self._address} has not answered for {self._clock() - self._down_since:.0f} s "
                f"({self._error}); RATE_LIMIT_PER_MIN and RANKED_CONCURRENCY_PER_KEY are counted by each replica "
                "alone until it does")

    async def close(self) -> None:
        await self._pool.aclose()

    def _may_ask(self) -> bool:
        if self._down_since is None:
            return True
        now = self._clock()
        if now < self._retry_at:
            return False
        self._retry_at = now + self._recheck_s  # this caller asks; the others count in the process meanwhile
        return True

    def _answered(self) -> None:
        if self._down_since is not None:
            log.warning("limits: Redis at %s answers again after %.0f s; %d requests were counted by this replica "
                        "alone", self._address, self._clock() - self._down_since, self._fallbacks)
        self._down_since, self._fallbacks = None, 0


class SharedRateLimiter:
    """The per-minute limit in Redis, in the process while Redis fails."""

    def __init__(self, guard: RedisGuard, shared: PerMinuteLimit, local: PerMinuteLimit) -> None:
        self._guard, self._shared, self._local = guard, shared, local

    async def hit(self, client: str) -> RateLimited | None:
        return await self._guard.first("per_minute", partial(self._shared.hit, client),
                                       partial(self._local.hit, client))


class SharedCap:
    """The costly-request cap in Redis, in the process while Redis fails. A slot taken in Redis is given back
    there; if Redis fails by then, its lease gives it back."""

    def __init__(self, guard: RedisGuard, shared: CostlyCap, local: CostlyCap) -> None:
        self._guard, self._shared, self._local = guard, shared, local
        self.per_client = local.per_client

    async def take(self, client: str) -> Release:
        return await self._guard.first("costly", partial(self._take_shared, client), partial(self._local.take, client))

    async def _take_shared(self, client: str) -> Release:
        release = await self._shared.take(client)

        async def release_or_let_lease_end() -> None:
            try:
                await release()
            except UNREACHABLE as error:
                self._guard.failed(error)

        return release_or_let_lease_end


def shared_limits(settings: LimitsSettings, redis_url: str, clock: Clock = time.monotonic) -> Limits:
    """The limits of `settings`, counted in the Redis of `redis_url` (REDIS_URL), each falling back to the
    process's own; `clock` times how long a Redis that failed is left alone."""
    local = process_limits(settings)
    if local.per_minute is None and local.costly is None:
        return local  # nothing to count: no connection to make
    timeout = settings.limits_redis_timeout_s
    # one quick retry when a connection breaks (a pooled one that a restarted Redis closed), none after a timeout:
    # a Redis that hangs costs one timeout, not two (redis-py's default is 10 retries with backoff)
    retry = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
    pool = ConnectionPool.from_url(redis_url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                   retry=retry)
    redis = Redis(connection_pool=pool)
    guard = RedisGuard(redis, pool, _where(redis_url), clock=clock)
    per_minute = costly = None
    if local.per_minute is not None:
        # the pool, made from REDIS_URL, is what connects: the URI only names the client library's family
        storage = RedisStorage("async+redis://", implementation="redispy", key_prefix=KEY_PREFIX,
                               connection_pool=pool)
        per_minute = SharedRateLimiter(guard, RedisRateLimiter(storage, settings.rate_limit_per_min),
                                       local.per_minute)
    if local.costly is not None:
        costly = SharedCap(guard, RedisCap(redis, settings.ranked_concurrency_per_key, settings.costly_lease_s),
                           local.costly)
    return Limits(per_minute, costly, guard)


def _where(url: str) -> str:
    """Redis's host and port, for the log and /readyz: never the URL, which may hold a password."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}" if parts.hostname else parts.scheme + ":"
