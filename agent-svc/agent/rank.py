"""Ranking decisions shared by the ranked modes: the relative-margin prune and the recency weight.

Seed 000's decision record: prune with a margin relative to the top score, not a fixed threshold (scores are
not calibrated across queries) nor a fixed count (some queries have one good source, some five). The best
candidate always survives.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

_TIME_SENSITIVE = re.compile(r"\b(latest|newest|recent|recently|current|currently|today|this (week|month|year)|"
                             r"(19|20)\d\d)\b", re.IGNORECASE)
RECENCY_HALF_LIFE_DAYS = 365.0
RRF_K = 10  # small pools (about 20 candidates): a smaller k than the usual 60 keeps the top ranks decisive
C = TypeVar("C")


def within_margin(scores: Sequence[float], margin: float) -> list[bool]:
    """Which scores lie within `margin` of the best one (the best always does)."""
    if not scores:
        return []
    top = max(scores)
    return [top - s <= margin for s in scores]


def fused_order(candidates: list[C], score: Callable[[C], float]) -> list[C]:
    """Candidates (in SearXNG's order) by reciprocal rank fusion of that order and `score`'s order."""
    by_score = sorted(range(len(candidates)), key=lambda i: score(candidates[i]), reverse=True)
    fused = [1 / (RRF_K + i + 1) for i in range(len(candidates))]
    for rank, i in enumerate(by_score, 1):
        fused[i] += 1 / (RRF_K + rank)
    return [candidates[i] for i in sorted(range(len(candidates)), key=lambda i: fused[i], reverse=True)]


def is_time_sensitive(query: str, tbs: str | None) -> bool:
    """A time filter was asked for, or the query asks for the latest or names a year (seed 000 stage 2)."""
    return bool(tbs) or bool(_TIME_SENSITIVE.search(query))


def freshness(published: datetime | None, now: datetime | None = None) -> float:
    """1 for a page published now, halving every year; 0 for an undated one (nothing to prefer it for)."""
    if published is None:
        return 0.0
    moment = published if published.tzinfo else published.replace(tzinfo=UTC)
    age_days = max(((now or datetime.now(UTC)) - moment).total_seconds() / 86400, 0.0)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
