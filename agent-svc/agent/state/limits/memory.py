"""The limits counted in the process: exact for one replica, and what each replica falls back to while the
Redis of REDIS_URL is down (redis.py). Nothing here awaits: the methods are async for the interface."""

from __future__ import annotations

import time
from collections.abc import Callable

from agent.errors import RateLimited
from agent.state.limits import WINDOW_S, Limits, Release, over_cap, over_per_minute
from agent.state.settings import LimitsSettings

Clock = Callable[[], float]


class _Window:
    __slots__ = ("count", "ends")

    def __init__(self, ends: float) -> None:
        self.ends = ends
        self.count = 0


class RateLimiter:
    """A fixed one-minute window per client, opened by its first request, as Firecrawl's own limiter counts
    (so its 429 wording fits): `per_minute` requests, then 429s until the window ends."""

    def __init__(self, per_minute: int, clock: Clock = time.monotonic, wall_clock: Clock = time.time) -> None:
        self.per_minute = per_minute
        self._clock, self._wall_clock = clock, wall_clock
        self._windows: dict[str, _Window] = {}
        self._next_sweep = clock() + WINDOW_S

    async def hit(self, client: str) -> RateLimited | None:
        """Count one request of `client`; the 429 to answer when it is over the limit, else None."""
        now = self._clock()
        window = self._windows.get(client)
        if window is None or now >= window.ends:
            self._sweep(now)
            window = self._windows[client] = _Window(now + WINDOW_S)
        window.count += 1
        if window.count <= self.per_minute:
            return None
        return over_per_minute(window.count, window.ends - now, self._wall_clock())

    def _sweep(self, now: float) -> None:
        """Forget ended windows, at most once a minute: memory stays bounded by the clients of one minute."""
        if now < self._next_sweep:
            return
        self._windows = {client: w for client, w in self._windows.items() if w.ends > now}
        self._next_sweep = now + WINDOW_S


class ConcurrencyCap:
    """At most `per_client` costly requests of one client at once; one more is a 429 (not a queue: a queue
    would hold the client's connection while its own requests use the CPU)."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self._running: dict[str, int] = {}

    async def take(self, client: str) -> Release:
        """Take a slot of `client`'s; returns what frees it. Raises RateLimited when all are taken."""
        running = self._running.get(client, 0)
        if running >= self.per_client:
            raise over_cap(running, self.per_client)
        self._running[client] = running + 1

        async def release() -> None:
            self._release(client)

        return release

    def _release(self, client: str) -> None:
        running = self._running[client] - 1
        if running:
            self._running[client] = running
        else:
            del self._running[client]


def process_limits(settings: LimitsSettings) -> Limits:
    """The limits of `settings`, counted by this process alone."""
    return Limits(RateLimiter(settings.rate_limit_per_min) if settings.rate_limit_per_min else None,
                  ConcurrencyCap(settings.ranked_concurrency_per_key) if settings.ranked_concurrency_per_key else None)
