"""Google-style `tbs` time filters → a SearXNG time_range plus an exact window for post-filtering.

SearXNG knows only day, week, month and year, so each filter asks SearXNG for the smallest range that
covers it and then drops dated results outside the exact window (`qdr:h2` → day, then "not older than
2 hours"). Results without a date are kept: nothing says they are out of range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from agent.errors import BadRequest

_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1),
          "m": timedelta(days=31), "y": timedelta(days=366)}
_SEARXNG_RANGES = [("day", timedelta(days=1)), ("week", timedelta(days=7)),
                   ("month", timedelta(days=31)), ("year", timedelta(days=366))]
_QDR = re.compile(r"^(?:qdr:)?([hdwmy])(\d*)$", re.IGNORECASE)
_MAX_COUNT_DIGITS = 9
_DATE_FORMATS = ("%m/%d/%Y", "%Y-%m-%d")
ACCEPTED = "qdr:h|d|w|m|y with an optional count (qdr:m6), cdr:1,cd_min:MM/DD/YYYY,cd_max:MM/DD/YYYY, sbd:1"


@dataclass(frozen=True)
class TimeFilter:
    time_range: str | None = None  # what SearXNG is asked for
    since: datetime | None = None  # exact window, applied to results that carry a date
    until: datetime | None = None
    sort_by_date: bool = False

    def admits(self, published: datetime | None) -> bool:
        if published is None:
            return True
        return (self.since is None or published >= self.since) and (self.until is None or published <= self.until)


def parse_tbs(tbs: str | None, now: datetime | None = None) -> TimeFilter:
    """Parse a tbs string such as `qdr:w`, `qdr:h2`, `sbd:1,qdr:m` or `cdr:1,cd_min:1/1/2024,cd_max:6/30/2024`."""
    if not tbs or not tbs.strip():
        return TimeFilter()
    now = now or datetime.now(UTC)
    parts = [p.strip() for p in tbs.split(",") if p.strip()]
    fields = dict(p.split(":", 1) if ":" in p else (p, "") for p in parts)
    sort_by_date = fields.pop("sbd", "0") == "1"
    if fields.pop("cdr", None) == "1":
        return _custom_range(fields.pop("cd_min", None), fields.pop("cd_max", None), now, sort_by_date, fields)
    recent = [p for p in parts if not p.lower().startswith("sbd:")]
    if not recent:
        return TimeFilter(sort_by_date=sort_by_date)
    if len(recent) > 1 or not (match := _QDR.match(recent[0])):
        raise BadRequest(f"Unsupported tbs {tbs!r}; accepted forms: {ACCEPTED}")
    unit, digits = match.group(1).lower(), match.group(2) or "1"
    if len(digits) > _MAX_COUNT_DIGITS or int(digits) < 1:
        raise BadRequest(f"Unsupported tbs {tbs!r}: the count must be between 1 and {'9' * _MAX_COUNT_DIGITS}")
    try:
        span = _UNITS[unit] * int(digits)
        since = now - span
    except OverflowError:  # further back than datetime reaches: no time limit at all
        return TimeFilter(sort_by_date=sort_by_date)
    return TimeFilter(covering_range(span), since=since, sort_by_date=sort_by_date)


def covering_range(span: timedelta) -> str | None:
    """The smallest SearXNG time_range that covers `span`, or None when even a year is too short."""
    return next((name for name, length in _SEARXNG_RANGES if span <= length), None)


def _custom_range(lo: str | None, hi: str | None, now: datetime, sort_by_date: bool, rest: dict) -> TimeFilter:
    if rest:
        raise BadRequest(f"Unsupported tbs fields {sorted(rest)}; accepted forms: {ACCEPTED}")
    since = _parse_date(lo, "cd_min") if lo else None
    until = _end_of_day(_parse_date(hi, "cd_max")) if hi else None
    if since and until and since > until:
        raise BadRequest("Unsupported tbs: cd_min is after cd_max")
    time_range = covering_range(now - since) if since else None
    return TimeFilter(time_range, since, until, sort_by_date)


def _end_of_day(day: datetime) -> datetime:
    return day.replace(hour=23, minute=59, second=59, microsecond=999_999)


def _parse_date(text: str, name: str) -> datetime:
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise BadRequest(f"Unsupported tbs: {name} {text!r} is not a date (MM/DD/YYYY)")
