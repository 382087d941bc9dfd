"""HTTP routes of Firecrawl's parse API: an uploaded file (PDF, DOCX, HTML, markdown, text) as a Document, and the
list of the file types it reads."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.firecrawl.parse_wire import formats_body, read_parse_request
from agent.api.gate.admission import admit_costly
from agent.api.settings import request_settings
from agent.search.parse import parse

router = APIRouter()


@router.post("/v2/parse")
async def parse_v2(request: Request) -> JSONResponse:
    upload, options = await read_parse_request(request)
    job = options.to_job(request_settings(request).scrape_timeout_s)
    await admit_costly(request)  # a file extracted: up to seconds of a worker's CPU
    document = await parse(upload, job, request.app.state.services)
    return JSONResponse({"success": True, "data": document})


@router.get("/v2/parse/formats")
async def parse_formats() -> JSONResponse:
    return JSONResponse(formats_body())
