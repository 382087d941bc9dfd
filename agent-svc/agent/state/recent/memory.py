"""The Documents of recent scrapes, by their `metadata.scrapeId`, for GET /v2/scrape/{id}: in memory, bounded by
count, by bytes (of their JSON) and by age; the oldest go first. A restart forgets them all. With REDIS_URL the
replicas keep them in Redis instead (recent_redis.py), behind the same two calls."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent.config import Settings
from agent.core.expiring import ExpiringMap


@dataclass(frozen=True)
class Kept:
    owner: str | None  # the API key that scraped it; None when keys are off (everyone's)
    document: dict[str, Any]


@dataclass(frozen=True)
class Keepable:
    """A Document that fits the bounds, as it is kept: its id and its JSON."""

    scrape_id: str
    encoded: str


class Recent(Protocol):
    async def put(self, owner: str | None, document: dict[str, Any]) -> None:
        """Keep a scrape's Document under its scrapeId, unless the bounds or another client's Document of that
        id say not to; never raises."""

    async def get(self, scrape_id: str) -> Kept | None:
        """The kept scrape of that id, unless it has expired."""


def keepable(document: dict[str, Any], max_count: int, max_bytes: int, ttl_s: float) -> Keepable | None:
    """The Document's id and JSON when it may be kept: not with no time to keep it (SCRAPE_KEEP_S=0), no room
    (SCRAPE_KEEP_COUNT=0), no scrapeId, or JSON larger than the whole budget."""
    scrape_id = document.get("metadata", {}).get("scrapeId")
    if not scrape_id or not max_count or ttl_s <= 0:
        return None
    encoded = json.dumps(document, separators=(",", ":"))  # ASCII (json's default): its length is its bytes
    return Keepable(scrape_id, encoded) if len(encoded) <= max_bytes else None


def recent_scrapes(settings: Settings) -> RecentScrapes:
    """This process's recent scrapes, bounded by SCRAPE_KEEP_COUNT, SCRAPE_KEEP_BYTES and SCRAPE_KEEP_S."""
    return RecentScrapes(settings.scrape_keep_count, settings.scrape_keep_bytes, settings.scrape_keep_s)


@dataclass(frozen=True)
class _Entry:
    expires: float
    size: int
    kept: Kept


class RecentScrapes:
    def __init__(self, max_count: int, max_bytes: int, ttl_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_count, self.max_bytes, self.ttl_s = max_count, max_bytes, ttl_s
        self._clock = clock
        self._kept: ExpiringMap[_Entry] = ExpiringMap(clock)
        self._bytes = 0

    async def put(self, owner: str | None, document: dict[str, Any]) -> None:
        """Keep a scrape's Document under its scrapeId (when `keepable`); an id another client's Document holds
        is not taken over."""
        if (new := keepable(document, self.max_count, self.max_bytes, self.ttl_s)) is None:
            return
        self._expire()
        if (held := self._kept.get(new.scrape_id)) is not None:
            if held.kept.owner != owner:
                return
            self._drop(new.scrape_id)
        self._kept.put(new.scrape_id, _Entry(self._clock() + self.ttl_s, len(new.encoded), Kept(owner, document)))
        self._bytes += len(new.encoded)
        while len(self._kept) > self.max_count or self._bytes > self.max_bytes:
            self._drop(next(self._kept.items())[0])

    def __len__(self) -> int:
        """How many Documents are held, the expired among them until a read forgets them."""
        return len(self._kept)

    async def get(self, scrape_id: str) -> Kept | None:
        """The kept scrape of that id, unless it has expired."""
        self._expire()
        entry = self._kept.get(scrape_id)
        return entry.kept if entry is not None else None

    def _expire(self) -> None:
        self._bytes -= sum(entry.size for entry in self._kept.expire())

    def _drop(self, scrape_id: str) -> None:
        self._bytes -= self._kept.pop(scrape_id).size
