"""Scoring that stops at the deadline with what it has (anytime ranking).

The texts go to semantic-svc in priority order, in batches sized to the time left by the model's measured speed
(semantic-svc reports milliseconds per 1,000 characters with every answer), two batches in flight so that the
model never waits on the network between them. When everything fits in three quarters of the time left it goes
in one call: each call costs the model a fixed price (large on a contended machine), and while a cross-encoder
scores each pair alone, the offline reranker normalizes its scores over the texts of a call, so on a machine
with time to spare the ranking is the one the whole set gets. When the next batch
cannot finish in time it is not sent, and a batch still out at the deadline is abandoned (semantic-svc gives no
model time to a request its caller left).
Whatever was scored by then is the ranking's evidence; the rest keeps the place its mode gives unscored texts.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agent.core.ratings import Ratings
from agent.errors import Degraded

# texts → scores; raises Degraded. The float is the time the call may take.
ScoreBatch = Callable[[list[str], float], Awaitable[Ratings]]
Pace = Callable[[], float | None]  # the model's milliseconds per 1,000 characters; None before it is known

PARTIAL = "the deadline came before semantic-svc scored every text"  # how a warning says the ranking is partial
IN_FLIGHT = 2
# fewer texts than this a call spend more on the call than on the texts: on 2 cores beside six busy processes
# one 1,200-character passage took 1.3 s and 28 texts 4.4 s (the model's threads wait on each other)
MIN_BATCH = 8
# and so a set that should fit goes in one call: beside six busy processes two calls of 14 cost hybrid's rerank
# 0.75 s more at the median than one of 28, and four answers lost texts to the deadline (dev set)
ONE_CALL_SHARE = 0.75


@dataclass(frozen=True)
class Partial:
    """One score per text in the order given, and its probability of relevance; None where the deadline came first
    (a probability: also where the model has no calibration)."""

    scores: tuple[float | None, ...]
    probabilities: tuple[float | None, ...] = ()

    @property
    def scored(self) -> int:
        return sum(s is not None for s in self.scores)

    @property
    def complete(self) -> bool:
        return self.scored == len(self.scores)

    def note(self) -> str | None:
        """The warning a partial ranking carries; None when every text was scored."""
        if self.complete:
            return None
        return f"{PARTIAL}: ranked with {self.scored} of {len(self.scores)} texts scored"


async def score_in_time(texts: Sequence[str], score: ScoreBatch, until: float, pace: Pace, extra_chars: int = 0,
                        ahead_s: float = 0.0, clock: Callable[[], float] = time.monotonic) -> Partial:
    """Scores of `texts` (best first: the first texts are worth the most), as many as semantic-svc returns before
    `until` (a `clock` time). `extra_chars` is what each text costs beyond its own characters (a reranker reads
    the query with every passage); `ahead_s`, the model work queued in semantic-svc's lane before these texts,
    which the batches are planned after. Raises Degraded when not one text could be scored."""
    scores: list[float | None] = [None] * len(texts)
    probabilities: list[float | None] = [None] * len(texts)
    planner = _Planner([len(t) + extra_chars for t in texts], pace)
    flying: deque[tuple[int, int, asyncio.Task[Ratings]]] = deque()
    failure: Degraded | None = None
    try:
        while True:
            while len(flying) < IN_FLIGHT and (span := planner.next(until - ahead_s - clock())):
                start, stop = span
                flying.append((start, stop, asyncio.create_task(score(list(texts[start:stop]),
                                                                      max(until - clock(), 0.0)))))
            if not flying:
                break
            start, stop, task = flying.popleft()
            try:
                batch = await task
            except Degraded as e:
                failure = e
                break
            scores[start:stop] = batch.scores
            probabilities[start:stop] = batch.probabilities or [None] * len(batch)
            planner.done()
    finally:
        for _, _, task in flying:
            task.cancel()
        await asyncio.gather(*(task for _, _, task in flying), return_exceptions=True)
    partial = Partial(tuple(scores), tuple(probabilities))
    if texts and not partial.scored:
        raise failure or Degraded("the deadline came before semantic-svc could score a text")
    return partial


class _Planner:
    """Which texts go next: as many as the model can score in a slice of the time left, none once even the next
    text would finish past the deadline behind the batches already out."""

    def __init__(self, costs: list[int], pace: Pace) -> None:
        self._costs, self._pace = costs, pace
        self._sent = 0
        self._out_ms: deque[float] = deque()  # the estimate of each batch in flight, oldest first

    def next(self, left_s: float) -> tuple[int, int] | None:
        if self._sent >= len(self._costs) or left_s <= 0:
            return None
        ms_per_kchar = self._pace()
        if ms_per_kchar is None:  # nothing measured yet: a batch to learn from
            return self._send(min(MIN_BATCH, len(self._costs) - self._sent), 0.0)
        room_ms = left_s * 1000 - sum(self._out_ms)
        first_ms = self._costs[self._sent] * ms_per_kchar / 1000
        if first_ms > room_ms and self._sent:
            return None  # it would not come back in time: leave the model to work that can
        rest_ms = sum(self._costs[self._sent:]) * ms_per_kchar / 1000
        if rest_ms <= room_ms * ONE_CALL_SHARE:  # all of it, with time to spare: one call
            return self._send(len(self._costs) - self._sent, rest_ms)
        count, total_ms = 0, 0.0
        for cost in self._costs[self._sent:]:
            ms = cost * ms_per_kchar / 1000
            if count >= MIN_BATCH and total_ms + ms > room_ms / 2:
                break
            count, total_ms = count + 1, total_ms + ms
        return self._send(count, total_ms)

    def done(self) -> None:
        """The oldest batch out came back."""
        self._out_ms.popleft()

    def _send(self, count: int, estimate_ms: float) -> tuple[int, int]:
        span = (self._sent, self._sent + count)
        self._sent += count
        self._out_ms.append(estimate_ms)
        return span
