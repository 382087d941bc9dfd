import sys

import pytest

from semantic.lane.heap import HeapTrimmer, _malloc_trim


def test_after_calls_it_trims_at_most_once_an_interval_and_release_always_trims() -> None:
    now, trims = [0.0], []
    heap = HeapTrimmer(every_s=1.0, trim=lambda: trims.append(now[0]), clock=lambda: now[0])
    for t in (0.0, 0.4, 0.9, 1.0, 1.5, 3.2):
        now[0] = t
        heap.after_call()
    assert trims == [0.0, 1.0, 3.2] and not heap.untrimmed
    now[0] = 3.5
    heap.after_call()
    assert heap.untrimmed
    heap.release()
    assert trims == [0.0, 1.0, 3.2, 3.5] and not heap.untrimmed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_finds_glibc_malloc_trim() -> None:
    trim = _malloc_trim()
    assert trim is not None
    trim()
