"""The MCP tools: their arguments (named as Firecrawl's own MCP server names them, firecrawl_search and
firecrawl_scrape), the agent-svc request each becomes, and agent-svc's answer cut to what an agent reads.

Each tool posts to agent-svc's HTTP API through the `Wisp` client its server's lifespan opened, so the
tools are the same whether agent-svc serves them at /mcp or `python -m agent.mcp` does over stdio.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated, Any, Literal, Protocol

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from agent.core.formats import DOCUMENT_KEYS
from agent.core.sources import SOURCES
from agent.ranking.modes import MODES
from agent.research.budget import EFFORT_BUDGETS

ORIGIN = "wisp-mcp"
Format = Literal["markdown", "html", "rawHtml", "links", "summary", "json", "query"]
SourceName = Literal[tuple(SOURCES)]  # type: ignore[valid-type]
ModeName = Literal[tuple(MODES)]  # type: ignore[valid-type]


class Wisp(Protocol):
    async def post(self, path: str, body: dict[str, Any], ctx: Context) -> dict[str, Any]: ...

    async def status(self, path: str, ctx: Context) -> dict[str, Any]: ...


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class JsonOptions(_Options):
    prompt: str | None = Field(None, description="What to extract")
    json_schema: dict[str, Any] | None = Field(None, alias="schema", description="JSON Schema of the result")


class QueryOptions(_Options):
    prompt: str = Field(min_length=1, max_length=2000, description="The question to answer from the page")


class SourceItem(_Options):
    type: SourceName


class ScrapeOptions(_Options):
    formats: list[Format] | None = Field(None, description="Formats of each result's page (default: none)")
    jsonOptions: JsonOptions | None = None  # noqa: N815 - Firecrawl's names
    queryOptions: QueryOptions | None = None  # noqa: N815
    onlyMainContent: bool | None = None  # noqa: N815

    def body(self) -> dict[str, Any]:
        return _present({"formats": formats_body(self.formats, self.jsonOptions, self.queryOptions),
                         "onlyMainContent": self.onlyMainContent})


Query = Annotated[str, Field(min_length=1, description="The search query; site:, \"exact phrase\" and -word work")]
Limit = Annotated[int | None, Field(ge=1, le=100, description="Results per source (default 5)")]
Sources = Annotated[list[SourceName | SourceItem] | None, Field(
    description="Sources to search: web, news, images (names or {type} objects; default web)")]
Mode = Annotated[ModeName | None, Field(description=(
    "How results are ranked: keyword keeps the metasearch order (fastest); semantic and hybrid fetch the pages and "
    "rank their passages; vector and hybrid_vector search the crawled index. Default: the server's"))]
Tbs = Annotated[str | None, Field(description="Time filter: qdr:h, qdr:d, qdr:w, qdr:m, qdr:y")]
Domains = Annotated[list[str] | None, Field(description="Only results from these domains")]
ExcludedDomains = Annotated[list[str] | None, Field(description="No results from these domains")]
Timeout = Annotated[int | None, Field(gt=0, description="Milliseconds the request may take")]

SEARCH = """Search the web (a self-hosted SearXNG) and optionally rank the pages or scrape each result.

Best for: finding pages when you do not know which site has the information. Sources: web (default), news,
images. Prefer no scrapeOptions: search first, then scrape the pages you need; with scrapeOptions keep
limit at 5 or lower. Returns JSON: one array of results per source ({position, title, url, description,
score when ranked, and the scraped formats}), and a warning when something degraded."""

SCRAPE = """Scrape one URL: fetch the page (an SSRF guard refuses private addresses) and extract it.

Best for: the content of a page you know. Formats: markdown (default), html, rawHtml, links; summary, json
(jsonOptions: a prompt and/or a schema) and query (queryOptions.prompt: a question answered from the page)
go through the server's LLM. Returns JSON: the requested formats, the page's url, title and statusCode,
and a warning when something degraded."""

ANSWER = """Answer a question from web sources, with inline [n] citations.

Searches, ranks the pages' passages, and has the server's LLM write an answer citing them; every sentence is
checked against the passages it cites. Best for: a direct answer with its sources. Returns the answer text
with [n] markers and the numbered sources; when the sources do not answer, it says so instead of guessing."""

RESEARCH = """Research a question that one search cannot answer: a job that plans, searches several times, notes
what it reads, searches again for what is still missing, and writes a report with inline [n] citations whose
every sentence is checked. Slower than answer (up to 1, 2 or 5 minutes at effort low, medium, high).

Best for: questions that need several pages (comparisons, one fact that leads to another). With a schema, the
result is JSON that validates against it. Returns the report and its numbered sources; a job stopped early
returns what it found and why it stopped."""
POLL_S = 1.0  # between two reads of a research job's status
WAIT_MARGIN_S = 30.0  # past the effort's wall clock, the tool stops waiting and says how to read the job


async def search(
    ctx: Context, query: Query, limit: Limit = 5, sources: Sources = None, retrieval_mode: Mode = None,
    tbs: Tbs = None, lang: Annotated[str | None, Field(description="Language code, e.g. en")] = None,
    country: Annotated[str | None, Field(description="Country code, e.g. us")] = None,
    location: Annotated[str | None, Field(description="Location to search from, e.g. Germany")] = None,
    includeDomains: Domains = None, excludeDomains: ExcludedDomains = None,  # noqa: N803 - Firecrawl's names
    scrapeOptions: ScrapeOptions | None = None, timeout: Timeout = None,  # noqa: N803
) -> CallToolResult:
    body = _present({
        "query": query, "limit": limit, "sources": _sources(sources), "retrieval_mode": retrieval_mode, "tbs": tbs,
        "lang": lang, "country": country, "location": location, "includeDomains": includeDomains,
        "excludeDomains": excludeDomains, "scrapeOptions": scrapeOptions.body() if scrapeOptions else None,
        "timeout": timeout, "origin": ORIGIN})
    payload = await _wisp(ctx).post("/v2/search", body, ctx)
    results = {name: [_result(item) for item in items] for name, items in payload.get("data", {}).items()}
    return _json_result(_present({**results, "warning": payload.get("warning")}))


async def scrape(
    ctx: Context, url: Annotated[str, Field(min_length=1, description="The page's http(s) URL")],
    formats: Annotated[list[Format] | None, Field(description="Formats to return (default markdown)")] = None,
    jsonOptions: JsonOptions | None = None, queryOptions: QueryOptions | None = None,  # noqa: N803
    onlyMainContent: Annotated[bool | None, Field(  # noqa: N803
        description="Only the main content, without navigation, header and footer (default true)")] = None,
    timeout: Timeout = None,
) -> CallToolResult:
    body = _present({"url": url, "formats": formats_body(formats, jsonOptions, queryOptions),
                     "onlyMainContent": onlyMainContent, "timeout": timeout, "origin": ORIGIN})
    payload = await _wisp(ctx).post("/v2/scrape", body, ctx)
    return _json_result(_present({**_result(payload.get("data") or {}), "warning": payload.get("warning")}))


async def answer(
    ctx: Context, query: Annotated[str, Field(min_length=1, description="The question")],
    limit: Annotated[int | None, Field(ge=1, le=100, description="Search results to draw on (default 5)")] = 5,
    retrieval_mode: Mode = None, tbs: Tbs = None,
    includeDomains: Domains = None, excludeDomains: ExcludedDomains = None,  # noqa: N803
    output_schema: Annotated[dict[str, Any] | None, Field(
        description="A JSON Schema: the answer also comes as JSON that validates against it")] = None,
    timeout: Timeout = None,
) -> CallToolResult:
    body = _present({
        "query": query, "limit": limit, "search_type": "rich", "retrieval_mode": retrieval_mode, "tbs": tbs,
        "includeDomains": includeDomains, "excludeDomains": excludeDomains, "output_schema": output_schema,
        "timeout": timeout, "origin": ORIGIN})
    payload = await _wisp(ctx).post("/v2/search", body, ctx)
    return answer_result(payload)


async def research(
    ctx: Context,
    prompt: Annotated[str, Field(min_length=1, max_length=10_000, description="The question to research")],
    urls: Annotated[list[str] | None, Field(description="Pages to read first")] = None,
    effort: Annotated[Literal["low", "medium", "high"] | None, Field(
        description="How far to search: low, medium (default) or high")] = None,
    output_schema: Annotated[dict[str, Any] | None, Field(
        description="A JSON Schema: the result is JSON that validates against it")] = None,
) -> CallToolResult:
    wisp = _wisp(ctx)
    started = await wisp.post("/v2/agent", _present({"prompt": prompt, "urls": urls, "effort": effort,
                                                     "schema": output_schema, "origin": ORIGIN}), ctx)
    job = f"/v2/agent/{started['id']}"
    waited_until = time.monotonic() + EFFORT_BUDGETS[effort or "medium"].wall_s + WAIT_MARGIN_S
    while (status := await wisp.status(job, ctx))["status"] == "processing":
        if time.monotonic() > waited_until:
            return _text_result(f"The research job is still running: read it at GET {job}", {"id": started["id"]})
        await asyncio.sleep(POLL_S)
    return research_result(status)


def research_result(status: dict[str, Any]) -> CallToolResult:
    """The report (or the schema's JSON) with its numbered sources, the claims its sources do not support, and
    why a job stopped early."""
    result = status.get("data", status.get("message", status.get("partial")))
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    sources = status.get("sources") or []
    lines = [text or "The research found nothing to report."]
    lines += ["", "Sources:", *(f"[{n}] {s.get('title') or s['url']} <{s['url']}>" for n, s in enumerate(sources, 1))]
    unsupported = [c for c in status.get("claims") or [] if c.get("citations") and not c.get("supported")]
    if unsupported:
        lines += ["", f"Not supported by the sources they cite ({len(unsupported)}):",
                  *(f"- {c['text']}" for c in unsupported)]
    if status.get("stopReason"):
        lines += ["", f"Stopped early: {status['stopReason']}"]
    if status.get("warning"):
        lines += ["", f"Warning: {status['warning']}"]
    return _text_result("\n".join(lines), _present({
        "result": result, "sources": sources, "claims": status.get("claims"),
        "stopReason": status.get("stopReason"), "warning": status.get("warning")}))


def answer_result(payload: dict[str, Any]) -> CallToolResult:
    """The answer as prose with its numbered sources; without one (the LLM failed), the results and why."""
    rich, warning = payload.get("answer"), payload.get("warning")
    results = payload.get("data", {}).get("web", [])
    if rich is None:
        lines = [f"No answer: {warning or 'the server gave none'}", "", "Results:", *_listed(results)]
        return _text_result("\n".join(lines), {"answer": None, "results": [_result(r) for r in results],
                                               "warning": warning})
    citations, text = rich.get("citations", []), rich["text"]  # an abstention's text says so
    lines = [text]
    if citations:
        lines += ["", "Sources:", *(f"[{c['number']}] {c.get('title') or c['url']} <{c['url']}>" for c in citations)]
    elif not rich.get("abstained") and results:  # a model may copy its sources without their markers
        lines += ["", "The answer cites no source; it was written from:", *_listed(results)]
    unsupported = [c for c in rich.get("claims", []) if c.get("citations") and not c.get("supported")]
    if unsupported:
        lines += ["", f"Not supported by the sources they cite ({len(unsupported)}):",
                  *(f"- {c['text']}" + (f" ({c['reason']})" if c.get("reason") else "") for c in unsupported)]
    if rich.get("json") is not None:
        lines += ["", "JSON:", json.dumps(rich["json"], ensure_ascii=False)]
    if warning:
        lines += ["", f"Warning: {warning}"]
    structured = _present({"answer": text, "abstained": bool(rich.get("abstained")), "citations": citations,
                           "claims": rich.get("claims"), "json": rich.get("json"), "warning": warning})
    return _text_result("\n".join(lines), structured)


def formats_body(formats: list[Format] | None, json_options: JsonOptions | None,
                 query_options: QueryOptions | None) -> list[Any] | None:
    """Firecrawl MCP's format names and their options → the formats of agent-svc's body."""
    if not formats:
        return None
    items: list[Any] = []
    for name in dict.fromkeys(formats):
        if name == "json":
            items.append({"type": "json", **(json_options.model_dump(by_alias=True, exclude_none=True)
                                             if json_options else {})})
        elif name == "query":
            if query_options is None:
                raise ToolError("the query format needs queryOptions.prompt, the question to answer")
            items.append({"type": "question", "question": query_options.prompt})
        else:
            items.append(name)
    return items


def _listed(results: list[dict[str, Any]]) -> list[str]:
    return [f"- {r.get('title') or r['url']} <{r['url']}>" for r in results]


def _wisp(ctx: Context) -> Wisp:
    return ctx.request_context.lifespan_context


def _sources(sources: list[str | SourceItem] | None) -> list[str] | None:
    return [s.type if isinstance(s, SourceItem) else s for s in sources] if sources else None


def _result(item: dict[str, Any]) -> dict[str, Any]:
    """A result or Document without what only a Firecrawl SDK needs (metadata twins, snake_case twins)."""
    metadata = item.get("metadata") or {}
    kept = {k: item.get(k) for k in ("position", "title", "url", "description", "snippet", "date", "imageUrl",
                                     "score")}
    kept["title"] = kept["title"] or metadata.get("title")
    kept["url"] = kept["url"] or metadata.get("url") or metadata.get("sourceURL")
    kept.update({k: item[k] for k in DOCUMENT_KEYS if k in item})
    if metadata:
        kept.update(statusCode=metadata.get("statusCode"), error=metadata.get("error"))
    return _present(kept)


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _json_result(value: dict[str, Any]) -> CallToolResult:
    return _text_result(json.dumps(value, ensure_ascii=False, separators=(",", ":")), value)


def _text_result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], structured_content=structured)
