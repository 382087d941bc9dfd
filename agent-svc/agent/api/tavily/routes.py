"""Tavily's POST /search and POST /extract: parse, run Wisp's search or scrape, shape Tavily's answer; every
refusal in Tavily's error shape, not Firecrawl's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from wisp_obs.requests import request_id

from agent.api.firecrawl.search_wire import read_request
from agent.api.gate.admission import admit_costly, admit_search
from agent.api.tavily.wire import (
    EXTRACT_PATH,
    SEARCH_PATH,
    TavilyExtractRequest,
    TavilySearchRequest,
    error_body,
    extract_result,
    search_response,
)
from agent.errors import BadRequest, WispError
from agent.index.crawl.options import page_url
from agent.search.scrape import ScrapeFailed, ScrapeJob, scrape
from agent.search.service import prepared, run_search
from agent.services import Services

router = APIRouter()


@router.post(SEARCH_PATH)
async def tavily_search(request: Request) -> JSONResponse:
    return await _answered(request, _search)


@router.post(EXTRACT_PATH)
async def tavily_extract(request: Request) -> JSONResponse:
    return await _answered(request, _extract)


async def _answered(request: Request, handler: Callable[[Request, float], Awaitable[dict]]) -> JSONResponse:
    try:
        return JSONResponse(await handler(request, time.monotonic()))
    except WispError as error:
        return JSONResponse(error_body(error), status_code=error.status, headers=error.headers())


async def _search(request: Request, started: float) -> dict:
    body = await read_request(request, TavilySearchRequest)
    services: Services = request.app.state.services
    query = prepared(body.to_query(), services.settings)
    await admit_search(request, query)
    outcome = await run_search(query, services)
    return search_response(outcome, body, time.monotonic() - started)


async def _extract(request: Request, started: float) -> dict:
    body = await read_request(request, TavilyExtractRequest)
    await admit_costly(request)  # pages fetched and extracted: seconds of a worker's CPU
    services: Services = request.app.state.services
    jobs = body.jobs(services.settings.scrape_timeout_s)
    scraped = list(zip(jobs, await asyncio.gather(*(_scraped(job, services) for job in jobs)), strict=True))
    return {
        "results": [extract_result(job.url, found, body.format) for job, found in scraped if isinstance(found, dict)],
        "failed_results": [{"url": job.url, "error": found} for job, found in scraped if isinstance(found, str)],
        "response_time": round(time.monotonic() - started, 2),
        "request_id": request_id(),
    }


async def _scraped(job: ScrapeJob, services: Services) -> dict | str:
    """The page's Document, or why it could not be had (Tavily fails a page the site answered with an error)."""
    try:
        document = await scrape(replace(job, url=page_url(job.url)), services)
    except (ScrapeFailed, BadRequest) as failure:
        return failure.message
    status = document.get("metadata", {}).get("statusCode", 200)
    return document if status < 400 else f"{job.url} answered HTTP {status}"
