"""The MCP tools through the SDK's own in-process client, against agent-svc played by httpx.MockTransport:
what each tool's arguments become on the wire, and what an agent gets back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
from mcp import Client
from mcp_types import CallToolResult

from agent.mcp import tools
from agent.mcp.server import build_server
from agent.ranking.modes import MODES

Reply = Callable[[httpx.Request], httpx.Response]
RESULTS = {"success": True, "data": {"web": [
    {"url": "https://a.example/", "title": "A", "description": "about a", "position": 1, "score": 0.8,
     "evidence": "page", "passages": [{"text": "long"}], "category": "github"}]}, "timings_ms": {"total": 3}}
ANSWER = {**RESULTS, "answer": {
    "text": "Squash with rebase [1].", "abstained": False, "json": None, "model": "m", "timings_ms": {},
    "citations": [{"number": 1, "url": "https://a.example/", "title": "A"}],
    "claims": [{"text": "Squash with rebase [1].", "citations": [1], "supported": True, "score": 0.9},
               {"text": "It is always safe [1].", "citations": [1], "supported": False, "score": 0.3,
                "reason": "similarity 0.30 is below the floor 0.55"}]}}


def call(tool: str, arguments: dict[str, Any], reply: Reply | dict[str, Any] = RESULTS
         ) -> tuple[CallToolResult, list[httpx.Request]]:
    """Call `tool` once; agent-svc answers with `reply` (a handler, or a 200 JSON body)."""
    requests: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return reply(request) if callable(reply) else httpx.Response(200, json=reply)

    server = build_server(lambda: httpx.AsyncClient(transport=httpx.MockTransport(handle), base_url="http://w"),
                          forward_auth=False)

    async def run() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(run()), requests


def sent(requests: list[httpx.Request]) -> tuple[str, dict[str, Any]]:
    (request,) = requests
    return request.url.path, json.loads(request.content)


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content)


def test_the_four_tools_and_their_schemas() -> None:
    async def listed() -> dict[str, Any]:
        async with Client(build_server(httpx.AsyncClient, forward_auth=False)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = asyncio.run(listed())
    assert set(tools) == {"search", "scrape", "answer", "research"}
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["scrape"].input_schema["required"] == ["url"]
    mode = tools["search"].input_schema["properties"]["retrieval_mode"]["anyOf"][0]
    assert mode["enum"] == list(MODES)
    assert all(t.annotations.read_only_hint and t.description for t in tools.values())


def test_search_arguments_become_firecrawls_body() -> None:
    _, requests = call("search", {
        "query": "sqlite wal", "limit": 3, "sources": ["web", {"type": "news"}], "retrieval_mode": "hybrid",
        "tbs": "qdr:m", "includeDomains": ["sqlite.org"], "timeout": 9000, "scrapeOptions": {
            "formats": ["markdown", "json", "query"], "onlyMainContent": False,
            "jsonOptions": {"schema": {"type": "object"}}, "queryOptions": {"prompt": "what is wal?"}}})
    path, body = sent(requests)
    assert path == "/v2/search"
    assert body == {"query": "sqlite wal", "limit": 3, "sources": ["web", "news"], "retrieval_mode": "hybrid",
                    "tbs": "qdr:m", "includeDomains": ["sqlite.org"], "timeout": 9000, "origin": "wisp-mcp",
                    "scrapeOptions": {"onlyMainContent": False, "formats": [
                        "markdown", {"type": "json", "schema": {"type": "object"}},
                        {"type": "question", "question": "what is wal?"}]}}


def test_search_defaults_to_five_results_and_leaves_the_rest_to_agent_svc() -> None:
    _, requests = call("search", {"query": "x"})
    assert sent(requests)[1] == {"query": "x", "limit": 5, "origin": "wisp-mcp"}


def test_search_returns_compact_results_without_the_sdks_extras() -> None:
    result, _ = call("search", {"query": "x"})
    expected = {"web": [{"position": 1, "title": "A", "url": "https://a.example/", "description": "about a",
                         "score": 0.8}]}
    assert not result.is_error and result.structured_content == expected
    assert json.loads(text(result)) == expected


def test_scraped_results_keep_their_content_and_a_failed_page_its_error() -> None:
    data = {"success": True, "warning": "1 page failed", "data": {"web": [
        {"url": "https://a.example/", "title": "A", "description": "d", "position": 1, "markdown": "# A",
         "metadata": {"url": "https://a.example/", "sourceURL": "https://a.example/", "statusCode": 200,
                      "title": "A", "contentType": "text/html", "proxyUsed": "basic"}},
        {"url": "https://b.example/", "title": "B", "description": "e", "position": 2,
         "metadata": {"statusCode": 403, "error": "blocked: private address"}}]}}
    result, _ = call("search", {"query": "x", "scrapeOptions": {"formats": ["markdown"]}}, data)
    first, second = result.structured_content["web"]
    assert first["markdown"] == "# A" and first["statusCode"] == 200 and "metadata" not in first
    assert second["error"] == "blocked: private address" and "markdown" not in second
    assert result.structured_content["warning"] == "1 page failed"


def test_scrape_arguments_and_its_document() -> None:
    document = {"markdown": "# Title", "links": ["https://x/"], "metadata": {
        "title": "Title", "url": "https://x/", "sourceURL": "https://x", "statusCode": 200}}
    result, requests = call("scrape", {"url": "https://x", "formats": ["markdown", "links", "summary"],
                                       "onlyMainContent": True}, {"success": True, "data": document})
    assert sent(requests) == ("/v2/scrape", {"url": "https://x", "formats": ["markdown", "links", "summary"],
                                             "onlyMainContent": True, "origin": "wisp-mcp"})
    assert result.structured_content == {"title": "Title", "url": "https://x/", "markdown": "# Title",
                                         "links": ["https://x/"], "statusCode": 200}


def test_answer_asks_for_a_rich_search_and_returns_cited_prose() -> None:
    result, requests = call("answer", {"query": "squash commits", "output_schema": {"type": "object"}}, ANSWER)
    assert sent(requests)[1] == {"query": "squash commits", "limit": 5, "search_type": "rich",
                                 "output_schema": {"type": "object"}, "origin": "wisp-mcp"}
    lines = text(result).splitlines()
    assert lines[0] == "Squash with rebase [1]."
    assert "[1] A <https://a.example/>" in lines
    assert "- It is always safe [1]. (similarity 0.30 is below the floor 0.55)" in lines
    assert result.structured_content["citations"] == ANSWER["answer"]["citations"]
    assert result.structured_content["abstained"] is False


def test_an_answer_citing_nothing_names_the_results_it_was_written_from() -> None:
    uncited = {**RESULTS, "answer": {**ANSWER["answer"], "text": "Squash with rebase.", "citations": [],
                                     "claims": [{"text": "Squash with rebase.", "citations": [], "supported": False,
                                                 "score": None}]}}
    result, _ = call("answer", {"query": "squash commits"}, uncited)
    assert text(result) == ("Squash with rebase.\n\nThe answer cites no source; it was written from:\n"
                            "- A <https://a.example/>")


def test_an_abstaining_answer_says_the_sources_do_not_answer() -> None:
    abstained = {**RESULTS, "answer": {**ANSWER["answer"], "text": "The sources found do not answer this question.",
                                       "abstained": True, "citations": [], "claims": []}}
    result, _ = call("answer", {"query": "zebra"}, abstained)
    assert text(result) == "The sources found do not answer this question."
    assert result.structured_content["abstained"] is True and not result.is_error


def test_no_answer_gives_the_results_and_why() -> None:
    result, _ = call("answer", {"query": "q"}, {**RESULTS, "warning": "the LLM at http://l is down"})
    assert not result.is_error
    assert text(result).startswith("No answer: the LLM at http://l is down")
    assert "- A <https://a.example/>" in text(result)
    assert result.structured_content["answer"] is None


def test_firecrawls_error_envelope_becomes_a_tool_error_with_its_message() -> None:
    envelope = {"success": False, "error": "Invalid request body", "details": [
        {"code": "too_big", "path": ["limit"], "message": "Too big"}]}
    result, _ = call("search", {"query": "x"}, lambda _: httpx.Response(400, json=envelope))
    assert result.is_error and "Invalid request body (HTTP 400): limit: Too big" in text(result)
    result, _ = call("scrape", {"url": "https://x"}, lambda _: httpx.Response(
        200, json={"success": False, "error": "DNS failed", "code": "SCRAPE_DNS_RESOLUTION_ERROR"}))
    assert result.is_error and "DNS failed (HTTP 200, SCRAPE_DNS_RESOLUTION_ERROR)" in text(result)


def test_an_unreachable_or_broken_agent_svc_is_a_tool_error() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    result, _ = call("search", {"query": "x"}, refused)
    assert result.is_error and "agent-svc at http://w did not answer: ConnectError" in text(result)
    result, _ = call("search", {"query": "x"}, lambda _: httpx.Response(502, text="<html>bad gateway"))
    assert result.is_error and "HTTP 502 without JSON: <html>bad gateway" in text(result)


def test_bad_arguments_are_tool_errors_and_reach_no_server() -> None:
    for tool, arguments in [("search", {"query": ""}), ("search", {"query": "x", "limit": 0}),
                            ("search", {"query": "x", "retrieval_mode": "neural"}),
                            ("search", {"query": "x", "sources": [{"type": "maps"}]}),
                            ("scrape", {"url": "https://x", "formats": ["screenshot"]}),
                            ("scrape", {"url": "https://x", "formats": ["query"]}),
                            ("scrape", {}), ("answer", {"query": "x", "limit": "many"})]:
        result, requests = call(tool, arguments)
        assert result.is_error and text(result), (tool, arguments)
        assert requests == [], (tool, arguments)


def agent_svc(statuses: list[dict[str, Any]]) -> Reply:
    """agent-svc's agent API: a job started, then `statuses` in turn for each read of it."""
    def reply(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"success": True, "id": "job-1"})
        return httpx.Response(200, json=statuses.pop(0) if len(statuses) > 1 else statuses[0])
    return reply


REPORT = {"success": True, "status": "completed", "data": "Ada Quill wrote Falcon [2], which makes the dir [1].",
          "sources": [{"url": "https://a.example/", "title": "Zephyr"},
                      {"url": "https://b.example/", "title": "Falcon"}],
          "claims": [{"text": "It makes the dir [1].", "citations": [1], "supported": False}]}


def test_research_starts_a_job_waits_for_it_and_returns_the_report_and_its_sources(monkeypatch) -> None:
    monkeypatch.setattr(tools, "POLL_S", 0.01)
    processing = {"success": True, "status": "processing"}
    arguments = {"prompt": "who wrote falcon", "effort": "low", "output_schema": {"type": "object"}}
    result, requests = call("research", arguments, agent_svc([processing, processing, REPORT]))
    assert [(r.method, r.url.path) for r in requests] == [("POST", "/v2/agent")] + [("GET", "/v2/agent/job-1")] * 3
    assert json.loads(requests[0].content) == {"prompt": "who wrote falcon", "effort": "low",
                                               "schema": {"type": "object"}, "origin": "wisp-mcp"}
    report = text(result)
    assert report.startswith("Ada Quill wrote Falcon [2]") and "[2] Falcon <https://b.example/>" in report
    assert "Not supported by the sources they cite (1)" in report and not result.is_error


def test_a_job_stopped_early_is_reported_with_what_it_found_and_why() -> None:
    stopped = {"success": False, "status": "failed", "partial": "Evidence found ...", "stopReason": "deadline",
               "sources": [{"url": "https://a.example/", "title": "Zephyr"}], "error": "the job stopped early"}
    result, _ = call("research", {"prompt": "q"}, agent_svc([stopped]))
    assert not result.is_error and "Evidence found" in text(result) and "Stopped early: deadline" in text(result)


def test_a_refused_research_request_is_a_tool_error_naming_the_field() -> None:
    refusal = httpx.Response(400, json={"success": False, "error": "Bad Request", "details": [
        {"path": ["webhook"], "message": "not supported"}]})
    result, _ = call("research", {"prompt": "q"}, lambda request: refusal)
    assert result.is_error and "webhook: not supported" in text(result)
