"""HTTP routes of Firecrawl's scrape API (v2, and v1's request shape): parse, scrape, wrap the Document."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.admission import admit_costly
from agent.api.firecrawl import read_request
from agent.api.scrape_wire import ScrapeRequest, V1ScrapeRequest
from agent.search.scrape import scrape

router = APIRouter()


@router.post("/v2/scrape")
async def scrape_v2(request: Request) -> JSONResponse:
    return await _scraped(request, await read_request(request, ScrapeRequest))


@router.post("/v1/scrape")
async def scrape_v1(request: Request) -> JSONResponse:
    return await _scraped(request, await read_request(request, V1ScrapeRequest))


async def _scraped(request: Request, body: ScrapeRequest | V1ScrapeRequest) -> JSONResponse:
    admit_costly(request)  # a page fetched and extracted: seconds of a worker's CPU
    services = request.app.state.services
    document = await scrape(body.to_job(services.settings.scrape_timeout_s), services)
    return JSONResponse({"success": True, "data": document})
