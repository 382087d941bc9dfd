"""OpenAI's chat completions, as Perplexity's Sonar speaks them: the request body → a rich SearchQuery and the
conversation; the outcome → a `chat.completion` (or its `chat.completion.chunk`s) with Sonar's `citations` and
`search_results` and Wisp's checked `claims`; Wisp's errors → OpenAI's error object.

`citations[n-1]` is the source an answer's `[n]` points at, as in Sonar. Token counts in `usage` are estimates
(about four characters a token): the LLM server's own counts are not kept."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from agent.answers.schemas import checked_schema
from agent.answers.synthesis import Source, marker_spans, sources_of
from agent.api.firecrawl.search_wire import MAX_SYSTEM_PROMPT_CHARS
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.errors import BadRequest, NotFound, WispError
from agent.retrieval.translation import normalize_domains

MODELS_PATH, CHAT_PATH = "/v1/models", "/v1/chat/completions"
PATHS = frozenset({MODELS_PATH, CHAT_PATH})


@dataclass(frozen=True)
class AnswerModel:
    """A name for a retrieval setup, not an LLM: every model answers with the configured LLM."""

    id: str
    retrieval_mode: str
    description: str
    research: bool = False  # a research job (several searches, a report) rather than one search


ANSWER_MODELS = {m.id: m for m in (
    AnswerModel("wisp", "hybrid", "hybrid retrieval (keywords and passages reranked) and a checked, cited answer"),
    AnswerModel("wisp-fast", "keyword", "SearXNG's ranking alone and a checked, cited answer"),
    AnswerModel("wisp-vector", "vector", "Wisp's vector index and a checked, cited answer"),
    AnswerModel("wisp-research", "hybrid", "a research job: several searches, what is missing searched again, and a "
                "checked, cited report (as sonar-deep-research)", research=True),
)}
CONTEXT_SIZES = {"low": 3, "medium": 5, "high": 10}  # web_search_options.search_context_size → results
RECENCY = {"hour": "qdr:h", "day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
SEARCH_MODES = {"web": [], "academic": ["research"], "sec": []}  # sec filings: no such SearXNG category here
NO_ANSWER = "The sources found do not answer this question."


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls...: accepted, unused

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text; of a list of parts, its text parts."""
        if isinstance(self.content, list):
            return "\n".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ResponseFormat(BaseModel):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: dict[str, Any] | None = None


class WebSearchOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    search_context_size: Literal["low", "medium", "high"] | None = None


class ChatRequest(BaseModel):
    """OpenAI's body; fields Wisp does not use (temperature, top_p, n, stop, user, max_tokens...) are accepted:
    the configured LLM's settings hold."""

    model_config = ConfigDict(extra="allow")

    model: StrictStr = "wisp"
    messages: list[Message] = Field(min_length=1)
    stream: StrictBool = False
    response_format: ResponseFormat | None = None
    search_domain_filter: list[StrictStr] | None = Field(None, max_length=20)
    search_recency_filter: Literal["hour", "day", "week", "month", "year"] | None = None
    search_mode: Literal["web", "academic", "sec"] | None = None
    return_related_questions: StrictBool = False
    web_search_options: WebSearchOptions | None = None

    def answer_model(self) -> AnswerModel:
        if self.model not in ANSWER_MODELS:
            raise NotFound(f"The model `{self.model}` does not exist; Wisp's models are {', '.join(ANSWER_MODELS)}")
        return ANSWER_MODELS[self.model]

    def turns(self) -> list[tuple[str, str]]:
        """The conversation without its system messages, as (role, text)."""
        return [(m.role, m.text()) for m in self.messages if m.role in ("user", "assistant")]

    def to_query(self) -> SearchQuery:
        """The rich search of the last user message, with Sonar's search fields."""
        users = [text for role, text in self.turns() if role == "user" and text.strip()]
        if not users or self.messages[-1].role != "user":
            raise BadRequest("messages must end with a user message that has text")
        system = "\n\n".join(m.text() for m in self.messages if m.role in ("system", "developer")) or None
        if system and len(system) > MAX_SYSTEM_PROMPT_CHARS:
            raise BadRequest(f"the system messages hold {len(system)} characters; at most "
                             f"{MAX_SYSTEM_PROMPT_CHARS} are accepted")
        domains = self.search_domain_filter or []
        include = [d for d in domains if not d.startswith("-")]
        exclude = [d[1:] for d in domains if d.startswith("-")]
        if include and exclude:
            raise BadRequest("search_domain_filter cannot both include and exclude (`-`) domains")
        size = self.web_search_options.search_context_size if self.web_search_options else None
        return SearchQuery(
            query=users[-1], limit=CONTEXT_SIZES[size or "medium"], search_type="rich",
            retrieval_mode=self.answer_model().retrieval_mode,
            categories=SEARCH_MODES[self.search_mode or "web"],
            tbs=RECENCY.get(self.search_recency_filter or ""),
            include_domains=normalize_domains(include, "search_domain_filter"),
            exclude_domains=normalize_domains(exclude, "search_domain_filter"),
            output_schema=self._schema(), system_prompt=system, stream=self.stream)

    def _schema(self) -> dict[str, Any] | None:
        if not self.response_format or self.response_format.type == "text":
            return None
        if self.response_format.type == "json_object":
            return {"type": "object"}
        spec = self.response_format.json_schema or {}
        return checked_schema(spec.get("schema", {"type": "object"}), "response_format.json_schema.schema")


def models() -> dict[str, Any]:
    return {"object": "list", "data": [{"id": m.id, "object": "model", "created": 0, "owned_by": "wisp",
                                        "description": m.description} for m in ANSWER_MODELS.values()]}


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def completion(outcome: SearchOutcome, request: ChatRequest, id_: str) -> dict[str, Any]:
    """The whole answer as a `chat.completion`."""
    content = content_of(outcome, request)
    message = {"role": "assistant", "content": content, "annotations": annotations(content, outcome, request)}
    return {"id": id_, "object": "chat.completion", "created": int(time.time()), "model": request.model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            **search_fields(outcome, request), "usage": usage(request, content)}


def chunk(request: ChatRequest, id_: str, delta: dict[str, Any], finish: str | None = None,
          **extra: Any) -> bytes:
    """One `chat.completion.chunk` as a server-sent event."""
    body = {"id": id_, "object": "chat.completion.chunk", "created": int(time.time()), "model": request.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


DONE = b"data: [DONE]\n\n"


def content_of(outcome: SearchOutcome, request: ChatRequest) -> str:
    """The answer's text with its [n] markers; with a response_format, its JSON."""
    answer = outcome.answer
    if _answers_json(outcome, request) and answer:
        return json.dumps(answer.json, ensure_ascii=False)
    return answer.text if answer else NO_ANSWER


def annotations(content: str, outcome: SearchOutcome, request: ChatRequest) -> list[dict[str, Any]]:
    """OpenAI's `url_citation` annotations: one per source the answer read, in the order of its number, so that a
    client numbering sources as they come (Open WebUI) finds source n at `[n]`; each spans the first marker of the
    content that cites it (`content[start_index:end_index]`; streamed, the model's own words), or is the empty
    span at the content's end when no marker does. OpenAI-standard clients read a reply's sources only here."""
    if _answers_json(outcome, request):
        return []
    first_marker: dict[int, tuple[int, int]] = {}
    for number, start, end in marker_spans(content):
        first_marker.setdefault(number, (start, end))

    def citation(source: Source) -> dict[str, Any]:
        start, end = first_marker.get(source.number, (len(content), len(content)))
        return {"type": "url_citation", "url_citation": {"url": source.url, "title": source.title,
                                                         "start_index": start, "end_index": end}}
    return [citation(s) for s in sources_of(outcome.packed)]


def _answers_json(outcome: SearchOutcome, request: ChatRequest) -> bool:
    return bool(request.response_format and request.response_format.type != "text" and outcome.answer
                and outcome.answer.json is not None)


def search_fields(outcome: SearchOutcome, request: ChatRequest) -> dict[str, Any]:
    """Sonar's `citations` and `search_results`, Wisp's `claims` and warnings (and Sonar's
    `related_questions`, which Wisp does not write: empty)."""
    dates = {h.url: h.published for bucket in outcome.buckets.values() for h in bucket}
    sources = sources_of(outcome.packed)
    fields: dict[str, Any] = {
        "citations": [s.url for s in sources],
        "search_results": [{"title": s.title, "url": s.url, "snippet": s.texts[0][:400],
                            "date": d.date().isoformat() if (d := dates.get(s.url)) else None} for s in sources],
        "claims": [{"text": c.text, "citations": list(c.citations), "supported": c.supported, "score": c.score}
                   for c in (outcome.answer.claims if outcome.answer else ())],
    }
    if request.return_related_questions:
        fields["related_questions"] = []
    if outcome.warnings:
        fields["warnings"] = list(outcome.warnings)
    return fields


def usage(request: ChatRequest, content: str) -> dict[str, int]:
    prompt = sum(len(m.text()) for m in request.messages) // 4
    written = len(content) // 4
    return {"prompt_tokens": prompt, "completion_tokens": written, "total_tokens": prompt + written}


def error_body(error: WispError) -> dict[str, Any]:
    """OpenAI's error object for one of Wisp's errors."""
    kind = ("invalid_request_error" if error.status < 500 and error.status not in (401, 429)
            else {401: "authentication_error", 429: "rate_limit_error"}.get(error.status, "api_error"))
    code = "model_not_found" if isinstance(error, NotFound) else None
    return {"error": {"message": error.message, "type": kind, "param": None, "code": code}}


def error_event(envelope: dict[str, Any], status: int) -> bytes:
    """An error after the stream began (its envelope, `error_body`'s), as the event OpenAI's SDK raises from
    (`data` with an `error`)."""
    return f"data: {json.dumps(envelope)}\n\n".encode()
