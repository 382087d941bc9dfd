"""Firecrawl's POST /v2/search (streamed with `stream: true`) and POST /v1/search on the front door. Streamed, a
rich answer's text comes as `answer.delta` events while the model writes it; then one `done` event holds the
whole v2 response (or `error`, Firecrawl's error envelope with its `status`, for what failed after the stream
began)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from agent.api.firecrawl.search_wire import V1SearchRequest, V2SearchRequest, v1_response, v2_response
from agent.api.front_door import Pieces, Streaming, Surface, answer
from agent.api.streaming import event
from agent.core.query import SearchQuery
from agent.errors import InvalidRequestBody


async def v2_events(pieces: Pieces, body: V2SearchRequest, query: SearchQuery) -> AsyncIterator[bytes]:
    async for piece in pieces:
        if isinstance(piece, str):
            yield event("answer.delta", {"text": piece})
        else:
            yield event("done", v2_response(piece, query))


def _error_event(envelope: dict[str, Any], status: int) -> bytes:
    return event("error", {**envelope, "status": status})


# search's controllers word the refusals of a body themselves (InvalidRequestBody), not the global zod handler
V2 = Surface(V2SearchRequest, V2SearchRequest.to_query, lambda outcome, body, query, _: v2_response(outcome, query),
             InvalidRequestBody, streaming=Streaming(v2_events, _error_event))
V1 = Surface(V1SearchRequest, V1SearchRequest.to_query, lambda outcome, body, query, _: v1_response(outcome),
             InvalidRequestBody)
router = APIRouter()


@router.post("/v2/search")
async def search_v2(request: Request) -> Response:
    return await answer(request, V2)


@router.post("/v1/search")
async def search_v1(request: Request) -> Response:
    return await answer(request, V1)
