"""HTTP routes of the OpenAI-compatible answer models: `GET /v1/models` and `POST /v1/chat/completions` on the front
door, with or without `stream`. Errors on these routes take OpenAI's shape, which OpenAI's clients read, not
Firecrawl's (envelopes.py picks it by path)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from agent.api.front_door import Pieces, Streaming, Surface, answer
from agent.api.openai.wire import (
    CHAT_PATH,
    DONE,
    MODELS_PATH,
    ChatRequest,
    annotations,
    chunk,
    completion,
    completion_id,
    content_of,
    error_event,
    models,
    search_fields,
    usage,
)
from agent.api.streaming import OnText
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.errors import InvalidRequestBody
from agent.research.chat import run_research_chat
from agent.research.loop import Researcher
from agent.search.chat import run_chat
from agent.search.service import Search


async def _chat(query: SearchQuery, body: ChatRequest, search: Search, on_text: OnText | None,
                researcher: Researcher) -> SearchOutcome:
    if body.answer_model().research:
        return await run_research_chat(query, body.turns(), body.model, researcher, on_text)
    return await run_chat(query, body.turns(), search, on_text)


async def _chunks(pieces: Pieces, body: ChatRequest, query: SearchQuery) -> AsyncIterator[bytes]:
    """OpenAI's chunks: the role, the answer's text as the model writes it, then a last chunk with the finish
    reason, the `url_citation` annotations of the text streamed, Sonar's search fields and the usage, as Sonar
    ends its stream (with a response_format, the JSON comes whole in it); the front door ends it with [DONE]."""
    id_ = completion_id()
    yield chunk(body, id_, {"role": "assistant", "content": ""})
    written: list[str] = []
    async for piece in pieces:
        if isinstance(piece, str):
            written.append(piece)
            if not query.output_schema:
                yield chunk(body, id_, {"content": piece})
            continue
        held = "" if query.output_schema else "".join(written)  # what the client holds of the text so far
        rest = _after(held, piece, body)
        content = held + rest  # what it holds once this chunk is read
        delta = {"content": rest} if rest else {}
        yield chunk(body, id_, delta | {"annotations": annotations(content, piece, body)}, "stop",
                    **search_fields(piece, body), usage=usage(body, content))


def _after(held: str, outcome: SearchOutcome, body: ChatRequest) -> str:
    """What the last chunk adds to the text the client holds: the whole content when it holds none; after an
    LLM's draft that the sources' own sentences replaced (RICH_EXTRACTIVE_FALLBACK), those sentences, since what
    was streamed cannot be taken back; else nothing."""
    if not held:
        return content_of(outcome, body)
    answer = outcome.answer
    return f"\n\n{answer.text}" if answer and answer.extractive else ""


CHAT = Surface(ChatRequest, ChatRequest.to_query,
               lambda outcome, body, query, _: completion(outcome, body, completion_id()),
               InvalidRequestBody, "the last user message", _chat, Streaming(_chunks, error_event, DONE))
router = APIRouter()


@router.get(MODELS_PATH)
async def list_models() -> JSONResponse:
    return JSONResponse(models())


@router.post(CHAT_PATH)
async def chat_completions(request: Request) -> Response:
    return await answer(request, replace(CHAT, run=partial(_chat, researcher=request.app.state.researcher)))
