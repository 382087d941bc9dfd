"""POST /v2/scrape and /v1/scrape: one URL through search's page stage (pages.py: the fetch with its SSRF guard,
extraction in the worker pool, both within the request's timeout), shaped as the Firecrawl Document that
search's scrapeOptions return (documents.py), with summary, json and question asked of the LLM (page_answers.py).

Requests are lenient like search's (unknown keys accepted and ignored), strict on the types of known keys, with
explicit limits. A page that cannot be had is never a 5xx: its failure gets Firecrawl's status and code (contract
§2.2; FAILURES), and a page the site answered with an error status is a Document with that statusCode, as
Firecrawl returns it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from wisp_obs.requests import request_id

from agent.answers.page_answers import answer_pages, page_ask
from agent.api.firecrawl import ScrapeOptions
from agent.core.context import RESPONSE_RESERVE_S, SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.pages import Extraction, Page
from agent.core.query import PAGE_ASK_KINDS, PageAsk
from agent.errors import BadRequest, WispError
from agent.index.crawl.options import FIRECRAWL_FORMATS, MAX_URL_CHARS, check_page_url
from agent.pages.documents import SUPPORTED, document
from agent.pages.failures import failure
from agent.services import Services
from agent.upstream.clients import Upstreams

MAX_FORMATS = 20
MAX_TAGS = 100
MAX_HEADERS = 50
MAX_ACTIONS = 50  # Firecrawl's own bound
MAX_TIMEOUT_MS = 300_000
MAX_WAIT_FOR_MS = 60_000

# a failure with no page to show → (HTTP status, Firecrawl's code). Firecrawl answers a DNS failure with 200 and
# `success: false`; Wisp does the same for the other site failures upstream answers with a 500, so that a bad page
# is never a server error (firecrawl-py still raises DNSResolutionError, TLSError or FirecrawlError on them)
FAILURES = {
    "timeout": (408, "SCRAPE_TIMEOUT"),
    "blocked": (403, "UNSUPPORTED_SITE"),
    "dns": (200, "SCRAPE_DNS_RESOLUTION_ERROR"),
    "tls": (200, "SCRAPE_SSL_ERROR"),
    "unsupported": (200, "SCRAPE_UNSUPPORTED_FILE_ERROR"),
    "unreachable": (200, "SCRAPE_SITE_ERROR"),
}


class ScrapeFailed(WispError):
    """The page could not be scraped: Firecrawl's status and code for why."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass(frozen=True)
class ScrapeJob:
    url: str
    formats: tuple[str, ...]  # the Document's content keys (documents.SUPPORTED)
    asks: tuple[PageAsk, ...]  # the LLM's formats
    main_only: bool
    timeout_ms: int
    warnings: tuple[str, ...] = ()
    json_key: str = "json"  # v1's `extract` format returns its JSON under `extract`

    @property
    def extraction(self) -> Extraction:
        return Extraction(self.main_only, document=bool({"html", "rawHtml"} & set(self.formats)))


class _PageFields(BaseModel):
    """What /v1 and /v2 scrape requests share besides `formats`."""

    model_config = ConfigDict(extra="allow")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    onlyMainContent: StrictBool | None = None  # noqa: N815 - Firecrawl's wire names
    timeout: StrictInt | None = Field(None, gt=0, le=MAX_TIMEOUT_MS)
    waitFor: StrictInt | None = Field(None, ge=0, le=MAX_WAIT_FOR_MS)  # noqa: N815
    includeTags: list[StrictStr] | None = Field(None, max_length=MAX_TAGS)  # noqa: N815
    excludeTags: list[StrictStr] | None = Field(None, max_length=MAX_TAGS)  # noqa: N815
    headers: dict[str, StrictStr] | None = Field(None, max_length=MAX_HEADERS)
    actions: list[dict[str, Any]] | None = Field(None, max_length=MAX_ACTIONS)
    mobile: StrictBool | None = None
    location: dict[str, Any] | None = None
    zeroDataRetention: StrictBool | None = None  # noqa: N815 - a scrape keeps nothing anyway
    origin: StrictStr | None = None
    integration: StrictStr | None = None

    def _job(self, items: list[dict[str, Any]], timeout_ms: int, json_key: str = "json") -> ScrapeJob:
        """The job these fields and format objects ask for; a 400 naming what is wrong."""
        url = self.url.strip()
        url = url if "://" in url else f"http://{url}"  # as Firecrawl does
        check_page_url(url)
        if len(items) > MAX_FORMATS:
            raise BadRequest(f"formats may name at most {MAX_FORMATS} formats")
        names = [str(item["type"]) for item in items]
        if unknown := sorted(set(names) - FIRECRAWL_FORMATS):
            raise BadRequest(f"unknown formats {unknown}")
        if self.waitFor and self.waitFor > timeout_ms / 2:
            raise BadRequest("waitFor must be at most half of timeout")
        if self.actions:
            raise ScrapeFailed(400, "SCRAPE_ACTIONS_NOT_SUPPORTED",
                               "actions are not supported: Wisp fetches pages without a browser")
        asks = tuple(page_ask(item) for item in items if item["type"] in PAGE_ASK_KINDS)
        if len({a.kind for a in asks}) < len(asks):
            raise BadRequest("formats name summary, json and question at most once each")
        return ScrapeJob(url, tuple(dict.fromkeys(n for n in names if n in SUPPORTED)), asks,
                         self.onlyMainContent is not False, timeout_ms, self._warnings(names), json_key)

    def _warnings(self, names: list[str]) -> tuple[str, ...]:
        warnings = []
        if skipped := sorted(set(names) - set(SUPPORTED) - set(PAGE_ASK_KINDS)):
            warnings.append(f"formats {skipped} are not supported and were skipped")
        ignored = [name for name, value in (("includeTags", self.includeTags), ("excludeTags", self.excludeTags),
                                            ("headers", self.headers), ("location", self.location),
                                            ("waitFor", self.waitFor), ("mobile", self.mobile)) if value]
        if ignored:
            warnings.append(f"{', '.join(ignored)} are not supported and were ignored")
        return tuple(warnings)


class ScrapeRequest(_PageFields, ScrapeOptions):
    """Firecrawl's v2 scrape request: its scrape options and the URL (contract §2.1)."""

    def to_job(self, default_timeout_s: float) -> ScrapeJob:
        return self._job(self.formats or [{"type": "markdown"}], self.timeout or round(default_timeout_s * 1000))


class V1ScrapeRequest(_PageFields):
    """v1's scrape request: `formats` are strings, and `json`/`extract` take their options beside them (§3)."""

    formats: list[StrictStr] | None = Field(None, max_length=MAX_FORMATS)
    jsonOptions: dict[str, Any] | None = None  # noqa: N815
    extract: dict[str, Any] | None = None

    def to_job(self, default_timeout_s: float) -> ScrapeJob:
        names = self.formats or ["markdown"]
        if {"json", "extract"} <= set(names):
            raise BadRequest("formats name json or extract, not both")
        items = [{**(self.jsonOptions or {}), "type": "json"} if name == "json" else
                 {**(self.extract or {}), "type": "json"} if name == "extract" else {"type": name} for name in names]
        return self._job(items, self.timeout or round(default_timeout_s * 1000),
                         "extract" if "extract" in names else "json")


async def scrape(job: ScrapeJob, services: Services) -> dict[str, Any]:
    """The page's Firecrawl Document; raises ScrapeFailed when there is none to show."""
    ctx = services.context(job.timeout_ms / 1000)
    try:
        async with asyncio.timeout(job.timeout_ms / 1000):
            pages = await ctx.load_pages([job.url], job.extraction, ctx.deadline - RESPONSE_RESERVE_S)
            return await _document(job, pages[job.url], ctx, services.upstreams)
    except TimeoutError:
        raise _failed("timeout", f"the scrape did not finish within its timeout of {job.timeout_ms} ms") from None


async def _document(job: ScrapeJob, page: Page, ctx: SearchContext, up: Upstreams) -> dict[str, Any]:
    warnings = list(job.warnings)
    if page.extracted is None:
        kind = failure(page)
        if kind in FAILURES:
            raise _failed(kind, f"{job.url} could not be scraped: {page.error}")
        warnings.append(f"{job.url} has no content: {page.error}")
    doc = document(job.url, "", "", page, list(job.formats))
    doc["metadata"]["scrapeId"] = request_id()
    if job.asks and page.extracted is not None:
        answered = await answer_pages(SearchOutcome({}, documents={job.url: doc}, pages={job.url: page}), job.asks,
                                      up.settings.rich_context_chars, ctx, up.llm)
        doc = answered.documents[job.url]
        warnings += answered.warnings
    if job.json_key != "json" and "json" in doc:
        doc[job.json_key] = doc.pop("json")
    if warnings:
        doc["warning"] = "; ".join(warnings)
    return doc


def _failed(kind: str, message: str) -> ScrapeFailed:
    status, code = FAILURES[kind]
    return ScrapeFailed(status, code, message)
