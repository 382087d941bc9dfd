"""Firecrawl's batch scrape (POST /v2/batch/scrape and /v1/batch/scrape) on the wire: `urls` and the batch's
own keys beside a scrape's options, which are read exactly as /v2/scrape (or /v1/scrape) reads them
(scrape_wire.py), so that each URL's Document is the one a scrape would give. A batch becomes the
CrawlOptions of a batch job: the crawl machinery (index/crawl) runs it, and its status, cancel and errors
answers are the crawl's (crawl_wire.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from agent.api.firecrawl.crawl_wire import errors_body, status_body
from agent.api.firecrawl.scrape_wire import ScrapeRequest, V1ScrapeRequest
from agent.api.firecrawl.search_wire import SafeInt
from agent.core.crawl_options import BATCH, CrawlOptions
from agent.errors import InvalidRequest
from agent.index.crawl.options import MAX_SEED_URLS, split_urls
from agent.search.scrape import ScrapeFailed, ScrapeJob
from agent.state.jobs import Counts, Job


@dataclass(frozen=True)
class Batch:
    options: CrawlOptions
    invalid: list[str] | None  # the URLs skipped (ignoreInvalidURLs); None when invalid ones are refused
    append_to: str | None  # appendToId: the batch job these URLs join


class _BatchFields(BaseModel):
    """What a batch adds to a scrape request; `url` is a scrape's, which a batch replaces with `urls`."""

    model_config = ConfigDict(extra="allow")

    url: StrictStr | None = None
    urls: list[StrictStr] = Field(min_length=1, max_length=MAX_SEED_URLS)
    ignoreInvalidURLs: StrictBool | None = None  # noqa: N815 - Firecrawl's wire names; true by default, as upstream's
    maxConcurrency: SafeInt | None = Field(None, ge=1)  # noqa: N815
    appendToId: StrictStr | None = Field(None, min_length=1, max_length=100)  # noqa: N815
    webhook: StrictStr | dict[str, Any] | None = None
    zeroDataRetention: StrictBool | None = None  # noqa: N815

    def to_batch(self, default_timeout_s: float, max_urls: int) -> Batch:
        """The batch job's options; a 400 naming what is wrong (an invalid URL when ignoreInvalidURLs is false,
        no valid URL, more than `max_urls`, or a scrape option /v2/scrape refuses)."""
        if len(self.urls) > max_urls:
            raise InvalidRequest.check(f"a batch may have at most {max_urls} URLs (BATCH_MAX_URLS); this one has "
                                       f"{len(self.urls)}", ["urls"])
        if self.zeroDataRetention:
            raise InvalidRequest.check("zeroDataRetention is not supported: a batch's Documents are kept for "
                                       "CRAWL_TTL_S", ["zeroDataRetention"])
        skip_invalid = self.ignoreInvalidURLs is not False
        urls, invalid = split_urls(self.urls, skip_invalid)
        if not urls:
            raise InvalidRequest.check("No valid URLs provided", ["urls"])
        scrape = self._scrape_job(urls[0], default_timeout_s)
        options = CrawlOptions(
            seeds=tuple(urls), limit=max_urls, max_depth=0, sitemap="skip", ignore_robots=True,
            dedupe_similar=False, max_concurrency=self.maxConcurrency, formats=scrape.formats,
            main_only=scrape.main_only, warnings=self._batch_warnings(scrape), kind=BATCH,
            page_timeout_s=scrape.timeout_ms / 1000, max_age_ms=scrape.cache_use.max_age_ms,
            store_in_cache=scrape.cache_use.store)
        return Batch(options, invalid if skip_invalid else None, self.appendToId)

    def _scrape_job(self, url: str, default_timeout_s: float) -> ScrapeJob:
        """The scrape each URL gets, read by /v2/scrape's (or /v1/scrape's) own rules: every batch request is
        also the scrape request of its version (the classes below)."""
        return self.model_copy(update={"url": url}).to_job(default_timeout_s)  # type: ignore[attr-defined]

    def _batch_warnings(self, scrape: ScrapeJob) -> tuple[str, ...]:
        """What the batch leaves out of each scrape; actions are a 400, since a batch would return pages without
        what they were for."""
        work = scrape.work
        if work.actions:
            raise ScrapeFailed(400, "SCRAPE_ACTIONS_NOT_SUPPORTED",
                               "actions are not supported in batch scrapes: POST /v2/scrape runs them")
        warnings = list(scrape.warnings)
        if browser := [name for name, asked in (("screenshot", work.screenshot), ("waitFor", work.wait_for_ms),
                                                ("mobile", work.mobile), ("headers", work.headers)) if asked]:
            warnings.append(f"{', '.join(browser)} are not supported in batch scrapes and were ignored (POST "
                            "/v2/scrape does them; a page that needs its scripts run is still rendered)")
        if scrape.asks:
            skipped = sorted(ask.kind for ask in scrape.asks)
            warnings.append(f"formats {skipped} ask the LLM, which batch scrapes do not: they were skipped "
                            "(POST /v2/scrape answers them)")
        if self.webhook is not None:
            warnings.append("webhook is not supported: poll GET /v2/batch/scrape/{id}")
        return tuple(warnings)


class BatchScrapeRequest(_BatchFields, ScrapeRequest):
    """v2's batch scrape: the scrape options at the top level beside `urls`."""


class V1BatchScrapeRequest(_BatchFields, V1ScrapeRequest):
    """v1's batch scrape: v1's scrape options (string formats, jsonOptions, extract) beside `urls`."""


def started_body(job_id: str, base_url: str, invalid: list[str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"success": True, "id": job_id, "url": f"{base_url}/batch/scrape/{job_id}"}
    if invalid is not None:
        body["invalidURLs"] = invalid
    return body


def batch_status_body(job: Job, counts: Counts, documents: list[dict[str, Any]], skip: int, limit: int | None,
                      base_url: str, none_scraped: str | None = None) -> dict[str, Any]:
    """The crawl's status (contract §5), its `next` on the batch's route, without the index's counts: a batch
    indexes nothing."""
    body = status_body(job, counts, documents, skip, limit, base_url, "batch/scrape", none_scraped)
    body.pop("index")
    return body


def batch_errors_body(job_id: str, errors: list[dict[str, Any]], robots_blocked: list[str]) -> dict[str, Any]:
    """The crawl's errors answer, with `success`: firecrawl-py's async client raises without it."""
    return {"success": True, **errors_body(job_id, errors, robots_blocked)}
