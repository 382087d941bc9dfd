"""How busy this process is: the ranked searches it is running. A mode may do less model work when busy, so
that under load answers stay ranked instead of falling back to SearXNG's order at the deadline."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class InFlight:
    def __init__(self) -> None:
        self.count = 0  # one event loop per process: no lock needed

    @contextmanager
    def one(self) -> Iterator[int]:
        """Count a ranked search while it runs; yields how many run, this one included."""
        self.count += 1
        try:
            yield self.count
        finally:
            self.count -= 1
