"""The one internal shape of a search request, whichever Firecrawl API version it came in on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.core.pages import SERVICE_CACHE_USE, CacheUse
from agent.core.sources import DEFAULT_SOURCE


@dataclass(frozen=True)
class PageAsk:
    kind: str  # a key of PAGE_ASK_KINDS
    schema: dict[str, Any] | None = None
    prompt: str | None = None


@dataclass(frozen=True)
class SourceRequest:
    """One requested source; its own tbs/lang/country override the request's (Firecrawl's object form)."""

    type: str
    tbs: str | None = None
    lang: str | None = None
    country: str | None = None


@dataclass(frozen=True)
class SearchQuery:
    query: str
    limit: int
    sources: list[SourceRequest] = field(default_factory=lambda: [SourceRequest(DEFAULT_SOURCE)])
    categories: list[str] = field(default_factory=list)
    tbs: str | None = None
    lang: str | None = "en"
    country: str | None = None
    safe: bool | None = None
    include_domains: list[str] = field(default_factory=list)
    exclude_domains: list[str] = field(default_factory=list)
    engines: list[str] = field(default_factory=list)
    timeout_ms: int = 60_000
    ignore_invalid_urls: bool = False
    retrieval_mode: str = ""  # "": the service's DEFAULT_RETRIEVAL_MODE
    search_type: str = "fast"  # "": the service's DEFAULT_SEARCH_TYPE
    scrape_formats: list[str] = field(default_factory=list)
    main_content_only: bool = True  # scrapeOptions.onlyMainContent
    fetch_top: int | None = None  # None: the configured FETCH_TOP
    explain: bool = False
    # keep every scored result: no RELEVANCE_MARGIN, no abstaining (a research job's searches read what they find
    # and judge its passages themselves; a hop's page is often far from the words that found it)
    exhaustive: bool = False
    rerank: bool | None = None  # hybrid_vector: score the merged pool as hybrid mode does (None: the default, yes)
    output_schema: dict | None = None  # rich: a checked JSON Schema for `answer.json`
    system_prompt: str | None = None  # rich: before Wisp's own rules
    llm_model: str | None = None  # rich: another model on the same server
    stream: bool = False  # answer with server-sent events (api/front_door.py)
    page_asks: tuple[PageAsk, ...] = ()  # scrapeOptions.formats the LLM answers per page (answers/page_answers.py)
    cache_use: CacheUse = SERVICE_CACHE_USE  # scrapeOptions.maxAge and storeInCache, for every page the search fetches
