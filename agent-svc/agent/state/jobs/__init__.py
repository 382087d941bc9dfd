"""The crawl and batch-scrape jobs, and their frontiers: the records every store hands out. Two stores keep them
behind the same methods (called through `store.run(store.method, ...)`): this process's SQLite (sqlite.py, one
replica) and the replicas' Redis (redis.py, REDIS_URL); `redis.Store` names either. index/crawl/setup.py picks one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from agent.core.crawl_options import CrawlOptions

RUNNING, COMPLETED, FAILED, CANCELLED = "scraping", "completed", "failed", "cancelled"
TERMINAL = (COMPLETED, FAILED, CANCELLED)
ROWS_PER_PAGE = 4  # pages a job may know of (failed and blocked ones too) per page of its limit


@dataclass(frozen=True)
class Job:
    id: str
    created: float
    expires: float
    status: str
    options: CrawlOptions
    error: str | None
    indexed: int
    unchanged: int
    chunks: int
    not_indexed: int
    index_error: str | None
    seeded: bool  # its seeds and sitemap pages are queued
    owner: str | None = None  # the API key that started it; None: keys off, or stored before owners (everyone's)

    @property
    def expired(self) -> bool:
        return self.expires < time.time()


@dataclass(frozen=True)
class Counts:
    total: int  # queued, fetching and done: failed and blocked pages leave the total, as upstream
    completed: int


@dataclass(frozen=True)
class QueuedPage:
    key: str
    url: str
    depth: int
