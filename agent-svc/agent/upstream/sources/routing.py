"""The extra candidate sources as one search sees them: each configured source asked concurrently, each through
its first tier that may be asked, all within one bound (seed 001: the hosted API beside SearXNG, bounded at 5 s).

Routing never costs money by surprise and never waits on a dead source:
- a 402 (or an out-of-credit error written in a 200) parks the tier until its reset, the tier's `reset_day` of
  the next month at 00:00 UTC;
- a 429, a 5xx, a body that is no answer, or a refused key backs it off: 15 minutes after the first failure,
  doubling with each consecutive one, at most 6 hours; an answer forgets them;
- a timeout is forgiven once (a cold or busy source answers the next call; measured with a second Wisp whose first
  answer took longer than the bound): it backs the tier off when the call before it failed too;
- a tier with `daily_cap` calls this UTC day is not called again before the next;
- a tier held in any of these ways is not called at all: the next tier is tried, then the search goes on without
  the source, and says so.
The state is the store's (core/tiers.py): the process's, or the replicas' in Redis. The clock is injected.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx

from agent import metrics
from agent.core.hits import Hit
from agent.core.tiers import TierState, TierStore
from agent.metrics import TierStatus
from agent.upstream.settings import SourcesSettings
from agent.upstream.sources.calls import Ask, Endpoint, Failure, SourceFailure
from agent.upstream.sources.kinds import KINDS, Kind

log = logging.getLogger("agent")
BACKOFF_FIRST_S = 15 * 60.0
BACKOFF_MAX_S = 6 * 3600.0


def backoff_s(failures: int) -> float:
    """How long a tier is backed off after its `failures`-th consecutive failure."""
    return min(BACKOFF_FIRST_S * 2 ** min(max(failures - 1, 0), 16), BACKOFF_MAX_S)


def next_reset(now: float, reset_day: int) -> float:
    """The first `reset_day` of a month, at 00:00 UTC, after `now`."""
    today = datetime.fromtimestamp(now, UTC)
    reset = today.replace(day=reset_day, hour=0, minute=0, second=0, microsecond=0)
    if reset <= today:
        reset = reset.replace(year=today.year + 1, month=1) if today.month == 12 else reset.replace(
            month=today.month + 1)
    return reset.timestamp()


def utc_day(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).date().isoformat()


@dataclass(frozen=True)
class Tier:
    source: str
    name: str
    endpoint: Endpoint
    daily_cap: int
    reset_day: int

    @property
    def key(self) -> str:
        """Its name in the store."""
        return f"{self.source}/{self.name}"


@dataclass(frozen=True)
class Source:
    name: str
    kind: str
    ask: Kind
    tiers: tuple[Tier, ...]
    max_results: int
    text: bool


@dataclass(frozen=True)
class Answered:
    """One source's part of a search: its hits, the tier that gave them, or why it gave none."""

    source: str
    hits: tuple[Hit, ...] = ()
    tier: str | None = None
    skipped: str | None = None


class CandidateSources:
    def __init__(self, sources: Sequence[Source], http: httpx.AsyncClient, store: TierStore, timeout_s: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.sources, self.timeout_s = tuple(sources), timeout_s
        self._http, self._store, self._clock = http, store, clock

    @classmethod
    def of(cls, settings: SourcesSettings, http: httpx.AsyncClient, store: TierStore,
           clock: Callable[[], float] = time.time) -> CandidateSources:
        sources = [Source(s.name, s.kind, KINDS[s.kind], tuple(
            Tier(s.name, t.name, Endpoint(t.url, t.key.get_secret_value(), settings.source_max_bytes,
                                          settings.source_text_chars), t.daily_cap, t.reset_day) for t in s.tiers),
            s.max_results, s.text) for s in settings.search_sources]
        return cls(sources, http, store, settings.sources_timeout_s, clock)

    async def search(self, ask: Ask, bound_s: float) -> tuple[Answered, ...]:
        """Every source's part, asked concurrently; none takes longer than `bound_s` (or SOURCES_TIMEOUT_S)."""
        deadline = time.monotonic() + min(bound_s, self.timeout_s)
        return tuple(await asyncio.gather(*(self._asked(s, replace(ask, max_results=s.max_results, text=s.text),
                                                        deadline) for s in self.sources)))

    async def _asked(self, source: Source, ask: Ask, deadline: float) -> Answered:
        """The first tier that may be asked and answers; why none did otherwise."""
        why: list[str] = []
        for tier in source.tiers:
            left = deadline - time.monotonic()
            if left <= 0:
                why.append(f"{tier.name}: no time left")
                break
            now = self._clock()
            claim = await self._store.claim(tier.key, now, utc_day(now), tier.daily_cap)
            if not claim.granted:
                metrics.source_called(source.name, tier.name, "skipped")
                why.append(f"{tier.name} {_held(claim.state, now, tier.daily_cap)}")
                continue
            try:
                async with asyncio.timeout(left):
                    hits = await source.ask(self._http, tier.endpoint, ask, left)
            except SourceFailure as e:
                why.append(f"{tier.name} {await self._failed(source, tier, e.failure)}: {e}")
                continue
            except TimeoutError:
                why.append(f"{tier.name} {await self._failed(source, tier, 'slow')}: no answer in {left:.1f} s")
                continue
            except Exception as e:
                log.warning("source %s tier %s: answer unreadable (%s)", source.name, tier.name, type(e).__name__)
                why.append(f"{tier.name} {await self._failed(source, tier, 'garbage')}: unreadable answer")
                continue
            metrics.source_called(source.name, tier.name, "ok")
            if claim.state.failures or claim.state.backoff_until:
                await self._store.recovered(tier.key)
            return Answered(source.name, tuple(replace(h, found_by=(source.name,)) for h in hits), tier.name)
        return Answered(source.name, skipped="; ".join(why))

    async def _failed(self, source: Source, tier: Tier, failure: Failure) -> str:
        """Hold the tier as its failure says; what the warning says of it."""
        metrics.source_called(source.name, tier.name, failure)
        now = self._clock()
        if failure == "credit":
            until = next_reset(now, tier.reset_day)
            await self._store.hold(tier.key, "parked", until)
            return f"parked until {_iso(until)}"
        if failure == "rejected":
            return "failed"
        failures = await self._store.failed(tier.key)
        if failure == "slow":
            if failures == 1:
                return "timed out (backed off if its next call fails too)"
            failures -= 1  # the forgiven timeout does not lengthen the back-off
        until = now + backoff_s(failures)
        await self._store.hold(tier.key, "backoff", until)
        return f"backed off until {_iso(until)} (failure {failures} in a row)"

    async def report(self) -> dict[str, Any]:
        """Each tier's state now (for /readyz), also set in the /metrics gauges."""
        now = self._clock()
        tiers = [t for s in self.sources for t in s.tiers]
        states = await self._store.states([t.key for t in tiers], utc_day(now))
        report: dict[str, Any] = {"sources": {s.name: {"kind": s.kind, "tiers": [
            _tier_report(t, states[t.key], now) for t in s.tiers]} for s in self.sources}}
        if warning := await self._store.warning():
            report["warning"] = warning
        return report


def _status(state: TierState, now: float, daily_cap: int) -> TierStatus:
    if state.parked_until > now:
        return "parked"
    if state.backoff_until > now:
        return "backoff"
    return "capped" if daily_cap and state.calls_today >= daily_cap else "usable"


def _held(state: TierState, now: float, daily_cap: int) -> str:
    status = _status(state, now, daily_cap)
    if status == "capped":
        return f"capped ({daily_cap} calls today)"
    return f"{'parked' if status == 'parked' else 'backed off'} until {_iso(state.held_until(now) or now)}"


def _tier_report(tier: Tier, state: TierState, now: float) -> dict[str, Any]:
    status = _status(state, now, tier.daily_cap)
    metrics.source_tier_is(tier.source, tier.name, status, state.calls_today)
    until = state.held_until(now)
    return {"name": tier.name, "state": status, "until": _iso(until) if until else None,
            "failures": state.failures, "calls_today": state.calls_today, "daily_cap": tier.daily_cap or None}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
