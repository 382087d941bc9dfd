"""Per-stage wall-clock timings, reported in every search response as `timings_ms`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimings:
    def __init__(self) -> None:
        self._started = time.perf_counter()
        self._stages: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block and add it to stage `name` (a stage may run more than once)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, (time.perf_counter() - started) * 1000)

    def add(self, name: str, ms: float) -> None:
        self._stages[name] = self._stages.get(name, 0.0) + ms

    def as_dict(self) -> dict[str, float]:
        """Every stage plus `total` (since this object was made), in milliseconds."""
        total = (time.perf_counter() - self._started) * 1000
        return {**{k: round(v, 1) for k, v in self._stages.items()}, "total": round(total, 1)}
