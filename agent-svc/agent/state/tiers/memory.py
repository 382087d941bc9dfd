"""The tier states of one process."""

from __future__ import annotations

from dataclasses import replace

from agent.core.tiers import Claim, Hold, TierState

DAYS_KEPT = 2  # a day's call counts are kept one day past it, for a clock that crosses midnight mid-request


class ProcessTiers:
    def __init__(self) -> None:
        self._states: dict[str, TierState] = {}
        self._calls: dict[tuple[str, str], int] = {}

    async def claim(self, tier: str, now: float, day: str, daily_cap: int) -> Claim:
        state = self._state(tier, day)
        capped = daily_cap > 0 and state.calls_today >= daily_cap
        if state.held_until(now) is not None or capped:
            return Claim(False, state)
        self._count(tier, day)
        return Claim(True, state)

    async def failed(self, tier: str) -> int:
        state = self._states.get(tier, TierState())
        self._states[tier] = replace(state, failures=state.failures + 1)
        return state.failures + 1

    async def hold(self, tier: str, hold: Hold, until: float) -> None:
        state = self._states.get(tier, TierState())
        self._states[tier] = replace(state, **{f"{hold}_until": until})

    async def recovered(self, tier: str) -> None:
        state = self._states.get(tier, TierState())
        self._states[tier] = replace(state, failures=0, backoff_until=0.0)

    async def states(self, tiers: list[str], day: str) -> dict[str, TierState]:
        return {tier: self._state(tier, day) for tier in tiers}

    async def warning(self) -> str | None:
        return None

    def _state(self, tier: str, day: str) -> TierState:
        return replace(self._states.get(tier, TierState()), calls_today=self._calls.get((tier, day), 0))

    def _count(self, tier: str, day: str) -> None:
        self._calls[(tier, day)] = self._calls.get((tier, day), 0) + 1
        if len({d for _, d in self._calls}) > DAYS_KEPT:
            oldest = min(d for _, d in self._calls)
            self._calls = {key: n for key, n in self._calls.items() if key[1] != oldest}
