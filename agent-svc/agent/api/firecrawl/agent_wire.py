"""POST /v2/agent as firecrawl-py's `agent()` and `start_agent()` send it, and the status GET /v2/agent/{id}
returns (firecrawl-py's AgentResponse).

Lenient like the other routes (unknown keys such as `integration` or `zeroDataRetention` accepted and ignored),
strict on the types of known keys, with explicit limits: a prompt of 1 to 10,000 characters, EXTRACT_MAX_URLS
URLs, a schema that is a JSON Schema, `maxCredits` above 0, a webhook of http(s) with known events (its address is
checked by the route, against the SSRF guard), a `threadId` of the client's own thread (resolved by the route). A
job cut short answers `failed` with its `partial` result and `stopReason`:
firecrawl-py's status is one of processing, completed and failed, so a cancelled job is failed too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from agent.api.bodies import request_schema
from agent.api.firecrawl.search_wire import SafeInt
from agent.api.settings import RequestSettings
from agent.core.dates import iso_instant
from agent.core.research import CANCELLED, CREDITS, ResearchJob, ResearchResult
from agent.core.webhook import AGENT_EVENTS, Webhook
from agent.errors import InvalidRequest
from agent.index.crawl.options import split_urls
from agent.state.background import COMPLETED, FAILED, PROCESSING, Record

MAX_PROMPT_CHARS = 10_000
MAX_URL_CHARS = 2048
# Firecrawl's models, and Wisp's own name for it: all run Wisp's one research loop
MODELS = ("spark-1-pro", "spark-1-mini", "spark-2", "wisp-research")
DEFAULT_MODEL = "spark-1-pro"


class AgentWebhook(BaseModel):
    """firecrawl-py's AgentWebhookConfig."""

    model_config = ConfigDict(extra="forbid")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    headers: dict[StrictStr, StrictStr] | None = Field(None, max_length=32)
    metadata: dict[StrictStr, Any] | None = Field(None, max_length=64)
    events: list[Literal[AGENT_EVENTS]] | None = Field(None, min_length=1)  # type: ignore[valid-type]

    def to_webhook(self) -> Webhook:
        return Webhook(self.url.strip(), dict(self.headers or {}), dict(self.metadata or {}),
                       tuple(dict.fromkeys(self.events)) if self.events else AGENT_EVENTS)


class AgentRequest(BaseModel):
    """Firecrawl's v2 agent request (firecrawl-py `_prepare_agent_request`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    prompt: StrictStr = Field(max_length=MAX_PROMPT_CHARS)
    urls: list[StrictStr] | None = None
    json_schema: Any = Field(None, alias="schema")
    model: Literal[MODELS] | None = None  # type: ignore[valid-type]
    effort: Literal["low", "medium", "high"] | None = None
    maxCredits: SafeInt | None = Field(None, gt=0)  # noqa: N815 - Firecrawl's wire names
    strictConstrainToURLs: StrictBool | None = None  # noqa: N815
    mode: Literal["extract", "chat"] | None = None
    webhook: Annotated[StrictStr, Field(min_length=1, max_length=MAX_URL_CHARS)] | AgentWebhook | None = None
    threadId: StrictStr | None = None  # noqa: N815

    def to_job(self, settings: RequestSettings) -> ResearchJob:
        """The job; a 400 naming what is wrong or not run here."""
        if not self.prompt.strip():
            raise InvalidRequest.check("prompt must not be empty", ["prompt"])
        if self.threadId is not None and not self.threadId.strip():
            raise InvalidRequest.check("threadId must not be blank", ["threadId"])
        given = [url.strip() for url in self.urls or []]
        if len(given) > settings.extract_max_urls:
            raise InvalidRequest.check(f"{len(given)} urls; at most {settings.extract_max_urls} are accepted per "
                                       "agent job (EXTRACT_MAX_URLS)", ["urls"])
        urls, _ = split_urls(given, skip_invalid=False)
        if self.strictConstrainToURLs and not urls:
            raise InvalidRequest.check("strictConstrainToURLs needs urls to keep the job on", ["urls"])
        return ResearchJob(self.prompt.strip(), tuple(urls), request_schema(self.json_schema), self.effort or "medium",
                           self.maxCredits, bool(self.strictConstrainToURLs), self.mode or "extract",
                           model=self.model or DEFAULT_MODEL, webhook=self._webhook())

    def _webhook(self) -> Webhook | None:
        if isinstance(self.webhook, str):
            return Webhook(self.webhook.strip())
        return self.webhook.to_webhook() if self.webhook is not None else None


# a step's kind → the phase of Firecrawl's progress events
_PHASES = {"plan": "planning", "read": "working", "search": "working", "reflect": "working", "stop": "finalizing",
           "write": "finalizing", "end": "finalizing"}
_OUTCOMES = {CANCELLED: "cancelled", CREDITS: "credit_limit_reached"}
ORCHESTRATOR = {"id": "wisp-research", "role": "orchestrator", "name": "Wisp research loop"}


def trace_body(record: Record[ResearchJob, ResearchResult]) -> dict[str, Any]:
    """firecrawl-py's AgentTraceResponse: the run's start, each step of a finished job as a progress event, and
    how the run finished. A running job's steps are kept by its replica until it ends: its trace is its start."""
    events = [_event(record, 0, record.created, {"type": "run.started"})]
    result = record.result
    if result is not None:
        events += [_event(record, n, record.created + step.at_s, {
            "type": "progress.reported", "phase": _PHASES.get(step.kind, "working"),
            "message": f"{step.kind}: {step.detail}"}) for n, step in enumerate(result.steps, 1)]
        ended = record.created + (result.steps[-1].at_s if result.steps else 0.0)
        outcome = "succeeded" if record.status == COMPLETED else _OUTCOMES.get(result.stop_reason, "failed")
        events.append(_event(record, len(events), ended, {"type": "run.finished", "outcome": outcome, "error": None}))
    return {"success": True, "id": record.id, "events": events,
            "creditsUsed": result.credits_used if result else 0}


def _event(record: Record[ResearchJob, ResearchResult], sequence: int, when: float, body: dict[str, Any]
           ) -> dict[str, Any]:
    return {"schemaVersion": 1, "eventId": f"{record.id}-{sequence}", "runId": record.id,
            "occurredAt": iso_instant(when), "producerSequence": sequence, "agent": ORCHESTRATOR, **body}


def status_body(record: Record[ResearchJob, ResearchResult]) -> dict[str, Any]:
    """firecrawl-py's AgentResponse, with Wisp's `sources`, `claims`, `llmCalls` and `warning`: the answer in
    `data` (the schema's value, else the cited report) or, in chat mode, in `message`; a job cut short is failed, its
    answer in `partial`."""
    job, result = record.job, record.result
    body: dict[str, Any] = {"success": record.status != FAILED, "id": record.id, "status": record.status,
                            "model": job.model, "effort": job.effort, "mode": job.mode,
                            "expiresAt": iso_instant(record.expires), "threadId": job.thread_id or record.id,
                            "threadTurn": job.turn}
    if record.status == PROCESSING or result is None:
        return body
    answer = result.data if job.schema is not None else result.text
    body |= {"creditsUsed": result.credits_used, "llmCalls": result.llm_calls,
             "sources": [{"url": s.url, "title": s.title} for s in result.sources],
             "claims": list(result.claims)}
    if record.status == COMPLETED:
        body |= {"message": result.text} if job.mode == "chat" and job.schema is None else {"data": answer}
    else:
        body |= {"partial": result.text if answer is None else answer, "stopReason": result.stop_reason,
                 "error": result.error or f"the job stopped early ({result.stop_reason}) or found nothing"}
        if job.schema is not None:
            body["partialSchemaValid"] = result.data is not None
    if result.warnings:
        body["warning"] = "; ".join(result.warnings)
    return body


def thread_body(thread_id: str, runs: list[Record[ResearchJob, ResearchResult]], with_data: bool) -> dict[str, Any]:
    """firecrawl-py's AgentThreadResponse: the thread and its runs, oldest turn first (`data` with `with_data`)."""
    ended = [r.created + (r.result.steps[-1].at_s if r.result and r.result.steps else 0.0) for r in runs]
    return {"success": True, "thread": {
        "id": thread_id, "createdAt": iso_instant(runs[0].created), "updatedAt": iso_instant(max(ended)),
        "status": "running" if any(r.status == PROCESSING for r in runs) else "idle",
        "runs": [_run(record, end, with_data) for record, end in zip(runs, ended, strict=True)]}}


def _run(record: Record[ResearchJob, ResearchResult], ended: float, with_data: bool) -> dict[str, Any]:
    job, status = record.job, status_body(record)
    run: dict[str, Any] = {"id": record.id, "turn": job.turn, "mode": job.mode, "prompt": job.prompt,
                           "urls": list(job.urls), "schema": job.schema, "effort": job.effort,
                           "status": record.status, "createdAt": iso_instant(record.created)}
    if record.status == PROCESSING:
        return run
    run |= {"finishedAt": iso_instant(ended), "creditsUsed": status.get("creditsUsed"),
            **{k: status[k] for k in ("message", "partial", "partialSchemaValid", "stopReason") if k in status}}
    return run | ({"data": status["data"]} if with_data and "data" in status else {})
