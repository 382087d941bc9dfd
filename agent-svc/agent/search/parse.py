"""A parse (/v2/parse): an uploaded file read as a scrape reads a fetched page, with no fetch. The upload becomes the
page a fetch would have made (pages/uploads.py), which is extracted in the worker pool and shaped as the same
Firecrawl Document, with summary, json and question asked of the LLM. The request's wire format is
api/firecrawl/parse_wire.py's.

A file Wisp does not read, or one that gives no text (empty, corrupt, not what its name says), is a 400 naming
why; a file still being read at the request's timeout is Firecrawl's 408 SCRAPE_TIMEOUT.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from agent import metrics
from agent.core.context import RESPONSE_RESERVE_S
from agent.core.formats import needs_whole_page
from agent.core.outcome import SearchOutcome
from agent.core.pages import Extraction
from agent.core.query import PageAsk
from agent.errors import UnreadableFile
from agent.pages.documents import document
from agent.pages.loading import extracted
from agent.pages.uploads import Upload, uploaded
from agent.search.scrape import FAILURES, ScrapeFailed
from agent.services import Services


@dataclass(frozen=True)
class ParseJob:
    formats: tuple[str, ...]  # the Document's content keys (core.formats.DOCUMENT_FORMATS)
    asks: tuple[PageAsk, ...]  # the LLM's formats
    main_only: bool  # of an HTML file; the other types are read whole
    timeout_ms: int
    warnings: tuple[str, ...] = ()


async def parse(upload: Upload, job: ParseJob, services: Services) -> dict[str, Any]:
    """The file's Firecrawl Document (`metadata.sourceURL` its name); raises UnsupportedFile or UnreadableFile
    (400s), or ScrapeFailed (408) when it is still being read at the job's timeout."""
    fetched = uploaded(upload)
    ctx = services.context(job.timeout_ms / 1000)
    try:
        async with asyncio.timeout(job.timeout_ms / 1000):
            page = await extracted(fetched, Extraction(job.main_only, document=needs_whole_page(job.formats)),
                                   services.cpu_pool, ctx.deadline - RESPONSE_RESERVE_S)
            if page.extracted is None and page.failure != "timeout":
                raise UnreadableFile(f"{upload.filename} could not be read: {page.error}")
            if page.extracted is None:
                raise TimeoutError
            doc = document(upload.filename, "", "", page, list(job.formats))
            warnings = list(job.warnings)
            if job.asks:
                answered = await services.answers.pages(
                    SearchOutcome({}, documents={upload.filename: doc}, pages={upload.filename: page}), job.asks, ctx)
                doc = answered.documents[upload.filename]
                warnings += answered.warnings
                metrics.degraded(answered.degradations)
    except TimeoutError:
        status, code = FAILURES["timeout"]
        raise ScrapeFailed(status, code, f"{upload.filename} was still being read at the timeout of "
                                         f"{job.timeout_ms} ms") from None
    if warnings:
        doc["warning"] = "; ".join(warnings)
    return doc
