"""HTTP routes of Firecrawl's crawl API: parse, call the manager, shape the reply (crawl/wire.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.crawl.manager import Crawls
from agent.crawl.options import CrawlRequest
from agent.crawl.wire import MAX_PAGE_BYTES, errors_body, paging, started_body, status_body
from agent.firecrawl import parsed

router = APIRouter()


def _crawls(request: Request) -> Crawls:
    return request.app.state.crawls


def _base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


@router.post("/v2/crawl")
@router.post("/v1/crawl")
async def start_crawl(request: Request) -> JSONResponse:
    crawls = _crawls(request)
    options = parsed(await request.body(), CrawlRequest).to_options(crawls.services.settings.crawl_max_pages)
    return JSONResponse(started_body(await crawls.start(options), _base_url(request)))


@router.get("/v2/crawl/{job_id}")
@router.get("/v1/crawl/{job_id}")
async def crawl_status(job_id: str, request: Request) -> JSONResponse:
    crawls = _crawls(request)
    raw_limit = request.query_params.get("limit")
    skip, limit = paging(request.query_params.get("skip"), raw_limit)
    job = await crawls.job(job_id)
    counts = await crawls.store.call("counts", job_id)
    documents = await crawls.store.call("documents", job_id, skip, limit, MAX_PAGE_BYTES)
    return JSONResponse(status_body(job, counts, documents, skip, int(raw_limit) if raw_limit else None,
                                   _base_url(request)))


@router.delete("/v2/crawl/{job_id}")
@router.delete("/v1/crawl/{job_id}")
async def cancel_crawl(job_id: str, request: Request) -> JSONResponse:
    await _crawls(request).cancel(job_id)
    return JSONResponse({"status": "cancelled"})


@router.get("/v2/crawl/{job_id}/errors")
async def crawl_errors(job_id: str, request: Request) -> JSONResponse:
    crawls = _crawls(request)
    await crawls.job(job_id)
    errors, robots_blocked = await crawls.store.call("errors", job_id)
    return JSONResponse(errors_body(job_id, errors, robots_blocked))
