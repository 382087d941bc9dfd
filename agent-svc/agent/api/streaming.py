"""`stream: true`: a search's answer as the model writes it, or a research job's steps and report, for the
streaming surfaces (each shapes the pieces into its own server-sent events). A request that is wrong gets its 4xx
before any event, and a client that goes away cancels the run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

EVENT_STREAM = "text/event-stream"
OnText = Callable[[str], None]  # what a search calls with each piece of the answer's text
Piece = TypeVar("Piece")
Outcome = TypeVar("Outcome")


async def answer_stream(run: Callable[[Callable[[Piece], None]], Awaitable[Outcome]]
                        ) -> AsyncIterator[Piece | Outcome]:
    """What a run reports as it goes (the answer's text as the model writes it, a research job's steps), then its
    outcome (its error raised); `run` starts it with the callback that gets the pieces. A consumer that goes away
    cancels the run."""
    texts: asyncio.Queue[Piece] = asyncio.Queue()
    search = asyncio.ensure_future(run(texts.put_nowait))
    try:
        while not search.done() or not texts.empty():
            text = await _next_text(texts, search)
            if text is not None:
                yield text
        yield search.result()
    finally:
        search.cancel()


async def _next_text(texts: asyncio.Queue[Piece], search: asyncio.Task) -> Piece | None:
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
