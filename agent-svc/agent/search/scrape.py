"""A scrape: one URL through the page stage (the fetch with its SSRF guard, extraction in the worker pool, both
within the request's timeout), shaped as the Firecrawl Document that search's scrapeOptions return, with
summary, json and question asked of the LLM (answers.page_answers). The request's wire format is
api/firecrawl/scrape_wire.py's.

A page that cannot be had gets Firecrawl's status and code for why (FAILURES); a page the site answered with an
error status is a Document with its content and that statusCode, as Firecrawl returns it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from wisp_obs.requests import request_id

from agent import metrics
from agent.answers.rich import Answers
from agent.core.browsing import NO_BROWSER_WORK, BrowserWork, Rendered
from agent.core.context import RESPONSE_RESERVE_S, SearchContext
from agent.core.formats import needs_whole_page
from agent.core.outcome import SearchOutcome
from agent.core.pages import SERVICE_CACHE_USE, CacheUse, Extraction, Page
from agent.core.query import PageAsk
from agent.errors import WispError
from agent.pages.documents import document
from agent.services import Services

# a failure with no page to show (not Page.answered) → (HTTP status, Firecrawl's code), as its scrape controller
# answers them: 500 for a scrape that failed, except a DNS failure, which it answers with 200 and `success: false`
# (its own tests hold it to that); firecrawl-py raises InternalServerError, TLSError or DNSResolutionError,
# firecrawl-js SdkError
FAILURES = {
    "timeout": (408, "SCRAPE_TIMEOUT"),
    "blocked": (403, "UNSUPPORTED_SITE"),
    "dns": (200, "SCRAPE_DNS_RESOLUTION_ERROR"),
    "tls": (500, "SCRAPE_SSL_ERROR"),
    "unsupported": (500, "SCRAPE_UNSUPPORTED_FILE_ERROR"),
    "unreachable": (500, "SCRAPE_SITE_ERROR"),
    "action": (400, "SCRAPE_ACTION_ERROR"),
}


class ScrapeFailed(WispError):
    """The page could not be scraped: Firecrawl's status and code for why."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass(frozen=True)
class ScrapeJob:
    url: str
    formats: tuple[str, ...]  # the Document's content keys (core.formats.DOCUMENT_FORMATS)
    asks: tuple[PageAsk, ...]  # the LLM's formats
    main_only: bool
    timeout_ms: int
    warnings: tuple[str, ...] = ()
    json_key: str = "json"  # v1's `extract` format returns its JSON under `extract`
    cache_use: CacheUse = SERVICE_CACHE_USE  # maxAge and storeInCache
    work: BrowserWork = NO_BROWSER_WORK  # screenshot, actions, waitFor, mobile, headers

    @property
    def extraction(self) -> Extraction:
        return Extraction(self.main_only, document=needs_whole_page(self.formats), error_pages=True)


async def scrape(job: ScrapeJob, services: Services) -> dict[str, Any]:
    """The page's Firecrawl Document; raises ScrapeFailed when there is none to show."""
    if not services.fetcher.renders:
        job = _without_browser(job)
    ctx = services.context(job.timeout_ms / 1000, cache_use=job.cache_use, work=job.work)
    try:
        async with asyncio.timeout(job.timeout_ms / 1000):
            pages = await ctx.load_pages([job.url], job.extraction, ctx.deadline - RESPONSE_RESERVE_S)
            return await _document(job, pages[job.url], ctx, services.answers)
    except TimeoutError:
        raise _failed("timeout", f"the scrape did not finish within its timeout of {job.timeout_ms} ms") from None


async def _document(job: ScrapeJob, page: Page, ctx: SearchContext, answers: Answers) -> dict[str, Any]:
    warnings = list(job.warnings)
    if not page.answered:
        raise _failed(page.failure, f"{job.url} could not be scraped: {page.error}")
    if page.extracted is None:
        warnings.append(f"{job.url} has no content: {page.error}")
    if page.fetched.unrendered:
        warnings.append(f"{job.url} was not rendered in the browser ({page.fetched.unrendered}): its HTTP page was "
                        "used")
    doc = {**document(job.url, "", "", page, list(job.formats)), **_browser_output(job.work, page.fetched.rendered)}
    doc["metadata"]["scrapeId"] = request_id()
    if job.asks and page.extracted is not None:
        answered = await answers.pages(SearchOutcome({}, documents={job.url: doc}, pages={job.url: page}), job.asks,
                                       ctx)
        doc = answered.documents[job.url]
        warnings += answered.warnings
        metrics.degraded(answered.degradations)
    if job.json_key != "json" and "json" in doc:
        doc[job.json_key] = doc.pop("json")
    if warnings:
        doc["warning"] = "; ".join(warnings)
    return doc


def _without_browser(job: ScrapeJob) -> ScrapeJob:
    """The job as a fetch without a browser can do it (RENDER=never, or no Chromium): actions are a 400, as
    Firecrawl answers an engine without them; a screenshot, waitFor, mobile and headers are named in a warning."""
    work = job.work
    if work.actions:
        raise ScrapeFailed(400, "SCRAPE_ACTIONS_NOT_SUPPORTED",
                           "actions are not supported: this Wisp renders no pages (RENDER=never, or no browser)")
    ignored = [name for name, asked in (("screenshot", work.screenshot), ("waitFor", work.wait_for_ms),
                                        ("mobile", work.mobile), ("headers", work.headers)) if asked]
    if not ignored:
        return job
    warning = f"{', '.join(ignored)} need the browser, which this Wisp does not run (RENDER=never): ignored"
    return replace(job, work=NO_BROWSER_WORK, warnings=(*job.warnings, warning))


def _browser_output(work: BrowserWork, rendered: Rendered | None) -> dict[str, Any]:
    """The Document's `screenshot` (a data URL, as a self-hosted Firecrawl gives it) and `actions`."""
    if rendered is None:
        return {}
    output: dict[str, Any] = {}
    if rendered.screenshot is not None:
        output["screenshot"] = rendered.screenshot.data_url()
    if work.actions:
        output["actions"] = {
            "screenshots": [image.data_url() for image in rendered.screenshots],
            "scrapes": [{"url": state.url, "html": state.html} for state in rendered.scrapes],
            "javascriptReturns": [{"type": r.type, "value": r.value} for r in rendered.javascript_returns],
            "pdfs": []}
    return output


def _failed(kind: str, message: str) -> ScrapeFailed:
    status, code = FAILURES[kind]
    return ScrapeFailed(status, code, message)
