"""What a search source gives: one result as SearXNG (or another source) returned it, whichever dialect it spoke,
and the catalog of engines SearXNG offers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Hit:
    """One result, normalized across dialects; absent optional values are None, never ""."""

    url: str
    title: str
    content: str
    published: datetime | None = None
    engines: tuple[str, ...] = ()
    category: str | None = None
    img_src: str | None = None
    thumbnail: str | None = None
    resolution: tuple[int, int] | None = None
    found_by: tuple[str, ...] = ("searxng",)  # the sources that returned it: searxng, index, a SEARCH_SOURCES name
    text: str | None = None  # the page's text, when the source that found it supplied it (no fetch needed)


@dataclass(frozen=True)
class EngineCatalog:
    """What a SearXNG instance offers, from its /config: engine name → its categories."""

    engines: dict[str, frozenset[str]]
    categories: frozenset[str]
