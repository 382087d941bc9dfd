"""The Documents of recent scrapes, by their `metadata.scrapeId`, for GET /v2/scrape/{id}: bounded by count, by
bytes (of their JSON) and by age. memory.py keeps them in the process (a restart forgets them); with REDIS_URL
the replicas keep them in Redis (redis.py), behind the same two calls (`Recent`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol


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
