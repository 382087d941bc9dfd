"""What each client has used, for Firecrawl's team endpoints: one credit per request that started work and
succeeded, and the requests in flight. The gate's Metering middleware (api/gate/usage.py) counts through `Meter`;
memory.py counts in the process, redis.py the credits of every replica in the Redis of REDIS_URL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Counted:
    """What a client has used over the period that began at `started` (both times in epoch seconds)."""

    started: float
    credits: int
    last_success: float | None


class Meter(Protocol):
    """What the Metering middleware counts and the team routes report."""

    def began(self, client: str) -> None: ...

    def ended(self, client: str, credited: bool) -> None: ...

    def in_flight(self, client: str) -> int:
        """`client`'s requests in flight on this replica."""

    async def counted(self, client: str) -> Counted:
        """`client`'s credits and last success, and when the period they cover began."""
