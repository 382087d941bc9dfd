"""Freed heap memory back to the system after model calls.

glibc keeps in its arenas what torch frees after batches of varying shapes, so semantic-svc grew all through a
10-minute mixed soak (884 MiB after 30 s, 1135 MiB at 10 minutes, still 1087 MiB a quiet minute later).
`malloc_trim` hands it back: encoding random batches for 4 minutes, a process stayed at 600 MiB with a trim
after each call and rose to 890 MiB without (MALLOC_ARENA_MAX=2 did not help: 866 MiB). With this trimmer the
soak's semantic-svc stayed between 700 and 863 MiB and was at 704 after the quiet minute. A trim takes about
3 ms (a model call 15-600 ms), so under load it runs at most once per `every_s`. Where the C library has no
malloc_trim (musl, macOS) it does nothing.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable

TRIM_EVERY_S = 1.0


def _malloc_trim() -> Callable[[], object] | None:
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None
    return lambda: trim(0)


class HeapTrimmer:
    """Trims after model calls at most once per `every_s` while the model is busy, and once more when it goes
    idle, so that what the last calls freed is returned too."""

    def __init__(self, every_s: float = TRIM_EVERY_S, trim: Callable[[], object] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._every_s, self._clock = every_s, clock
        self._trim = trim if trim is not None else _malloc_trim()
        self._last = -every_s
        self.untrimmed = False  # a model call ran since the last trim

    def after_call(self) -> None:
        """On the model's thread, after each model call."""
        self.untrimmed = True
        if self._clock() - self._last >= self._every_s:
            self.release()

    def release(self) -> None:
        self._last, self.untrimmed = self._clock(), False
        if self._trim is not None:
            self._trim()
