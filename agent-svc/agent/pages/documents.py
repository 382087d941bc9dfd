"""A page as a Firecrawl Document: its content in the formats asked for, and a `metadata` that repeats url,
sourceURL, title and description (firecrawl-py turns an item with content keys into a Document, which has no
top-level url or title). A page that failed keeps no content key, only `metadata` with the error."""

from __future__ import annotations

from typing import Any

from agent.core.dates import iso_instant
from agent.core.pages import Extracted, Page, PageError


def document(url: str, title: str, description: str, page: Page, formats: list[str]) -> dict[str, Any]:
    extracted, error = page.extracted, page.error
    metadata: dict[str, Any] = {
        "title": (extracted.title if extracted else "") or title, "description": (extracted.description if
                                                                                extracted else "") or description,
        "url": page.fetched.final_url, "sourceURL": url, "statusCode": page.fetched.status or _failure_status(error),
        "contentType": page.fetched.content_type or None, "proxyUsed": "basic", **_cache_state(page),
    }
    if extracted is None:
        return {"metadata": {**metadata, "error": str(error or "not scraped")}}
    if extracted.language:
        metadata["language"] = extracted.language
    if extracted.published:
        metadata["publishedTime"] = extracted.published.isoformat()
    return {**_content(extracted, formats), "metadata": metadata}


def _content(extracted: Extracted, formats: list[str]) -> dict[str, Any]:
    values = {"markdown": extracted.markdown, "html": extracted.html or "", "rawHtml": extracted.raw_html,
              "links": extracted.links}
    return {f: values[f] for f in formats}


def _cache_state(page: Page) -> dict[str, Any]:
    """Firecrawl's keys, present only when the request asked the cache (a `maxAge` above 0)."""
    fetched = page.fetched
    state: dict[str, Any] = {"cacheState": fetched.cache_state} if fetched.cache_state else {}
    if fetched.cached_at:
        state["cachedAt"] = iso_instant(fetched.cached_at.timestamp())
    return state


def _failure_status(error: PageError | None) -> int:
    """Firecrawl answers 403 for a denied crawl and 500 for other failures without an HTTP status."""
    return 403 if error and error.kind in ("blocked", "dns") else 500
