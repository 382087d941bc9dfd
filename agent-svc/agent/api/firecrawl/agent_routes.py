"""HTTP routes of Firecrawl's agent API: parse, start the research job, shape its status, cancel it."""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.bodies import read_request
from agent.api.firecrawl.agent_wire import AgentRequest, status_body, thread_body, trace_body
from agent.api.gate.admission import admit_costly
from agent.api.gate.usage import owner_of
from agent.api.settings import request_settings
from agent.core.research import ResearchJob, ResearchResult
from agent.errors import AlreadyFinished, InvalidRequest, JobNotFound, ThreadBusy
from agent.pages.ssrf import Blocked
from agent.research.jobs import ResearchJobs
from agent.research.loop import Researcher
from agent.research.threads import history_of, turn_of
from agent.state.background import PROCESSING, Record

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
    if body.threadId is not None:
        job = await _continuing(request, job, body.threadId.strip())
    return JSONResponse({"success": True, "id": await _jobs(request).start(job, owner_of(request.scope))})


async def _reachable(request: Request, url: str) -> None:
    """A 400 for a webhook the SSRF guard would not deliver to (a private address, a host that does not resolve,
    not http(s)): said now, not found out when the job ends."""
    researcher: Researcher = request.app.state.researcher
    try:
        await researcher.webhooks.check(url)
    except Blocked as e:
        raise InvalidRequest.check(f"webhook: {e}", ["webhook"]) from None


async def _thread(request: Request, thread_id: str) -> list[Record[ResearchJob, ResearchResult]]:
    """The thread's runs, oldest first: its first job, then those that continued it. 404 when it is not the
    client's."""
    jobs, owner = _jobs(request), owner_of(request.scope)
    try:
        first = await jobs.get(thread_id, owner)
    except JobNotFound:
        raise JobNotFound("Agent thread not found") from None
    if first.job.thread_id:  # a later run's id: its thread is its first run's
        raise JobNotFound("Agent thread not found")
    return [first, *await jobs.related(thread_id, owner)]


async def _continuing(request: Request, job: ResearchJob, thread_id: str) -> ResearchJob:
    """`job` as the next turn of the thread, with its earlier turns; 409 while the thread's last job runs."""
    runs = await _thread(request, thread_id)
    if runs[-1].status == PROCESSING:
        raise ThreadBusy(f"the thread's last job {runs[-1].id} is still running: continue it once it has ended")
    turns = [turn_of(r.job, r.result) for r in runs]
    return replace(job, thread_id=thread_id, turn=len(runs) + 1, history=history_of(turns))


@router.get("/v2/agent/threads/{thread_id}")
async def agent_thread(thread_id: str, request: Request) -> JSONResponse:
    with_data = request.query_params.get("includeData", "").lower() == "true"
    return JSONResponse(thread_body(thread_id, await _thread(request, thread_id), with_data))


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
