"""Firecrawl's team endpoints (credit and token usage, concurrency, queue status), answered for a self-hosted
service: no plan; Wisp's own counts of the calling client, over one period from agent-svc's start
(state/usage/memory.py), or with REDIS_URL from the first count in Redis, the same on every replica
(state/usage/redis.py). The requests in flight that concurrency-check and queue-status report are the answering
replica's.

Where Firecrawl reports a limit Wisp does not have, these report NO_LIMIT, the figure Firecrawl's own
self-hosted server reports for its unlimited teams, since both SDKs require an integer there. v2 answers in
camelCase, v1 in snake_case, as upstream and the SDKs' v1 parsers expect.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.gate.admission import KEY_CLIENT
from agent.api.gate.usage import client_of
from agent.core.dates import iso_instant
from agent.state.usage import Counted, Meter

NO_LIMIT = 99_999_999
_CAPITAL = re.compile(r"(?<!^)([A-Z])")

router = APIRouter()


@router.get("/v2/team/credit-usage")
@router.get("/v1/team/credit-usage")
async def credit_usage(request: Request) -> JSONResponse:
    mine = await _counted(request)
    return _data(request, {"remainingCredits": NO_LIMIT, "planCredits": None,
                           "billingPeriodStart": iso_instant(mine.started), "billingPeriodEnd": None,
                           "creditsUsed": mine.credits})


@router.get("/v2/team/token-usage")
@router.get("/v1/team/token-usage")
async def token_usage(request: Request) -> JSONResponse:
    mine = await _counted(request)
    return _data(request, {"remainingTokens": NO_LIMIT, "planTokens": None,
                           "billingPeriodStart": iso_instant(mine.started), "billingPeriodEnd": None})


@router.get("/v2/team/credit-usage/historical")
@router.get("/v1/team/credit-usage/historical")
async def credit_usage_historical(request: Request) -> JSONResponse:
    mine = await _counted(request)
    by_key = request.query_params.get("byApiKey") == "true"
    client = client_of(request.scope)
    return JSONResponse({"success": True, "periods": [{
        "startDate": iso_instant(mine.started), "endDate": None,
        "apiKey": client if by_key and client.startswith(KEY_CLIENT) else None, "creditsUsed": mine.credits}]})


@router.get("/v2/team/token-usage/historical")
@router.get("/v1/team/token-usage/historical")
async def token_usage_historical(_: Request) -> JSONResponse:
    # Wisp does not meter the LLM's tokens: no period has a count to report
    return JSONResponse({"success": True, "periods": []})


@router.get("/v2/concurrency-check")
@router.get("/v1/concurrency-check")
async def concurrency_check(request: Request) -> JSONResponse:
    return JSONResponse({"success": True, "concurrency": _others(request), "maxConcurrency": _cap(request)})


@router.get("/v2/team/queue-status")
@router.get("/v1/team/queue-status")
async def queue_status(request: Request) -> JSONResponse:
    running = _others(request)
    # a request over the cap is refused (429), never queued: nothing waits
    return JSONResponse({"success": True, "jobsInQueue": running, "activeJobsInQueue": running,
                         "waitingJobsInQueue": 0, "maxConcurrency": _cap(request),
                         "mostRecentSuccess": iso_instant((await _counted(request)).last_success)})


def _data(request: Request, data: dict[str, Any]) -> JSONResponse:
    """`{success, data}`, the data's keys in snake_case on v1's routes."""
    if request.url.path.startswith("/v1/"):
        data = {_CAPITAL.sub(r"_\1", key).lower(): value for key, value in data.items()}
    return JSONResponse({"success": True, "data": data})


async def _counted(request: Request) -> Counted:
    return await _meter(request).counted(client_of(request.scope))


def _others(request: Request) -> int:
    """The client's requests in flight on this replica besides the one asking."""
    return max(0, _meter(request).in_flight(client_of(request.scope)) - 1)


def _meter(request: Request) -> Meter:
    return request.app.state.usage


def _cap(request: Request) -> int:
    costly = request.app.state.limits.costly
    return costly.per_client if costly else NO_LIMIT
