"""Tavily's POST /research with `stream: true`: the job runs within the request and its progress comes as
server-sent events shaped as Tavily sends them (OpenAI `chat.completion.chunk`s): each step a tool call (Planning,
WebSearch with its queries then its response with the sources it found, Reading, Reflecting, Generating), the
report's text in pieces as the LLM writes it (or whole, when it was not written live) and the key passages under
it, the sources, then
`event: done`. A client that goes away cancels the job."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent.api.streaming import answer_stream
from agent.api.tavily.research import cited, source_entry
from agent.core.research import ResearchJob, ResearchResult, Step
from agent.research.loop import KEY_EVIDENCE, Researcher, run_research

TOOLS = {"plan": "Planning", "search": "WebSearch", "read": "Reading", "reflect": "Reflecting",
         "write": "Generating"}


async def research_events(job: ResearchJob, researcher: Researcher) -> AsyncIterator[bytes]:
    """The job's events, from its start to `done`."""
    chunk = _Chunks(job.model)
    streamed = False
    live = job.schema is None and job.citation_format == "numbered"  # other styles rewrite the text at the end

    def run(report: Callable[[Step | str], None]) -> Any:
        return run_research(job, researcher, on_text=report if live else None, on_step=report)

    async for piece in answer_stream(run):
        if isinstance(piece, Step):
            for delta in _step_deltas(piece):
                yield chunk(delta)
        elif isinstance(piece, str):
            streamed = True
            yield chunk({"role": "assistant", "content": piece})
        else:
            for event in _ending(chunk, piece, job, streamed):
                yield event


def _step_deltas(step: Step) -> list[dict[str, Any]]:
    name = TOOLS.get(step.kind)
    if name is None:
        return []
    call_id = str(uuid.uuid4())
    call: dict[str, Any] = {"name": name, "id": call_id, "arguments": step.detail}
    if step.kind != "search":
        return [_tool("tool_call", [call])]
    sources = [{"title": "", "url": url, "favicon": ""} for url in step.urls]
    return [_tool("tool_call", [call | {"queries": [step.query]}]),
            _tool("tool_response", [{"name": name, "id": call_id, "arguments": step.detail, "sources": sources}])]


def _tool(kind: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": {"type": kind, kind: calls}}


def _ending(chunk: _Chunks, result: ResearchResult, job: ResearchJob, streamed: bool) -> list[bytes]:
    if not result.sources or result.error is not None:
        error = result.error or "the research found nothing to report"
        return [f"event: error\ndata: {json.dumps({'error': error})}\n\n".encode(), _DONE]
    events = []
    if job.schema is not None:
        events.append(chunk({"role": "assistant", "content": result.data}))
    elif not streamed:  # the evidence (no LLM wrote a report), or a style that names the sources in the text
        events.append(chunk({"role": "assistant", "content": cited(result.text, result.sources,
                                                                   job.citation_format, listed=False)}))
    elif (start := result.text.find(f"\n\n{KEY_EVIDENCE}")) >= 0:  # the passages under the report written live
        events.append(chunk({"role": "assistant", "content": result.text[start:]}))
    events.append(chunk({"role": "assistant", "sources": [source_entry(s) for s in result.sources]}))
    return [*events, _DONE]


_DONE = b"event: done\ndata: \n\n"


class _Chunks:
    """Each delta as one `chat.completion.chunk` event of this stream."""

    def __init__(self, model: str) -> None:
        self.model, self.created = model, int(time.time())

    def __call__(self, delta: dict[str, Any]) -> bytes:
        chunk = {"id": str(uuid.uuid4()), "object": "chat.completion.chunk", "model": self.model,
                 "created": self.created, "choices": [{"index": 0, "delta": delta}]}
        return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
