"""HTTP routes of Firecrawl's crawl API (v2, and v1's paths): parse, call the manager, shape the reply."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.requests import HTTPConnection

from agent.api.bodies import read_request
from agent.api.firecrawl.crawl_wire import MAX_PAGE_BYTES, active_body, errors_body, paging, started_body, status_body
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.core.crawl_options import CRAWL
from agent.errors import BadRequest
from agent.index.crawl.manager import Crawls
from agent.index.crawl.options import CrawlRequest, V1CrawlRequest

router = APIRouter()


def _crawls(request: Request) -> Crawls:
    return request.app.state.crawls


def api_version(connection: HTTPConnection) -> str:
    """The API version a request or a WebSocket reached (v1, v2), from its path."""
    return connection.url.path.lstrip("/").split("/", 1)[0]


def api_base_url(request: Request) -> str:
    """Where this API version's routes are, as the client reached them: `url` and `next` point there."""
    return f"{str(request.base_url).rstrip('/')}/{api_version(request)}"


@router.post("/v2/crawl")
@router.post("/v1/crawl")
async def start_crawl(request: Request) -> JSONResponse:
    crawls = _crawls(request)
    model = V1CrawlRequest if api_version(request) == "v1" else CrawlRequest
    options = (await read_request(request, model)).to_options(request_settings(request).crawl_max_pages)
    return JSONResponse(started_body(await crawls.start(options, owner_of(request.scope)), api_base_url(request)))


@router.get("/v2/crawl/active")
@router.get("/v2/crawl/ongoing")
@router.get("/v1/crawl/active")
@router.get("/v1/crawl/ongoing")
async def active_crawls(request: Request) -> JSONResponse:
    return JSONResponse(active_body(await _crawls(request).active(owner_of(request.scope)), api_version(request)))


@router.get("/v2/crawl/{job_id}")
@router.get("/v1/crawl/{job_id}")
async def crawl_status(job_id: str, request: Request) -> JSONResponse:
    skip, limit, asked = paging(request.query_params.get("skip"), request.query_params.get("limit"))
    crawls = _crawls(request)
    job, counts, documents = await crawls.status(job_id, CRAWL, skip, limit, MAX_PAGE_BYTES, owner_of(request.scope))
    return JSONResponse(status_body(job, counts, documents, skip, asked, api_base_url(request),
                                    none_scraped=await crawls.why_none_scraped(job, counts)))


@router.delete("/v2/crawl/{job_id}")
@router.delete("/v1/crawl/{job_id}")
async def cancel_crawl(job_id: str, request: Request) -> JSONResponse:
    await _crawls(request).cancel(job_id, CRAWL, owner_of(request.scope))
    return JSONResponse({"status": "cancelled"})


@router.get("/v2/crawl/{job_id}/errors")
@router.get("/v1/crawl/{job_id}/errors")
async def crawl_errors(job_id: str, request: Request) -> JSONResponse:
    errors, robots_blocked = await _crawls(request).errors(job_id, CRAWL, owner_of(request.scope))
    return JSONResponse(errors_body(job_id, errors, robots_blocked))


@router.post("/v2/crawl/params-preview")
async def crawl_params_preview() -> JSONResponse:
    raise BadRequest("Crawl options derived from a prompt are not supported by Wisp: give the crawl's options "
                     "(includePaths, excludePaths, maxDiscoveryDepth, limit, …) in the crawl request")
