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


def iso_instant(epoch: float | None) -> str | None:
    """An epoch in seconds as Firecrawl writes instants (`2026-12-04T21:19:00.000Z`); None stays None."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
