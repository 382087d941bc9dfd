"""Firecrawl's crawl responses (contract §4.2–§7), shaped for both SDKs' parsers.

Status is always HTTP 200 with `success: true`, a failed crawl included; counts are integers, never null;
`expiresAt` is ISO 8601; `next` is absolute and present only when finished documents lie beyond the page, so
that no client loops on an empty page pointing at itself.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from agent.crawl.jobs import FAILED, Counts, Job
from agent.errors import BadRequest

DEFAULT_PAGE, MAX_PAGE = 100, 1000
MAX_PAGE_BYTES = 10 * 1024 * 1024


def paging(skip: str | None, limit: str | None) -> tuple[int, int]:
    """`skip` and `limit` of GET /v2/crawl/{id}: 400 unless a non-negative integer and 1..1000."""
    try:
        first = int(skip) if skip is not None else 0
        size = int(limit) if limit is not None else DEFAULT_PAGE
    except ValueError:
        raise BadRequest("skip and limit must be integers") from None
    if first < 0 or not 1 <= size <= MAX_PAGE or first > 10**9:
        raise BadRequest(f"skip must be 0 or more and limit from 1 to {MAX_PAGE}")
    return first, size


def started_body(job_id: str, base_url: str) -> dict[str, Any]:
    return {"success": True, "id": job_id, "url": f"{base_url}/v2/crawl/{job_id}"}


def status_body(job: Job, counts: Counts, documents: list[dict[str, Any]], skip: int, limit: int | None,
                base_url: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "success": True, "status": job.status, "total": counts.total, "completed": counts.completed,
        "creditsUsed": counts.completed, "expiresAt": _iso(job.expires), "data": documents,
        "index": {"indexed": job.indexed, "unchanged": job.unchanged, "chunks": job.chunks,
                  "notIndexed": job.not_indexed},
    }
    if counts.completed > skip + len(documents):
        query = {"skip": skip + len(documents), **({"limit": limit} if limit is not None else {})}
        body["next"] = f"{base_url}/v2/crawl/{job.id}?{urlencode(query)}"
    warnings = list(job.options.warnings)
    if job.status == FAILED and job.error:
        body["error"] = job.error
        warnings.append(f"the crawl failed: {job.error}")
    if job.not_indexed:
        warnings.append(f"{job.not_indexed} pages were not indexed: {job.index_error}")
    if warnings:
        body["warning"] = "; ".join(warnings)
    return body


def errors_body(job_id: str, errors: list[dict[str, Any]], robots_blocked: list[str]) -> dict[str, Any]:
    return {"errors": [{"id": e["id"], "url": e["url"], "error": e["error"], "code": e["code"],
                        "timestamp": _iso(e["finished"])} for e in errors],
            "robotsBlocked": robots_blocked}


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
