"""Per-host politeness, one gate for every crawl, batch scrape and map: at most a few requests to one host at
once, all jobs together, and a pause between them. memory.py's gate is the process's; redis.py's is the
replicas' (REDIS_URL), on leased slots."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

MAX_DELAY_S = 60.0


class Gate(Protocol):
    """Where a request to a host waits its turn: this process's HostGate, or the replicas' one on Redis
    (redis.py)."""

    def turn(self, host: str, delay_s: float, slots: int | None = None) -> AbstractAsyncContextManager[None]: ...
