"""Firecrawl's Document formats, and which of them Wisp gives and how: the one table every surface (search's
scrapeOptions, /v2/scrape, crawls, MCP) reads."""

from __future__ import annotations

from collections.abc import Iterable

# every format Firecrawl names (its Document contract); the ones Wisp does not give are named in a warning
FIRECRAWL_FORMATS = frozenset({
    "markdown", "html", "rawHtml", "links", "images", "screenshot", "screenshot@fullPage", "summary", "json",
    "changeTracking", "attributes", "branding", "highlights", "question", "query", "product", "menu", "audio",
    "video", "rawBase64", "deterministicJson",
})
DOCUMENT_FORMATS = ("markdown", "html", "rawHtml", "links")  # a Document carries them without the LLM
# formats the LLM answers per page → the Document's key of each
PAGE_ASK_KINDS = {"summary": "summary", "json": "json", "question": "answer"}
DOCUMENT_KEYS = (*DOCUMENT_FORMATS, *PAGE_ASK_KINDS.values())  # every content key a Document may have
_WHOLE_PAGE = frozenset({"html", "rawHtml"})


def needs_whole_page(formats: Iterable[str]) -> bool:
    """Whether these formats want the page's HTML too, beyond its main content as markdown."""
    return not _WHOLE_PAGE.isdisjoint(formats)
