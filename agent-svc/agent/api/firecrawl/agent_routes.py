"""HTTP routes of Firecrawl's agent API: parse, start the research job, shape its status, cancel it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.bodies import read_request
from agent.api.firecrawl.agent_wire import AgentRequest, status_body, trace_body
from agent.api.gate.admission import admit_costly
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.errors import AlreadyFinished, InvalidRequest
from agent.pages.ssrf import Blocked
from agent.research.jobs import ResearchJobs
from agent.research.loop import Researcher
from agent.state.background import PROCESSING

router = APIRouter()


def _jobs(request: Request) -> ResearchJobs:
    return request.app.state.research


@router.post("/v2/agent")
async def start_agent(request: Request) -> JSONResponse:
    body = await read_request(request, AgentRequest)
    await admit_costly(request)  # the start only: the jobs themselves are bounded by RESEARCH_MAX_JOBS(_PER_KEY)
    job = body.to_job(request_settings(request))
    if job.webhook is not None:
        await _reachable(request, job.webhook.url)
    return JSONResponse({"success": True, "id": await _jobs(request).start(job, owner_of(request.scope))})


async def _reachable(request: Request, url: str) -> None:
    """A 400 for a webhook the SSRF guard would not deliver to (a private address, a host that does not resolve,
    not http(s)): said now, not found out when the job ends."""
    researcher: Researcher = request.app.state.researcher
    try:
        await researcher.webhooks.check(url)
    except Blocked as e:
        raise InvalidRequest.check(f"webhook: {e}", ["webhook"]) from None


@router.get("/v2/agent/{job_id}")
async def agent_status(job_id: str, request: Request) -> JSONResponse:
    return JSONResponse(status_body(await _jobs(request).get(job_id, owner_of(request.scope))))


@router.get("/v2/agent/{job_id}/trace")
async def agent_trace(job_id: str, request: Request) -> JSONResponse:
    return JSONResponse(trace_body(await _jobs(request).get(job_id, owner_of(request.scope))))


@router.delete("/v2/agent/{job_id}")
async def cancel_agent(job_id: str, request: Request) -> JSONResponse:
    """Tell the job to stop: it ends with what it has (failed, stopReason "cancelled"). A 409 once it ended."""
    record = await _jobs(request).cancel(job_id, owner_of(request.scope))
    if record.status != PROCESSING:
        raise AlreadyFinished(record.status, "Agent job")
    return JSONResponse({"success": True})
