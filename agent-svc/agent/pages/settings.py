"""The page stage's settings: fetching, extraction workers, and the page cache."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent.core.section import Section

PageCacheKind = Literal["disk", "memory", "redis", "off"]


class PagesSettings(Section):
    """Fetching pages (the SSRF guard, sizes, redirects) and the processes that extract them."""

    fetch_max_bytes: int = Field(5_000_000, ge=10_000, description="Largest page body read")
    fetch_max_redirects: int = Field(5, ge=0, le=20, description="Redirects followed per fetch")
    fetch_user_agent: str = Field(
        "Mozilla/5.0 (compatible; Wisp/0.1; +https://github.com/wisp)", description="User-Agent of page fetches"
    )
    fetch_allow_hosts: str = Field(
        "", description="Comma-separated hosts or CIDRs that page fetching may reach despite the SSRF guard"
    )
    extract_workers: int = Field(2, ge=1, le=32, description="Processes extracting pages in parallel")
    extract_worker_max_rss_mb: float = Field(
        768, ge=100, description="An extraction worker larger than this after a page is replaced, which returns "
        "its memory (a hostile page can grow one past 1 GB)")


class PageCacheSettings(Section):
    """The page cache: Firecrawl's maxAge and storeInCache."""

    page_cache: PageCacheKind = Field("disk", description="Where fetched pages are kept for maxAge: disk (shared by "
                                      "the processes of one machine), memory, redis (REDIS_URL: shared by every "
                                      "replica), or off")
    page_cache_dir: str = Field("./wisp-data/page-cache", description="Directory of the disk page cache")
    page_cache_max_bytes: int = Field(1_000_000_000, ge=10_000_000, description="Compressed bytes the page cache "
                                      "holds at most; the least recently used pages go first")
    page_cache_ttl_s: int = Field(172_800, ge=1, description="redis page cache: how long a page is kept at most, "
                                  "whatever maxAge later asks (2 days: Firecrawl's cloud default)")
    default_max_age_ms: int = Field(0, ge=0, description="maxAge of requests that name none (0: always fetch; "
                                    "Firecrawl's cloud uses 2 days)")
