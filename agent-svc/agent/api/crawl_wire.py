"""Firecrawl's crawl responses (contract §4.2–§7), shaped for both SDKs' parsers.

Status is always HTTP 200 with `success: true`, a failed crawl included; counts are integers, never null;
`expiresAt` is ISO 8601; `next` is absolute and present only when finished documents lie beyond the page, so
that no client loops on an empty page pointing at itself.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from agent.core.dates import iso_instant
from agent.errors import BadRequest
from agent.index.crawl.jobs import FAILED, Counts, Job

DEFAULT_PAGE, MAX_PAGE = 100, 1000
MAX_PAGE_BYTES = 10 * 1024 * 1024


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


def active_body(jobs: list[Job]) -> dict[str, Any]:
    return {"success": True, "crawls": [{"id": j.id, "url": j.options.seed, "created_at": iso_instant(j.created),
                                         "options": j.options.as_json()} for j in jobs]}


def status_body(job: Job, counts: Counts, documents: list[dict[str, Any]], skip: int, limit: int | None,
                base_url: str, route: str = "crawl") -> dict[str, Any]:
    body: dict[str, Any] = {
        "success": True, "status": job.status, "total": counts.total, "completed": counts.completed,
        "creditsUsed": counts.completed, "expiresAt": iso_instant(job.expires), "data": documents,
        "index": {"indexed": job.indexed, "unchanged": job.unchanged, "chunks": job.chunks,
                  "notIndexed": job.not_indexed},
    }
    if counts.completed > skip + len(documents):
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
    if warnings:
        body["warning"] = "; ".join(warnings)
    return body


def errors_body(job_id: str, errors: list[dict[str, Any]], robots_blocked: list[str]) -> dict[str, Any]:
    return {"errors": [{"id": e["id"], "url": e["url"], "error": e["error"], "code": e["code"],
                        "timestamp": iso_instant(e["finished"])} for e in errors],
            "robotsBlocked": robots_blocked}

