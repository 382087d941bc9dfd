"""The routing state of the extra candidate sources' tiers (SEARCH_SOURCES): when each tier may be asked again,
its consecutive failures, and its calls of the day. Kept in the process or, with REDIS_URL, in Redis, so that
replicas share it (state/tiers/); the router (upstream/sources/routing.py) decides what the values mean.

Every time is in epoch seconds of the router's clock (injected in tests), handed to the store with each call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Hold = Literal["parked", "backoff"]  # out of credit until its reset; failing, backed off


@dataclass(frozen=True)
class TierState:
    parked_until: float = 0.0  # a 402: not asked before this
    backoff_until: float = 0.0  # a 429, a 5xx, a timeout or garbage: not asked before this
    failures: int = 0  # consecutive failures that backed it off
    calls_today: int = 0  # calls of the day it was read for

    def held_until(self, now: float) -> float | None:
        """When it may be asked again; None when it may be now."""
        until = max(self.parked_until, self.backoff_until)
        return until if until > now else None


@dataclass(frozen=True)
class Claim:
    granted: bool  # a call may be made (and was counted against the day's cap)
    state: TierState  # as it was before the claim


class TierStore(Protocol):
    async def claim(self, tier: str, now: float, day: str, daily_cap: int) -> Claim:
        """Count one call of `tier` on `day` unless it is held at `now` or `daily_cap` (0: none) calls were made."""

    async def failed(self, tier: str) -> int:
        """One more consecutive failure of `tier`; returns how many there are now."""

    async def hold(self, tier: str, hold: Hold, until: float) -> None:
        """`tier` is not asked before `until`."""

    async def recovered(self, tier: str) -> None:
        """`tier` answered: its failures and back-off are forgotten (a park stays until its reset)."""

    async def states(self, tiers: list[str], day: str) -> dict[str, TierState]:
        """Each tier's state, its calls counted on `day`."""

    async def warning(self) -> str | None:
        """Why the state is kept per replica when it should be shared (Redis out of reach); None otherwise."""
