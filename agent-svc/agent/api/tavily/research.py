"""Tavily's POST /research and GET /research/{request_id} as tavily-python's `research()` and `get_research()`
send and read them, on Wisp's research jobs (research/): `model` mini, pro and auto are the efforts low, medium and
medium; `output_schema` makes `content` an object; `citation_format` numbered keeps the report's [n], the others
name each source in the text and list them in that style at the end. `stream: true` is research_stream.py's."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from agent.api.bodies import request_schema
from agent.core.research import ResearchJob, ResearchResult, ResearchSource
from agent.errors import InvalidRequest
from agent.research.budget import TAVILY_MODELS
from agent.state.background import COMPLETED, PROCESSING, Record

MAX_INPUT_CHARS = 10_000
CitationFormat = Literal["numbered", "mla", "apa", "chicago"]
_CITED = re.compile(r"\[(\d+(?:\s*[,-]\s*\d+)*)\]")


class TavilyResearchRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    input: StrictStr = Field(min_length=1, max_length=MAX_INPUT_CHARS)
    model: Literal["mini", "pro", "auto"] | None = None
    output_schema: Any = None
    stream: StrictBool | None = None
    citation_format: CitationFormat | None = None

    def to_job(self) -> ResearchJob:
        if not self.input.strip():
            raise InvalidRequest.check("input must not be blank", ["input"])
        model = self.model or "auto"
        return ResearchJob(self.input.strip(), schema=request_schema(self.output_schema, "output_schema"),
                           effort=TAVILY_MODELS[model], model=model,
                           citation_format=self.citation_format or "numbered")


def started_body(record: Record[ResearchJob, ResearchResult], body: TavilyResearchRequest) -> dict[str, Any]:
    return {"request_id": record.id, "created_at": _iso(record.created), "status": "pending", "input": body.input,
            "model": record.job.model}


def status_body(record: Record[ResearchJob, ResearchResult]) -> dict[str, Any]:
    """Tavily's research status: in_progress, then completed with `content` and `sources`, or failed with
    `error`. A job cut short that noted something completes with what it has, and says so in `warning`."""
    body: dict[str, Any] = {"request_id": record.id, "created_at": _iso(record.created)}
    result = record.result
    if record.status == PROCESSING or result is None:
        return body | {"status": "in_progress"}
    if not result.sources or result.error is not None:
        return body | {"status": "failed", "error": result.error or "the research found nothing to report"}
    content: Any = result.data if record.job.schema is not None else cited(result.text, result.sources,
                                                                              record.job.citation_format)
    body |= {"status": "completed", "content": content, "sources": [source_entry(s) for s in result.sources],
             "response_time": result.steps[-1].at_s if result.steps else 0.0}
    warnings = [*result.warnings, *([] if record.status == COMPLETED else
                                    [f"the research stopped early ({result.stop_reason}): this is what it found"])]
    return body | ({"warning": "; ".join(warnings)} if warnings else {})


def cited(text: str, sources: tuple[ResearchSource, ...], style: str, listed: bool = True) -> str:
    """The report with its citations in `style`: [n] as they are, or the source's title in the text, and (when
    `listed`) a list of the sources at the end."""
    if style == "numbered":
        entries = [f"[{n}] {s.title or s.url}: {s.url}" for n, s in enumerate(sources, 1)]
        return f"{text}\n\nSources:\n" + "\n".join(entries) if listed else text

    def named(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
        titles = [sources[n - 1].title or sources[n - 1].url for n in numbers if 0 < n <= len(sources)]
        return f"({'; '.join(titles)})" if titles else match.group(0)

    works = "\n\nWorks cited:\n" + "\n".join(_reference(s, style) for s in sources) if listed else ""
    return _CITED.sub(named, text) + works


def _reference(source: ResearchSource, style: str) -> str:
    """A source in `style`, from what Wisp knows of it (a title and a URL: no author or date)."""
    title, accessed = source.title or source.url, datetime.now(UTC)
    match style:
        case "mla":
            return f'"{title}." {source.url}. Accessed {accessed:%d %b. %Y}.'
        case "apa":
            return f"{title}. (n.d.). Retrieved {accessed:%B %d, %Y}, from {source.url}"
    return f'"{title}." Accessed {accessed:%B %d, %Y}. {source.url}.'


def source_entry(source: ResearchSource) -> dict[str, str]:
    host = source.url.split("/")[2] if "//" in source.url else ""
    return {"title": source.title, "url": source.url, "favicon": f"https://{host}/favicon.ico" if host else ""}


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat()
