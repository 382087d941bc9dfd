"""HTTP routes of Wisp's own index API: /v2/similar, /v2/index/stats, /v2/index/delete."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

from agent.api.bodies import read_request
from agent.api.firecrawl.search_wire import v2_response
from agent.api.gate.admission import admit_costly
from agent.errors import Degraded, UpstreamError
from agent.index.crawl.options import MAX_URL_CHARS
from agent.upstream.semantic import IndexEmpty

T = TypeVar("T")

router = APIRouter()


class SimilarRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    limit: StrictInt = Field(10, ge=1, le=50)
    timeout: StrictInt = Field(60_000, gt=0, le=600_000)


class IndexDeleteRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    url: StrictStr | None = Field(None, min_length=1, max_length=MAX_URL_CHARS)
    host: StrictStr | None = Field(None, min_length=1, max_length=253)

    @model_validator(mode="after")
    def _one_target(self) -> IndexDeleteRequest:
        if (self.url is None) == (self.host is None):
            raise ValueError("give exactly one of url or host")
        return self


@router.post("/v2/similar")
async def similar_pages(request: Request) -> JSONResponse:
    body = await read_request(request, SimilarRequest)
    await admit_costly(request)
    outcome, query = await request.app.state.search.similar(body.url, body.limit, body.timeout)
    return JSONResponse(v2_response(outcome, query))


@router.get("/v2/index/stats")
async def index_stats(request: Request) -> JSONResponse:
    services = request.app.state.services
    stats = await _of_index(services.upstreams.semantic.index_stats(), {"documents": 0, "chunks": 0})
    return JSONResponse({"success": True, **stats, "ingesting": services.ingest.backlog})


@router.post("/v2/index/delete")
async def index_delete(request: Request) -> JSONResponse:
    body = await read_request(request, IndexDeleteRequest)
    deleted = await _of_index(request.app.state.services.upstreams.semantic.index_delete(body.url, body.host), 0)
    return JSONResponse({"success": True, "deletedChunks": deleted})


async def _of_index(answer: Awaitable[T], when_empty: T) -> T:
    """semantic-svc's answer; `when_empty` when nothing was ever indexed; a 502 naming the cause when it fails."""
    try:
        return await answer
    except IndexEmpty:
        return when_empty
    except Degraded as e:
        raise UpstreamError(str(e)) from None
