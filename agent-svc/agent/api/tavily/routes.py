"""Tavily's POST /search (on the front door) and POST /extract (a scrape of each URL): Tavily's answers; every
refusal is in Tavily's error shape, not Firecrawl's, since envelopes.py picks it by path."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from wisp_obs.requests import request_id

from agent.api.bodies import read_request
from agent.api.front_door import Surface, answer
from agent.api.gate.admission import admit_costly
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.api.streaming import EVENT_STREAM
from agent.api.tavily.research import TavilyResearchRequest, started_body, status_body
from agent.api.tavily.research_stream import research_events
from agent.api.tavily.wire import (
    EXTRACT_PATH,
    RESEARCH_PATH,
    SEARCH_PATH,
    TavilyExtractRequest,
    TavilySearchRequest,
    extract_result,
    search_response,
)
from agent.errors import BadRequest
from agent.index.crawl.options import page_url
from agent.search.scrape import ScrapeFailed, ScrapeJob, scrape
from agent.services import Services

SEARCH = Surface(TavilySearchRequest, TavilySearchRequest.to_query,
                 lambda outcome, body, query, elapsed_s: search_response(outcome, body, elapsed_s))
router = APIRouter()


@router.post(SEARCH_PATH)
async def tavily_search(request: Request) -> Response:
    return await answer(request, SEARCH)


@router.post(EXTRACT_PATH)
async def tavily_extract(request: Request) -> JSONResponse:
    started = time.monotonic()
    body = await read_request(request, TavilyExtractRequest)
    await admit_costly(request)  # pages fetched and extracted: seconds of a worker's CPU
    services: Services = request.app.state.services
    jobs = body.jobs(request_settings(request).scrape_timeout_s)
    scraped = list(zip(jobs, await asyncio.gather(*(_scraped(job, services) for job in jobs)), strict=True))
    return JSONResponse({
        "results": [extract_result(job.url, found, body.format) for job, found in scraped if isinstance(found, dict)],
        "failed_results": [{"url": job.url, "error": found} for job, found in scraped if isinstance(found, str)],
        "response_time": round(time.monotonic() - started, 2),
        "request_id": request_id(),
    })


@router.post(RESEARCH_PATH)
async def tavily_research(request: Request) -> Response:
    body = await read_request(request, TavilyResearchRequest)
    await admit_costly(request)  # the start only: the jobs themselves are bounded by RESEARCH_MAX_JOBS(_PER_KEY)
    if body.stream:  # run within the request, its slot held until the stream ends
        return StreamingResponse(research_events(body.to_job(), request.app.state.researcher),
                                 media_type=EVENT_STREAM, headers={"Cache-Control": "no-cache"})
    jobs, owner = request.app.state.research, owner_of(request.scope)
    record = await jobs.get(await jobs.start(body.to_job(), owner), owner)
    return JSONResponse(started_body(record, body))


@router.get(RESEARCH_PATH + "/{request_id}")
async def tavily_research_status(request_id: str, request: Request) -> JSONResponse:
    record = await request.app.state.research.get(request_id, owner_of(request.scope))
    return JSONResponse(status_body(record), status_code=200 if record.result is not None else 202)


async def _scraped(job: ScrapeJob, services: Services) -> dict | str:
    """The page's Document, or why it could not be had (Tavily fails a page the site answered with an error)."""
    try:
        document = await scrape(replace(job, url=page_url(job.url)), services)
    except (ScrapeFailed, BadRequest) as failure:
        return failure.message
    status = document.get("metadata", {}).get("statusCode", 200)
    return document if status < 400 else f"{job.url} answered HTTP {status}"
