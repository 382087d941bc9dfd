"""HTTP routes of Firecrawl's crawl API (v2, and v1's paths): parse, call the manager, shape the reply."""

from __future__ import annotations

import json
from dataclasses import replace

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.requests import HTTPConnection

from agent.api.bodies import read_request
from agent.api.firecrawl.crawl_wire import MAX_PAGE_BYTES, active_body, errors_body, paging, started_body, status_body
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.core.crawl_options import CRAWL
from agent.index.crawl.manager import Crawls
from agent.index.crawl.options import CrawlRequest, ParamsPreviewRequest, V1CrawlRequest, page_url
from agent.index.crawl.prompted import crawl_options_from
from agent.services import Services

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
    body, max_pages = await read_request(request, model), request_settings(request).crawl_max_pages
    notes: tuple[str, ...] = ()
    if body.prompt and body.prompt.strip():
        body, notes = await _prompted(request, body, max_pages)
    options = body.to_options(max_pages)
    options = replace(options, warnings=options.warnings + notes)
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


async def _prompted(request: Request, body: CrawlRequest, max_pages: int) -> tuple[CrawlRequest, tuple[str, ...]]:
    """`body` with the options its prompt gives where it set none itself (what a request says wins), and what was
    taken from the prompt."""
    services: Services = request.app.state.services
    derived = await crawl_options_from(page_url(body.url), body.prompt or "", services.upstreams.llm,
                                       services.map_tools, max_pages)
    taken = {name: value for name, value in derived.options.items() if getattr(body, name) is None}
    said = f"options from the prompt: {json.dumps(taken)}" if taken else "the prompt gave no crawl option"
    return body.model_copy(update=taken), (*derived.warnings, said)


@router.post("/v2/crawl/params-preview")
async def crawl_params_preview(request: Request) -> JSONResponse:
    """The options a crawl's prompt would give (firecrawl-py's `crawl_params_preview`)."""
    body = await read_request(request, ParamsPreviewRequest)
    services: Services = request.app.state.services
    derived = await crawl_options_from(page_url(body.url), body.prompt.strip(), services.upstreams.llm,
                                       services.map_tools, request_settings(request).crawl_max_pages)
    reply: dict[str, object] = {"success": True, "data": {"url": page_url(body.url), **derived.options}}
    return JSONResponse(reply | ({"warning": "; ".join(derived.warnings)} if derived.warnings else {}))
