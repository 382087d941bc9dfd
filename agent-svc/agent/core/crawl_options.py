"""The options one crawl or batch scrape runs with, as its job stores them (state/jobs) and the crawler reads them
(index/crawl); Firecrawl's request that they are made from is index/crawl/options.py's."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from agent.core.pages import CacheUse

CRAWL, BATCH = "crawl", "batch"


@dataclass(frozen=True)
class CrawlOptions:
    seeds: tuple[str, ...]
    limit: int
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    regex_on_full_url: bool = False
    max_depth: int | None = None  # link hops from a seed; None: no bound
    max_path_depth: int | None = None  # v1's maxDepth: path segments of a followed URL, at most (url_depth)
    entire_domain: bool = False
    subdomains: bool = False
    external: bool = False
    ignore_robots: bool = False
    sitemap: str = "include"  # include | skip | only
    ignore_query: bool = False
    dedupe_similar: bool = True
    delay_s: float | None = None
    max_concurrency: int | None = None
    formats: tuple[str, ...] = ("markdown",)
    main_only: bool = True
    warnings: tuple[str, ...] = field(default=())
    kind: str = CRAWL  # crawl | batch: a batch scrape fetches its seeds as /v2/scrape would, and nothing else
    page_timeout_s: float | None = None  # a batch's scrape `timeout`; None: CRAWL_PAGE_TIMEOUT_S
    max_age_ms: int | None = None  # scrapeOptions.maxAge (None: DEFAULT_MAX_AGE_MS)
    store_in_cache: bool = True

    @property
    def seed(self) -> str:
        return self.seeds[0]

    @property
    def cache_use(self) -> CacheUse:
        return CacheUse(self.max_age_ms, self.store_in_cache)

    @property
    def batch(self) -> bool:
        """A batch scrape: no robots.txt (a scrape ignores it, as Firecrawl's), no index, no links followed."""
        return self.kind == BATCH

    def as_json(self) -> dict[str, Any]:
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self.__dict__.items()}

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> CrawlOptions:
        """The options as `as_json` stored them; keys another version of Wisp wrote and this one lacks are
        dropped (a missing required one raises TypeError)."""
        known = {f.name for f in fields(cls)}
        return cls(**{name: tuple(value) if isinstance(value, list) else value for name, value in stored.items()
                      if name in known})
