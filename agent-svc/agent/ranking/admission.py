"""Admission to semantic-svc's model lane: a ranked search asks the model only when the work queued there leaves
time for the search's first texts before its scoring deadline.

A search that asks anyway waits in the lane until its deadline, most often to get nothing back, while its texts
hold the queue ahead of searches that could still be answered: 8 concurrent hybrid clients on 2 cores kept
SearXNG's order in 32 of 53 answers, after 7.9 s. Turned away, a search ranks by its first pass at once
(runner.py), and the lane holds no more work than it can finish in time.
"""

from __future__ import annotations

from agent.errors import Degraded
from agent.ranking.anytime import MIN_BATCH


class LaneFull(Degraded):
    """The model's queued work would outlast the time a search has left to score."""


def admit(wait_s: float, ms_per_kchar: float | None, text_chars: int, left_s: float, waits: int = 1) -> None:
    """Raises LaneFull when `waits` waits of `wait_s` for the queued model work, and a first batch (MIN_BATCH texts
    of `text_chars` characters at `ms_per_kchar`; None: not measured yet), would end after `left_s`. A search
    that waits once per pass meets the queue refilled by the others at each: semantic mode waits twice."""
    first_batch_s = MIN_BATCH * text_chars * (ms_per_kchar or 0.0) / 1_000_000
    if waits * wait_s + first_batch_s > left_s:
        each = f" before each of its {waits} passes" if waits > 1 else ""
        raise LaneFull(f"semantic-svc's model lane would not reach this search's texts in time ({wait_s:.1f} s "
                       f"of work queued{each}, {left_s:.1f} s left to score)")
