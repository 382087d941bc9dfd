"""The Documents of recent scrapes, by their `metadata.scrapeId`, for GET /v2/scrape/{id}: in this process's memory,
bounded by count, by bytes (of their JSON) and by age; the oldest go first. A restart forgets them all."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.core.expiring import ExpiringMap
from agent.state.recent import Kept, keepable
from agent.state.settings import RecentSettings


def recent_scrapes(settings: RecentSettings) -> RecentScrapes:
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
