"""SearXNG's engine pool as its recent answers show it: which engines gave results, which SearXNG reported
unresponsive and why (seed 001 watched its pool this way: one index answering where five were configured is a
search that looks healthy and is not). /readyz reports it; nothing is asked of SearXNG for it.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

RECENT_ANSWERS = 500  # kept at most, whatever the window: the memory stays bounded under any load


@dataclass(frozen=True)
class _Answer:
    at: float
    answering: frozenset[str]
    unresponsive: tuple[tuple[str, str], ...]


class EngineHealth:
    def __init__(self, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._window_s, self._clock = window_s, clock
        self._answers: deque[_Answer] = deque(maxlen=RECENT_ANSWERS)

    def record(self, answering: Iterable[str], unresponsive: Iterable[tuple[str, str]]) -> None:
        """One SearXNG answer: the engines its results came from, and the (engine, reason) it reported."""
        self._answers.append(_Answer(self._clock(), frozenset(answering), tuple(unresponsive)))

    def report(self) -> dict[str, Any]:
        """The answers of the last `window_s` seconds: how many, how often each engine gave results or failed
        (with its last reason), and the median count of engines giving results to one answer (seed 001's gate
        wanted 2 independent indexes)."""
        since = self._clock() - self._window_s
        recent = [a for a in self._answers if a.at >= since]
        answered = Counter(e for a in recent for e in a.answering)
        failed = Counter(e for a in recent for e, _ in a.unresponsive)
        reasons = {e: reason for a in recent for e, reason in a.unresponsive}  # the latest reason wins
        return {
            "window_s": self._window_s,
            "answers": len(recent),
            "answering": sorted(answered),
            "unresponsive": sorted(set(failed) - set(answered)),
            "engines": {e: {"answered": answered[e], "unresponsive": failed[e], "last_reason": reasons.get(e)}
                        for e in sorted(answered | failed)},
            "median_engines_answering": statistics.median(len(a.answering) for a in recent) if recent else None,
        }
