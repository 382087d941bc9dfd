"""Per-host politeness of this process (one replica), one gate for every crawl, batch scrape and map: at most
a few requests to one host at once, all jobs together, and a pause between them.

The pause is the largest of the job's `delay`, robots.txt's Crawl-delay and CRAWL_HOST_DELAY_S (capped at a
minute); with a pause, requests to the host go one at a time, as Firecrawl's `delay` does, and a request
without one still waits for the pause the host's last request asked for, whichever job made it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext

from agent.state.politeness import MAX_DELAY_S

MAX_IDLE_HOSTS = 1000  # hosts remembered with nobody at their gate, before the ones whose pause is over go


class HostGate:
    def __init__(self, concurrency: int) -> None:
        self._concurrency = concurrency
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._serial: dict[str, asyncio.Lock] = {}  # the queue of the requests that pause
        self._next_start: dict[str, float] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def turn(self, host: str, delay_s: float, slots: int | None = None) -> AsyncIterator[None]:
        """Wait for `host`'s turn; `slots`: how many at once instead of the gate's concurrency (the name is then
        no host's: a crawl's own bound, its maxConcurrency)."""
        delay_s = min(max(delay_s, 0.0), MAX_DELAY_S)
        self._users[host] = self._users.get(host, 0) + 1
        try:
            # the pausing queue before a slot: a job waiting out its pause holds no slot another job could use
            async with self._one_at_a_time(host, delay_s), \
                    self._slots.setdefault(host, asyncio.Semaphore(slots or self._concurrency)):
                wait = self._next_start.get(host, 0.0) - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                self._next_start[host] = max(self._next_start.get(host, 0.0), time.monotonic() + delay_s)
                yield
        finally:
            self._users[host] -= 1
            if len(self._users) > MAX_IDLE_HOSTS:
                self._forget_idle_hosts()

    def _one_at_a_time(self, host: str, delay_s: float) -> AbstractAsyncContextManager:
        return self._serial.setdefault(host, asyncio.Lock()) if delay_s else nullcontext()

    def _forget_idle_hosts(self) -> None:
        now = time.monotonic()
        for host in [h for h, users in self._users.items() if not users and self._next_start.get(h, 0.0) <= now]:
            for table in (self._users, self._slots, self._serial, self._next_start):
                table.pop(host, None)
