"""Per-client limits, their interface and wording: RATE_LIMIT_PER_MIN on the requests that start work, and
RANKED_CONCURRENCY_PER_KEY on the costly ones in flight (the gate, api/gate/admission.py, applies them).
memory.py counts in the process (one replica); redis.py in the Redis of REDIS_URL (every replica together, the
process's count while Redis is down)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from agent.errors import RateLimited

WINDOW_S = 60.0
COSTLY_RETRY_AFTER_S = 1  # a costly request takes about 0.5 to 8 s: a second later a slot is likely free

Release = Callable[[], Awaitable[None]]


class PerMinuteLimit(Protocol):
    async def hit(self, client: str) -> RateLimited | None:
        """Count one request of `client`; the 429 to answer when it is over the limit, else None."""


class CostlyCap(Protocol):
    per_client: int  # slots of one client (RANKED_CONCURRENCY_PER_KEY)

    async def take(self, client: str) -> Release:
        """Take a slot of `client`'s; returns what frees it. Raises RateLimited when all are taken."""


class SharedStore(Protocol):
    """Where limits are counted when it is not the process: its state for /readyz, and its connections."""

    async def warning(self) -> str | None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Limits:
    """What a service limits (None: no such limit), and the store they share, if any."""

    per_minute: PerMinuteLimit | None = None
    costly: CostlyCap | None = None
    store: SharedStore | None = field(default=None, repr=False)

    async def warnings(self) -> list[str]:
        """What /readyz says of the limits: why they are counted per process when they should not be."""
        found = await self.store.warning() if self.store else None
        return [found] if found else []

    async def close(self) -> None:
        if self.store:
            await self.store.close()


def over_per_minute(consumed: int, reset_in_s: float, wall_now: float) -> RateLimited:
    """The 429 of a client past its per-minute limit, as Firecrawl's limiter words it (its SDKs show it)."""
    wait = max(1, math.ceil(reset_in_s))
    resets = datetime.fromtimestamp(wall_now + reset_in_s, UTC).isoformat(timespec="seconds")
    return RateLimited(f"Rate limit exceeded. Consumed (req/min): {consumed}, Remaining (req/min): 0. "
                       f"Please retry after {wait}s, resets at {resets}", wait)


def over_cap(running: int, allowed: int) -> RateLimited:
    """The 429 of a client with all its costly slots taken."""
    return RateLimited(f"Rate limit exceeded. Concurrent ranked or rich requests: {running}, allowed: {allowed}. "
                       f"Please retry after {COSTLY_RETRY_AFTER_S}s, or when one of them has finished",
                       COSTLY_RETRY_AFTER_S)
