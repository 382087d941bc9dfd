"""How long a model call sent to semantic-svc now would wait in its model lane, as one agent-svc process sees it.

semantic-svc reports with every /rerank and /similarity answer the model time that its queued interactive work
needs (`queued_ms`, by its measured speeds). That figure counts every caller's work, other agent-svc replicas'
included, but it ages: after it the lane drains as the clock runs, while new work comes. So the wait is the last
report less the time since, plus the model time of this process's calls sent since then and not answered yet.
Nothing goes stale: without answers the report drains to nothing by itself, and a call leaves the count when its
answer, or its failure, comes. Behind a balancer of several semantic-svc replicas the report is the last
answering replica's while this process's calls since are all counted, wherever they went: the estimate errs
towards a longer wait.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class LaneWait:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._reported_ms, self._reported_at = 0.0, -math.inf  # before a report: every call out counts
        self._out: dict[object, tuple[float, float]] = {}  # each call out: (when it was sent, its model ms)

    def reported(self, queued_ms: float) -> None:
        """semantic-svc's `queued_ms`, from the answer that just came."""
        self._reported_ms, self._reported_at = queued_ms, self._clock()

    @contextmanager
    def sending(self, model_ms: float) -> Iterator[None]:
        """While a call that needs `model_ms` of model time is out."""
        token = object()
        self._out[token] = (self._clock(), model_ms)
        try:
            yield
        finally:
            del self._out[token]

    def wait_s(self) -> float:
        """Seconds a call sent now would wait before the model starts on it."""
        now = self._clock()
        drained_ms = max(self._reported_ms - (now - self._reported_at) * 1000, 0.0)
        since_ms = sum(ms for sent, ms in self._out.values() if sent > self._reported_at)
        return (drained_ms + since_ms) / 1000
