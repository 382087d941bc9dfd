"""HTTP routes of Firecrawl's extract API (v2, and v1's paths): parse, start the job, shape its status."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.bodies import read_request
from agent.api.firecrawl.extract_wire import ExtractRequest, V1ExtractRequest, started_body, status_body
from agent.api.gate.admission import admit_costly
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.extract.jobs import ExtractJobs

router = APIRouter()


def _extracts(request: Request) -> ExtractJobs:
    return request.app.state.extracts


@router.post("/v2/extract")
async def start_extract_v2(request: Request) -> JSONResponse:
    return await _started(request, await read_request(request, ExtractRequest))


@router.post("/v1/extract")
async def start_extract_v1(request: Request) -> JSONResponse:
    return await _started(request, await read_request(request, V1ExtractRequest))


async def _started(request: Request, body: ExtractRequest) -> JSONResponse:
    await admit_costly(request)  # the start only: the jobs themselves are bounded by EXTRACT_MAX_JOBS(_PER_KEY)
    job, invalid = body.to_job(request_settings(request))
    return JSONResponse(started_body(await _extracts(request).start(job, owner_of(request.scope)), invalid))


@router.get("/v2/extract/{job_id}")
@router.get("/v1/extract/{job_id}")
async def extract_status(job_id: str, request: Request) -> JSONResponse:
    return JSONResponse(status_body(await _extracts(request).get(job_id, owner_of(request.scope))))
