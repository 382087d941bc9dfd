"""Pages into the vector index through semantic-svc: every crawled page, and with INDEX_ORGANIC the pages the
ranked modes fetch anyway (off by default: seed 001 measured that it leaks the queries an evaluation asks into
the index that then answers them).

semantic-svc skips a page whose content hash it holds and replaces a changed page's chunks. At most
CRAWL_INDEX_CONCURRENCY pages are being indexed at once, since searches need the same model; a refusal because
the model's queue is full is tried again after a pause.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from wisp_text.markdown import unescaped

from agent.core.pages import Page
from agent.index.settings import IndexSettings
from agent.upstream.semantic import SemanticClient, SemanticUnavailable

log = logging.getLogger(__name__)
RETRY_PAUSES_S = (1.0, 2.0, 4.0)
MAX_BACKGROUND = 64


class Ingest:
    def __init__(self, semantic: SemanticClient, settings: IndexSettings) -> None:
        self._semantic, self._timeout_s = semantic, settings.crawl_index_timeout_s
        self._slots = asyncio.Semaphore(settings.crawl_index_concurrency)
        self._background: set[asyncio.Task] = set()

    async def page(self, page: Page) -> dict[str, Any]:
        """Index one extracted page; semantic-svc's report (indexed, unchanged, chunks). Raises Degraded."""
        for pause_s in RETRY_PAUSES_S:
            try:
                return await self._upserted(page)
            except SemanticUnavailable as e:
                if not e.busy:
                    raise
            await asyncio.sleep(pause_s)
        return await self._upserted(page)

    def in_background(self, pages: Iterable[Page]) -> None:
        """Index these pages after the response has gone; a failure is logged, never the request's. At most
        MAX_BACKGROUND pages wait (each holds its body): beyond that, pages are skipped, and logged."""
        for page in pages:
            if len(self._background) >= MAX_BACKGROUND:
                log.warning("organic ingest is %d pages behind: %s not indexed", MAX_BACKGROUND,
                            page.fetched.final_url)
                continue
            task = asyncio.create_task(self._quietly(page))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    @property
    def backlog(self) -> int:
        """Organic pages waiting to be indexed or being indexed now."""
        return len(self._background)

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def _upserted(self, page: Page) -> dict[str, Any]:
        async with self._slots:
            return await self._semantic.index_upsert([indexable(page)], self._timeout_s)

    async def _quietly(self, page: Page) -> None:
        try:
            await self.page(page)
        except SemanticUnavailable as e:
            log.warning("organic ingest of %s failed: %s", page.fetched.final_url, e)


def indexable(page: Page) -> dict[str, Any]:
    """An extracted page as semantic-svc's document: its final URL, title and text without Markdown escapes."""
    extracted = page.extracted
    assert extracted is not None
    return {"url": page.fetched.final_url, "title": extracted.title, "text": unescaped(extracted.markdown),
            "metadata": {"description": extracted.description, "language": extracted.language}}
