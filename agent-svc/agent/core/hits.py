"""What SearXNG gives: one search result as it returned it, whichever dialect it spoke, and the catalog of
engines it offers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Hit:
    """One SearXNG result, normalized across dialects; absent optional values are None, never ""."""

    url: str
    title: str
    content: str
    published: datetime | None = None
    engines: tuple[str, ...] = ()
    category: str | None = None
    img_src: str | None = None
    thumbnail: str | None = None
    resolution: tuple[int, int] | None = None


@dataclass(frozen=True)
class EngineCatalog:
    """What a SearXNG instance offers, from its /config: engine name → its categories."""

    engines: dict[str, frozenset[str]]
    categories: frozenset[str]
