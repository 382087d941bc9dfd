"""Per-host politeness: at most a few requests to one host at once, and a pause between them.

The pause is the largest of the crawl's `delay`, robots.txt's Crawl-delay and CRAWL_HOST_DELAY_S (capped at
a minute); with a pause, requests to the host go one at a time, as Firecrawl's `delay` does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

MAX_DELAY_S = 60.0


class HostGate:
    def __init__(self, concurrency: int) -> None:
        self._concurrency = concurrency
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._next_start: dict[str, float] = {}

    @asynccontextmanager
    async def turn(self, host: str, delay_s: float) -> AsyncIterator[None]:
        delay_s = min(max(delay_s, 0.0), MAX_DELAY_S)
        slots = self._slots.setdefault(host, asyncio.Semaphore(1 if delay_s else self._concurrency))
        async with slots:
            wait = self._next_start.get(host, 0.0) - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._next_start[host] = time.monotonic() + delay_s
            yield
