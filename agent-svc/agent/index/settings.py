"""The index stage's settings: writing pages into the vector index, and mapping a site."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section


class IndexSettings(Section):
    """Writing pages into the vector index, and mapping a site."""

    crawl_index_timeout_s: float = Field(60.0, gt=0, description="Longest wait for semantic-svc to index one "
                                         "crawled page (a long page is many chunks)")
    crawl_index_concurrency: int = Field(1, ge=1, le=16, description="Pages being indexed at once, all crawls "
                                         "together: interactive searches share semantic-svc's model")
    map_max_pages: int = Field(10, ge=1, le=100, description="Pages a map fetches for their links: the seed and "
                               "the first pages it links to")
