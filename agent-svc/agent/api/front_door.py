"""The one front door of every search-like request, whichever API it speaks: read the body within the request
limits, prepare the query (the service's defaults, its bounds), admit it (a costly one takes one of the client's
slots), run it, and shape the reply. Firecrawl's /v2 and /v1 search, Tavily's /search and OpenAI's chat
completions are each a `Surface`: their wire format plugged in here, nothing else.

A route does not catch errors: what it raises is answered by the app's handlers in its path's envelope
(envelopes.py). An error met after a stream began, when the status line is already sent, is the stream's last
event, in the same envelope."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel

from agent.api.bodies import Refusal, read_request
from agent.api.envelopes import streamed_failure
from agent.api.gate.admission import admit_search
from agent.api.streaming import EVENT_STREAM, OnText, answer_stream
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.errors import InvalidRequest
from agent.search.service import Search

B = TypeVar("B", bound=BaseModel)
Pieces = AsyncIterator[str | SearchOutcome]  # the answer's text as the model writes it, then the outcome


async def searched(query: SearchQuery, body: Any, search: Search, on_text: OnText | None) -> SearchOutcome:
    """What most surfaces run: Wisp's search."""
    return await search.run(query, on_text)


@dataclass(frozen=True)
class Streaming(Generic[B]):
    """How a surface streams: its events from the answer's pieces, the event that carries an error's envelope
    (and status), and what ends every stream (b"": nothing)."""

    events: Callable[[Pieces, B, SearchQuery], AsyncIterator[bytes]]
    error: Callable[[dict[str, Any], int], bytes]
    end: bytes = b""


@dataclass(frozen=True)
class Surface(Generic[B]):
    """One API's wire format on the front door: its request model (and how a body it refuses is answered), how a
    body becomes Wisp's query (and which field of it holds the query, for the bounds' refusals), the reply's
    shape (from the outcome, the body, the query and the seconds since the request came), and its streaming,
    when `stream: true` is one of its options."""

    model: type[B]
    query: Callable[[B], SearchQuery]
    shape: Callable[[SearchOutcome, B, SearchQuery, float], dict[str, Any]]
    refusal: Refusal = InvalidRequest
    field: str = "query"
    run: Callable[[SearchQuery, B, Search, OnText | None], Awaitable[SearchOutcome]] = searched
    streaming: Streaming[B] | None = None


async def answer(request: Request, surface: Surface[B]) -> Response:
    """Read, prepare, admit, run and shape one request on `surface`."""
    started = time.monotonic()
    search: Search = request.app.state.search
    body = await read_request(request, surface.model, surface.refusal)
    query = search.prepared(surface.query(body), surface.field)
    await admit_search(request, query)
    if query.stream and surface.streaming is not None:
        return StreamingResponse(events(surface, query, body, search, request.url.path),
                                 media_type=EVENT_STREAM)
    outcome = await surface.run(query, body, search, None)
    return JSONResponse(surface.shape(outcome, body, query, time.monotonic() - started))


async def events(surface: Surface[B], query: SearchQuery, body: B, search: Search, path: str
                 ) -> AsyncIterator[bytes]:
    """The surface's events of the run of a prepared and admitted query; an error after the first is the stream's
    last event, in the path's envelope."""
    streaming = surface.streaming
    if streaming is None:
        raise ValueError(f"{surface.model.__name__} has no streaming")
    pieces = answer_stream(lambda on_text: surface.run(query, body, search, on_text))
    try:
        async for event in streaming.events(pieces, body, query):
            yield event
    except Exception as error:  # the status line is sent: the error can only be an event
        yield streaming.error(*streamed_failure(path, error))
    if streaming.end:
        yield streaming.end
