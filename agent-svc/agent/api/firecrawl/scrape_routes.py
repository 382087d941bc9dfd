"""HTTP routes of Firecrawl's scrape API (v2, and v1's request shape): parse, scrape, wrap the Document; and a
recent scrape's Document again by its id."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.bodies import read_request
from agent.api.firecrawl.scrape_wire import ScrapeRequest, V1ScrapeRequest
from agent.api.gate.admission import admit_costly
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.errors import BadRequest, Forbidden, NotFound
from agent.search.scrape import scrape
from agent.state.recent import Recent

router = APIRouter()


@router.post("/v2/scrape")
async def scrape_v2(request: Request) -> JSONResponse:
    return await _scraped(request, await read_request(request, ScrapeRequest))


@router.post("/v1/scrape")
async def scrape_v1(request: Request) -> JSONResponse:
    return await _scraped(request, await read_request(request, V1ScrapeRequest))


async def _scraped(request: Request, body: ScrapeRequest | V1ScrapeRequest) -> JSONResponse:
    await admit_costly(request)  # a page fetched and extracted: seconds of a worker's CPU
    services = request.app.state.services
    document = await scrape(body.to_job(request_settings(request).scrape_timeout_s), services)
    await _recent(request).put(owner_of(request.scope), document)
    return JSONResponse({"success": True, "data": document})


@router.get("/v2/scrape/{scrape_id}")
@router.get("/v1/scrape/{scrape_id}")
async def scraped_document(scrape_id: str, request: Request) -> JSONResponse:
    if not _is_uuid(scrape_id):
        raise BadRequest("Invalid scrape ID: a scrape's id is the UUID in its metadata.scrapeId")
    kept = await _recent(request).get(scrape_id)
    if kept is None:
        raise NotFound("Job not found.")  # Firecrawl's wording; also once SCRAPE_KEEP_S has passed
    if kept.owner != owner_of(request.scope):
        raise Forbidden("You are not allowed to access this resource.")
    return JSONResponse({"success": True, "data": kept.document})


def _recent(request: Request) -> Recent:
    return request.app.state.recent_scrapes


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False
