"""POST /v2/extract and /v1/extract as Firecrawl's clients send them, and the status body GET returns.

Lenient like the other routes (unknown keys accepted and ignored; nulls, which v1's Python SDK sends for
every option it was not given, mean the default), strict on the types of known keys, with explicit limits:
EXTRACT_MAX_URLS URLs, prompts of 10,000 characters (Firecrawl's bounds), a schema that is a JSON Schema.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from agent.api.bodies import request_schema
from agent.api.firecrawl.search_wire import SafeInt, ScrapeOptions
from agent.api.settings import RequestSettings
from agent.core.dates import iso_instant
from agent.core.extract_job import ExtractJob
from agent.errors import InvalidRequest
from agent.index.crawl.options import page_url, split_urls
from agent.state.background import COMPLETED, FAILED
from agent.state.extracts import ExtractRecord

MAX_PROMPT_CHARS = 10_000
SITE = "/*"  # a URL ending so means its site


class ExtractRequest(BaseModel):
    """Firecrawl's v2 extract request (controllers/v2/types.ts `extractOptions`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    ignores_invalid_urls: ClassVar[bool] = True  # v2's default; v1's is false

    urls: list[StrictStr] | None = None
    prompt: StrictStr | None = Field(None, max_length=MAX_PROMPT_CHARS)
    json_schema: Any = Field(None, alias="schema")
    systemPrompt: StrictStr | None = Field(None, max_length=MAX_PROMPT_CHARS)  # noqa: N815 - Firecrawl's wire names
    enableWebSearch: StrictBool | None = None  # noqa: N815
    showSources: StrictBool | None = None  # noqa: N815
    experimental_show_sources: StrictBool | None = Field(None, alias="__experimental_showSources")
    ignoreInvalidURLs: StrictBool | None = None  # noqa: N815
    allowExternalLinks: StrictBool | None = None  # noqa: N815
    includeSubdomains: StrictBool | None = None  # noqa: N815
    limit: SafeInt | None = Field(None, gt=0)
    timeout: SafeInt | None = Field(None, gt=0)
    scrapeOptions: ScrapeOptions | None = None  # noqa: N815
    agent: dict[str, Any] | None = None
    origin: StrictStr | None = None
    integration: StrictStr | None = None

    def to_job(self, settings: RequestSettings) -> tuple[ExtractJob, list[str]]:
        """The job, and the URLs left out as invalid (ignoreInvalidURLs); a 400 naming what is wrong."""
        given = [url.strip() for url in self.urls or []]
        if len(given) > settings.extract_max_urls:
            raise InvalidRequest.check(f"{len(given)} urls; at most {settings.extract_max_urls} are accepted per "
                                       "extraction (EXTRACT_MAX_URLS)", ["urls"])
        skip_invalid = self.ignoreInvalidURLs if self.ignoreInvalidURLs is not None else self.ignores_invalid_urls
        valid, invalid = split_urls(given, skip_invalid, _page_or_site_url)
        prompt = self.prompt if self.prompt and self.prompt.strip() else None
        if not valid and not prompt:
            raise InvalidRequest.check("Either 'urls' or 'prompt' must be provided." if not given else
                                       f"none of the urls is valid ({', '.join(invalid[:3])}) and there is no "
                                       "prompt", ["urls"])
        schema = request_schema(self.json_schema)
        web_search = bool(self.enableWebSearch)
        job = ExtractJob(
            urls=tuple(url for url in valid if not url.endswith(SITE)),
            sites=tuple(url.removesuffix("*") for url in valid if url.endswith(SITE)),
            prompt=prompt, schema=schema, system_prompt=self.systemPrompt or None, web_search=web_search,
            main_only=bool(self.scrapeOptions and self.scrapeOptions.onlyMainContent),
            subdomains=self.includeSubdomains is not False,
            external=bool(self.allowExternalLinks) or web_search,  # as Firecrawl: web search implies external
            site_limit=min(self.limit or settings.extract_site_pages, settings.extract_site_pages),
            timeout_s=min(self.timeout / 1000, settings.extract_timeout_s) if self.timeout
            else settings.extract_timeout_s,
            show_sources=bool(self.showSources or self.experimental_show_sources),
            warnings=("`agent` is not supported: the extraction ran without one",) if self.agent else ())
        return job, invalid


def _page_or_site_url(url: str, path: list[str | int]) -> str:
    """A page's URL, or a site's (ending in /*), read as page_url reads a page's."""
    return page_url(url.removesuffix("*"), path) + ("*" if url.endswith("*") else "")


class V1ExtractRequest(ExtractRequest):
    """v1's extract request: the same fields, invalid URLs a 400 unless ignoreInvalidURLs is set."""

    ignores_invalid_urls: ClassVar[bool] = False


def started_body(job_id: str, invalid: list[str]) -> dict[str, Any]:
    body: dict[str, Any] = {"success": True, "id": job_id}
    if invalid:
        body["invalidURLs"] = invalid
    return body


def status_body(record: ExtractRecord) -> dict[str, Any]:
    """Firecrawl's status: `success` false only for a failed job, `data` [] until it completes, `sources` when
    the request asked for them."""
    result = record.result
    body: dict[str, Any] = {"success": record.status != FAILED, "status": record.status,
                            "data": result.data if result and record.status == COMPLETED else [],
                            "expiresAt": iso_instant(record.expires)}
    if result and result.error:
        body["error"] = result.error
    if result and result.warnings:
        body["warning"] = "; ".join(result.warnings)
    if result and record.job.show_sources and record.status == COMPLETED:
        body["sources"] = result.sources
    return body
