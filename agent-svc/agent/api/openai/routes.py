"""HTTP routes of the OpenAI-compatible answer models: `GET /v1/models` and `POST /v1/chat/completions`, with or
without `stream`. Errors on these routes take OpenAI's shape, which OpenAI's clients read, not Firecrawl's."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from agent.api.firecrawl.search_wire import read_request
from agent.api.gate.admission import admit_search
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
    error_body,
    error_event,
    models,
    search_fields,
    usage,
)
from agent.api.streaming import answer_stream
from agent.core.query import SearchQuery
from agent.errors import InvalidRequestBody, WispError
from agent.search.chat import run_chat
from agent.search.service import prepared
from agent.services import Services

log = logging.getLogger("agent")
router = APIRouter()


@router.get(MODELS_PATH)
async def list_models() -> JSONResponse:
    return JSONResponse(models())


@router.post(CHAT_PATH)
async def chat_completions(request: Request) -> Response:
    try:
        body = await read_request(request, ChatRequest, InvalidRequestBody)
        services: Services = request.app.state.services
        query = prepared(body.to_query(), services.settings, "the last user message")
        await admit_search(request, query)
        if body.stream:
            return StreamingResponse(_chunks(body, query, services), media_type="text/event-stream")
        outcome = await run_chat(query, body.turns(), services)
    except WispError as e:
        return JSONResponse(error_body(e), status_code=e.status, headers=e.headers())
    return JSONResponse(completion(outcome, body, completion_id()))


async def _chunks(body: ChatRequest, query: SearchQuery, services: Services) -> AsyncIterator[bytes]:
    """OpenAI's chunks: the role, the answer's text as the model writes it, then a last chunk with the finish
    reason, the `url_citation` annotations of the text streamed, Sonar's search fields and the usage, as Sonar
    ends its stream (with a response_format, the JSON comes whole in it), then [DONE]."""
    id_ = completion_id()
    yield chunk(body, id_, {"role": "assistant", "content": ""})
    written: list[str] = []
    try:
        async for piece in answer_stream(lambda on_text: run_chat(query, body.turns(), services, on_text)):
            if isinstance(piece, str):
                written.append(piece)
                if not query.output_schema:
                    yield chunk(body, id_, {"content": piece})
                continue
            rest = "" if written and not query.output_schema else content_of(piece, body)
            content = rest or "".join(written)  # what the client holds once this chunk is read
            delta = {"content": rest} if rest else {}
            yield chunk(body, id_, delta | {"annotations": annotations(content, piece, body)}, "stop",
                        **search_fields(piece, body), usage=usage(body, content))
    except WispError as e:
        yield error_event(e)
    except Exception as e:  # as app.py's handler of the unexpected: logged, and an error object, not a trace
        log.exception("unhandled error in a streamed chat completion")
        failure = WispError(f"Internal server error ({type(e).__name__}); the details are in agent-svc's log")
        yield error_event(failure)
    yield DONE
