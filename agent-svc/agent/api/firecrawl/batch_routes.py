"""HTTP routes of Firecrawl's batch scrape API (v2, and v1's paths): parse, call the crawl manager (a batch is
a job of its own kind there), shape the reply."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.bodies import read_request
from agent.api.firecrawl.batch_wire import (
    BatchScrapeRequest,
    V1BatchScrapeRequest,
    batch_errors_body,
    batch_status_body,
    started_body,
)
from agent.api.firecrawl.crawl_routes import api_base_url
from agent.api.firecrawl.crawl_wire import MAX_PAGE_BYTES, paging
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.core.crawl_options import BATCH
from agent.index.crawl.manager import Crawls

router = APIRouter()


def _crawls(request: Request) -> Crawls:
    return request.app.state.crawls


@router.post("/v2/batch/scrape")
async def start_batch_scrape_v2(request: Request) -> JSONResponse:
    return await _started(request, await read_request(request, BatchScrapeRequest))


@router.post("/v1/batch/scrape")
async def start_batch_scrape_v1(request: Request) -> JSONResponse:
    return await _started(request, await read_request(request, V1BatchScrapeRequest))


async def _started(request: Request, body: BatchScrapeRequest | V1BatchScrapeRequest) -> JSONResponse:
    crawls = _crawls(request)
    settings = request_settings(request)
    batch = body.to_batch(settings.scrape_timeout_s, settings.batch_max_urls)
    job_id = await crawls.start(batch.options, owner_of(request.scope), batch.append_to)
    return JSONResponse(started_body(job_id, api_base_url(request), batch.invalid))


@router.get("/v2/batch/scrape/{job_id}")
@router.get("/v1/batch/scrape/{job_id}")
async def batch_scrape_status(job_id: str, request: Request) -> JSONResponse:
    skip, limit, asked = paging(request.query_params.get("skip"), request.query_params.get("limit"))
    crawls = _crawls(request)
    job, counts, documents = await crawls.status(job_id, BATCH, skip, limit, MAX_PAGE_BYTES, owner_of(request.scope))
    return JSONResponse(batch_status_body(job, counts, documents, skip, asked, api_base_url(request),
                                          await crawls.why_none_scraped(job, counts)))


@router.delete("/v2/batch/scrape/{job_id}")
@router.delete("/v1/batch/scrape/{job_id}")
async def cancel_batch_scrape(job_id: str, request: Request) -> JSONResponse:
    await _crawls(request).cancel(job_id, BATCH, owner_of(request.scope))
    return JSONResponse({"status": "cancelled"})


@router.get("/v2/batch/scrape/{job_id}/errors")
@router.get("/v1/batch/scrape/{job_id}/errors")
async def batch_scrape_errors(job_id: str, request: Request) -> JSONResponse:
    errors, robots_blocked = await _crawls(request).errors(job_id, BATCH, owner_of(request.scope))
    return JSONResponse(batch_errors_body(job_id, errors, robots_blocked))
