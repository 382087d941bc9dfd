"""Dates as results and pages give them, made comparable."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_iso(text: object) -> datetime | None:
    """An ISO-8601 date or date-time; one without a zone is taken as UTC. None for anything else."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def iso_utc(epoch: float) -> str:
    """A time.time() value as Firecrawl writes times: ISO-8601 in UTC, to the millisecond, with a `Z`."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
