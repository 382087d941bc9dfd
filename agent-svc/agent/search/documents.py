"""scrapeOptions.formats on every mode: the returned results' pages as Firecrawl Documents (contract §2.3).

Each scraped result gains its content keys and a `metadata` that repeats url, sourceURL, title and
description, because firecrawl-py turns an item with content keys into a Document, which has no top-level
url or title. A result whose page failed keeps no content key, only `metadata` with the error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agent.answers.page_answers import answer_pages
from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.pages import Extracted, Extraction, Page
from agent.core.query import PAGE_ASK_KINDS, SearchQuery
from agent.core.sources import source
from agent.pages.loading import failure_warning, fetch_pages

SUPPORTED = ("markdown", "html", "rawHtml", "links")


async def attach_documents(outcome: SearchOutcome, query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    """The outcome with a Document for every result of a scraped source, when scrapeOptions asks for one."""
    formats = [f for f in query.scrape_formats if f in SUPPORTED]
    unsupported = sorted(set(query.scrape_formats) - set(SUPPORTED) - set(PAGE_ASK_KINDS))
    if unsupported:
        outcome = outcome.warned(f"scrapeOptions.formats {unsupported} are not supported yet and were skipped")
    if not formats and not query.page_asks:
        return outcome
    hits = {h.url: h for name, bucket in outcome.buckets.items() if source(name).scraped for h in bucket}
    pages = await fetch_pages(list(hits), ctx, Extraction(query.main_content_only, document=True),
                              deadline=ctx.pipeline_deadline())
    documents = {url: document(url, hits[url].title, hits[url].content, page, formats) for url, page in pages.items()}
    failed = failure_warning(pages, "have no scraped content", "no_content")
    outcome = replace(outcome, documents=documents).warned(failed)
    if query.page_asks:
        outcome = await answer_pages(outcome, query.page_asks, ctx.services.settings.rich_context_chars, ctx)
    return outcome


def document(url: str, title: str, description: str, page: Page, formats: list[str]) -> dict[str, Any]:
    extracted, error = page.extracted, page.error
    metadata: dict[str, Any] = {
        "title": (extracted.title if extracted else "") or title, "description": (extracted.description if
                                                                                extracted else "") or description,
        "url": page.fetched.final_url, "sourceURL": url, "statusCode": page.fetched.status or _failure_status(error),
        "contentType": page.fetched.content_type or None, "proxyUsed": "basic",
    }
    if extracted is None:
        return {"metadata": {**metadata, "error": error or "not scraped"}}
    if extracted.language:
        metadata["language"] = extracted.language
    if extracted.published:
        metadata["publishedTime"] = extracted.published.isoformat()
    return {**_content(extracted, formats), "metadata": metadata}


def _content(extracted: Extracted, formats: list[str]) -> dict[str, Any]:
    values = {"markdown": extracted.markdown, "html": extracted.html or "", "rawHtml": extracted.raw_html,
              "links": extracted.links}
    return {f: values[f] for f in formats}


def _failure_status(error: str | None) -> int:
    """Firecrawl answers 403 for a denied crawl and 500 for other failures without an HTTP status."""
    return 403 if error and error.startswith("blocked") else 500
