"""scrapeOptions.formats on every mode: the returned results' pages as Firecrawl Documents (contract §2.3).

Each scraped result gains its content keys and a `metadata` that repeats url, sourceURL, title and
description, because firecrawl-py turns an item with content keys into a Document, which has no top-level
url or title. A result whose page failed keeps no content key, only `metadata` with the error.
"""

from __future__ import annotations

from dataclasses import replace

from agent.answers.rich import Answers
from agent.core.context import SearchContext
from agent.core.formats import DOCUMENT_FORMATS, PAGE_ASK_KINDS
from agent.core.outcome import SearchOutcome
from agent.core.pages import Extraction
from agent.core.query import SearchQuery
from agent.core.sources import source
from agent.pages.documents import document
from agent.pages.loading import failed_pages


async def attach_documents(outcome: SearchOutcome, query: SearchQuery, ctx: SearchContext, answers: Answers
                           ) -> SearchOutcome:
    """The outcome with a Document for every result of a scraped source, when scrapeOptions asks for one."""
    formats = [f for f in query.scrape_formats if f in DOCUMENT_FORMATS]
    unsupported = sorted(set(query.scrape_formats) - set(DOCUMENT_FORMATS) - set(PAGE_ASK_KINDS))
    if unsupported:
        outcome = outcome.warned(f"scrapeOptions.formats {unsupported} are not supported yet and were skipped")
    if not formats and not query.page_asks:
        return outcome
    hits = {h.url: h for name, bucket in outcome.buckets.items() if source(name).scraped for h in bucket}
    pages = await ctx.load_pages(list(hits), Extraction(query.main_content_only, document=True),
                                 ctx.pipeline_deadline())
    documents = {url: document(url, hits[url].title, hits[url].content, page, formats) for url, page in pages.items()}
    failed = failed_pages(pages, "have no scraped content", "no_content")
    outcome = replace(outcome, documents=documents, pages={**outcome.pages, **pages}).warned(failed)
    if query.page_asks:
        outcome = await answers.pages(outcome, query.page_asks, ctx)
    return outcome
