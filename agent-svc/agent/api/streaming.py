"""`stream: true`: the search as server-sent events. A rich answer's text comes as `answer.delta` events while
the model writes it; then one `done` event holds the whole v2 response (or `error`, Firecrawl's error envelope
with its `status`, for what failed after the stream began). A request that is wrong gets its 4xx before any
event, and a client that goes away cancels the search."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agent.api.firecrawl.search_wire import error_body, v2_response
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.errors import WispError
from agent.search.service import run_search
from agent.services import Services

log = logging.getLogger("agent")


async def search_events(query: SearchQuery, services: Services) -> AsyncIterator[bytes]:
    try:
        async for piece in answer_stream(lambda on_text: run_search(query, services, on_text)):
            if isinstance(piece, str):
                yield event("answer.delta", {"text": piece})
            else:
                yield event("done", v2_response(piece, query))
    except WispError as e:
        yield event("error", {**error_body(e), "status": e.status})
    except Exception as e:  # as app.py's handler of the unexpected: logged, and an envelope, not a trace
        log.exception("unhandled error in a streamed search")
        failure = WispError(f"Internal server error ({type(e).__name__}); the details are in agent-svc's log")
        yield event("error", {**error_body(failure), "status": 500})


async def answer_stream(run: Callable[[Callable[[str], None]], Awaitable[SearchOutcome]]
                        ) -> AsyncIterator[str | SearchOutcome]:
    """The answer's text as the model writes it, then the search's outcome (its error raised); `run` starts the
    search with the callback that gets the text. A consumer that goes away cancels the search."""
    texts: asyncio.Queue[str] = asyncio.Queue()
    search = asyncio.ensure_future(run(texts.put_nowait))
    try:
        while not search.done() or not texts.empty():
            text = await _next_text(texts, search)
            if text is not None:
                yield text
        yield search.result()
    finally:
        search.cancel()


async def _next_text(texts: asyncio.Queue[str], search: asyncio.Task) -> str | None:
    """The next piece of text, or None once the search is over."""
    getting = asyncio.ensure_future(texts.get())
    try:
        done, _ = await asyncio.wait({getting, search}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not getting.done():
            getting.cancel()
    return getting.result() if getting in done else None


def event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
