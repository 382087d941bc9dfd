"""The recency weight of the ranked modes: for time-sensitive queries only, fresher pages gain up to a share of
the spread of the candidates' scores by their published date (seed 000 stage 2), before any pruning."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

_TIME_SENSITIVE = re.compile(r"\b(latest|newest|recent|recently|current|currently|today|this (week|month|year)|"
                             r"(19|20)\d\d)\b", re.IGNORECASE)
RECENCY_HALF_LIFE_DAYS = 365.0
RECENCY_NOTE = "time-sensitive query: fresher pages were weighted up"


def is_time_sensitive(query: str, tbs: str | None) -> bool:
    """A time filter was asked for, or the query asks for the latest or names a year."""
    return bool(tbs) or bool(_TIME_SENSITIVE.search(query))


def freshness(published: datetime | None, now: datetime | None = None) -> float:
    """1 for a page published now, halving every year; 0 for an undated one (nothing to prefer it for)."""
    if published is None:
        return 0.0
    moment = published if published.tzinfo else published.replace(tzinfo=UTC)
    age_days = max(((now or datetime.now(UTC)) - moment).total_seconds() / 86400, 0.0)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def recency_bonus(published: datetime | None, scale: float) -> float:
    """What a page gains by its freshness, at most `scale` (the recency weight × the spread of the scores)."""
    return scale * freshness(published)
