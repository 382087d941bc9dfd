"""Firecrawl's crawl responses (contract §4.2–§7), shaped for both SDKs' parsers.

Status is always HTTP 200 with `success: true`, a failed crawl included; counts are integers, never null;
`expiresAt` is ISO 8601; `next` is absolute. As upstream, a running crawl's page has a `next` while `total`
exceeds what the page reached, pages still pending included. Unlike upstream, an empty page never has one: its
`next` would point at itself, and firecrawl-js and the MCP server, which follow `next` without a guard, would
fetch it in a tight loop until the crawl ends. Once the crawl has ended only finished documents count, so that
the pages a cancelled or failed crawl left queued do not keep a client paging for ever.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from agent.core.crawl_options import CrawlOptions
from agent.core.dates import iso_instant
from agent.errors import BadRequest
from agent.index.crawl.options import url_depth
from agent.state.jobs import FAILED, RUNNING, Counts, Job

DEFAULT_PAGE, MAX_PAGE = 100, 1000
MAX_PAGE_BYTES = 10 * 1024 * 1024
# an active crawl's teamId: Wisp's crawls belong to the service, not to a key (firecrawl-py and firecrawl-js
# require a string there)
TEAM_ID = "self-hosted"


def paging(skip: str | None, limit: str | None) -> tuple[int, int, int | None]:
    """`skip`, `limit` and the limit as asked (None: the default) of GET /v2/crawl/{id}: 400 unless skip is a
    non-negative integer and limit one from 1 to 1000."""
    if any(value is not None and not (value.isascii() and value.isdigit() and len(value) <= 10)
           for value in (skip, limit)):
        raise BadRequest("skip and limit must be non-negative integers")
    first = int(skip) if skip is not None else 0
    asked = int(limit) if limit is not None else None
    if asked is not None and not 1 <= asked <= MAX_PAGE:
        raise BadRequest(f"limit must be from 1 to {MAX_PAGE}")
    return first, asked or DEFAULT_PAGE, asked


def started_body(job_id: str, base_url: str) -> dict[str, Any]:
    return {"success": True, "id": job_id, "url": f"{base_url}/crawl/{job_id}"}


def active_body(jobs: list[Job], version: str = "v2") -> dict[str, Any]:
    """GET /{version}/crawl/active: each running crawl with its options under the API version's names."""
    options = v1_options if version == "v1" else v2_options
    return {"success": True, "crawls": [{"id": j.id, "teamId": TEAM_ID, "url": j.options.seed,
                                         "created_at": iso_instant(j.created), "options": options(j.options)}
                                        for j in jobs]}


def v2_options(o: CrawlOptions) -> dict[str, Any]:
    """A crawl's options as Firecrawl's v2 crawler options (what POST /v2/crawl takes); unset ones left out."""
    options = {
        "includePaths": list(o.include), "excludePaths": list(o.exclude), "regexOnFullURL": o.regex_on_full_url,
        "maxDiscoveryDepth": o.max_depth, "limit": o.limit, "crawlEntireDomain": o.entire_domain,
        "allowExternalLinks": o.external, "allowSubdomains": o.subdomains, "ignoreRobotsTxt": o.ignore_robots,
        "sitemap": o.sitemap, "ignoreQueryParameters": o.ignore_query, "deduplicateSimilarURLs": o.dedupe_similar,
        "delay": o.delay_s, "maxConcurrency": o.max_concurrency,
        "scrapeOptions": {"formats": list(o.formats), "onlyMainContent": o.main_only},
    }
    return {name: value for name, value in options.items() if value is not None}


def v1_options(o: CrawlOptions) -> dict[str, Any]:
    """v1's names of the same: maxDepth (path segments beyond the start URL), allowBackwardLinks, ignoreSitemap."""
    options = v2_options(o)
    del options["sitemap"]
    options |= {"allowBackwardLinks": o.entire_domain, "ignoreSitemap": o.sitemap == "skip"}
    if o.max_path_depth is not None:
        options["maxDepth"] = o.max_path_depth - url_depth(o.seed)
    return options


def status_body(job: Job, counts: Counts, documents: list[dict[str, Any]], skip: int, limit: int | None,
                base_url: str, route: str = "crawl", none_scraped: str | None = None) -> dict[str, Any]:
    """The job's status; `none_scraped` (Crawls.why_none_scraped) joins its warnings."""
    body: dict[str, Any] = {
        "success": True, "status": job.status, "total": counts.total, "completed": counts.completed,
        "creditsUsed": counts.completed, "expiresAt": iso_instant(job.expires), "data": documents,
        "index": {"indexed": job.indexed, "unchanged": job.unchanged, "chunks": job.chunks,
                  "notIndexed": job.not_indexed},
    }
    if (counts.total if job.status == RUNNING and documents else counts.completed) > skip + len(documents):
        query = {"skip": skip + len(documents), **({"limit": limit} if limit is not None else {})}
        body["next"] = f"{base_url}/{route}/{job.id}?{urlencode(query)}"
    warnings = list(job.options.warnings)
    if job.status == FAILED and job.error:
        body["error"] = job.error
        warnings.append(f"the crawl failed: {job.error}")
    elif job.error:  # a crawl stopped at its time limit
        warnings.append(job.error)
    if job.not_indexed:
        warnings.append(f"{job.not_indexed} pages were not indexed: {job.index_error}")
    if none_scraped:
        warnings.append(none_scraped)
    if warnings:
        body["warning"] = "; ".join(warnings)
    return body


def errors_body(job_id: str, errors: list[dict[str, Any]], robots_blocked: list[str]) -> dict[str, Any]:
    return {"errors": [{"id": e["id"], "url": e["url"], "error": e["error"], "code": e["code"],
                        "timestamp": iso_instant(e["finished"])} for e in errors],
            "robotsBlocked": robots_blocked}

