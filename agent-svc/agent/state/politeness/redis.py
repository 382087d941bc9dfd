"""Per-host politeness across replicas (REDIS_URL): the same rules as politeness.HostGate (at most
CRAWL_HOST_CONCURRENCY requests to a host at once, one at a time with a pause between them when a job or
robots.txt asks for one), kept in Redis so that three replicas crawling one site are as polite as one.

A turn is a leased slot (state/leased_slots.py): the holder renews the lease while its request runs, so a
replica that dies gives its turns back within LEASE_S. Redis out of reach: the process's own gate takes over for
that turn, with a warning.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from redis.asyncio import Redis

from agent.state.leased_slots import FULL, LeasedSlots
from agent.state.politeness import MAX_DELAY_S
from agent.state.politeness.memory import HostGate
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
LEASE_S = 10.0
BUSY_POLL_S = 0.05  # how often a request waiting for a slot asks again


class RedisHostGate:
    def __init__(self, redis: Redis, concurrency: int, local: HostGate, lease_s: float = LEASE_S) -> None:
        self._concurrency, self._local = concurrency, local
        self._slots = LeasedSlots(redis, lease_s)

    @asynccontextmanager
    async def turn(self, host: str, delay_s: float, slots: int | None = None) -> AsyncIterator[None]:
        pause_ms = int(min(max(delay_s, 0.0), MAX_DELAY_S) * 1000)
        holders, token = f"wisp:host:{host}:holders", uuid.uuid4().hex
        try:
            # with a pause, one request at a time, as politeness.HostGate does
            await self._wait_turn(host, token, pause_ms, 1 if pause_ms else slots or self._concurrency)
        except UNREACHABLE as e:
            log.warning("per-host politeness falls back to this replica's own (Redis: %s)", e)
            async with self._local.turn(host, delay_s, slots):
                yield
            return
        renewing = asyncio.create_task(self._slots.keep(holders, token))
        try:
            yield
        finally:
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)
            try:
                await self._slots.give_back(holders, token)
            except UNREACHABLE as e:  # the lease ends it anyway
                log.warning("could not give back a turn on %s: %s", host, e)

    async def _wait_turn(self, host: str, token: str, pause_ms: int, slots: int) -> None:
        while True:
            wait_ms, _ = await self._slots.take(f"wisp:host:{host}:holders", token, slots, f"wisp:host:{host}:next",
                                                pause_ms)
            if wait_ms == 0:
                return
            await asyncio.sleep(BUSY_POLL_S if wait_ms == FULL else wait_ms / 1000)
