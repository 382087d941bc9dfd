"""The Documents of recent scrapes, by their `metadata.scrapeId`, for GET /v2/scrape/{id}: in memory, bounded by
count, by bytes (of their JSON) and by age; the oldest go first. A restart forgets them all."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent.core.expiring import ExpiringMap


@dataclass(frozen=True)
class Kept:
    owner: str | None  # the API key that scraped it; None when keys are off (everyone's)
    expires: float
    size: int
    document: dict[str, Any]


class RecentScrapes:
    def __init__(self, max_count: int, max_bytes: int, ttl_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_count, self.max_bytes, self.ttl_s = max_count, max_bytes, ttl_s
        self._clock = clock
        self._kept: ExpiringMap[Kept] = ExpiringMap(clock)
        self._bytes = 0

    def put(self, owner: str | None, document: dict[str, Any]) -> None:
        """Keep a scrape's Document under its scrapeId; with no time to keep it (SCRAPE_KEEP_S=0), or larger than
        the whole budget, it is not kept, and an id another client's Document holds is not taken over."""
        scrape_id = document.get("metadata", {}).get("scrapeId")
        if not scrape_id or not self.max_count or self.ttl_s <= 0:
            return
        size = len(json.dumps(document, separators=(",", ":")))
        if size > self.max_bytes:
            return
        self._expire()
        if (held := self._kept.get(scrape_id)) is not None:
            if held.owner != owner:
                return
            self._drop(scrape_id)
        self._kept.put(scrape_id, Kept(owner, self._clock() + self.ttl_s, size, document))
        self._bytes += size
        while len(self._kept) > self.max_count or self._bytes > self.max_bytes:
            self._drop(next(self._kept.items())[0])

    def __len__(self) -> int:
        """How many Documents are held, the expired among them until a read forgets them."""
        return len(self._kept)

    def get(self, scrape_id: str) -> Kept | None:
        """The kept scrape of that id, unless it has expired."""
        self._expire()
        return self._kept.get(scrape_id)

    def _expire(self) -> None:
        self._bytes -= sum(kept.size for kept in self._kept.expire())

    def _drop(self, scrape_id: str) -> None:
        self._bytes -= self._kept.pop(scrape_id).size
