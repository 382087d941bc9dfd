"""The real tavily-python (TavilyClient, AsyncTavilyClient) and langchain-tavily (TavilySearch, TavilyExtract)
against Wisp's /search and /extract, served by uvicorn on fakes of SearXNG, semantic-svc, the LLM and the web."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from langchain_tavily import TavilyExtract, TavilySearch
from tavily import AsyncTavilyClient, TavilyClient
from tavily.errors import BadRequestError, InvalidAPIKeyError

from agent.app import create_app
from agent.config import Settings

from ...answers.test_rich import PAGES, URL, FakeLLM
from ...fake_searxng import FakeSearxng, FakeSemantic, serving
from ...research.corpus import FALCON, ZEPHYR, CorpusSearxng, ScriptedLLM
from ...research.corpus import PAGES as CORPUS_PAGES
from ...research.corpus import QUESTION as RESEARCH_QUESTION
from ..served import served

KEY = "tavily-test-key-0123456789"
ANSWER = "SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1]."


def _serve(keys: str = "") -> Iterator[str]:
    app = create_app(Settings.of(searxng_url="http://searx.test", api_keys=keys))
    serving(app, FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"}).search(
        semantic=FakeSemantic(), pages=PAGES, fetch_top=2, rich_abstain_below=0.2, support_floor=0.6,
        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(FakeLLM(ANSWER).handle))))
    yield from served(app)


@pytest.fixture(scope="module")
def wisp() -> Iterator[str]:
    yield from _serve()


@pytest.fixture(scope="module")
def keyed_wisp() -> Iterator[str]:
    yield from _serve(KEY)


def test_sync_client_gets_results_in_tavilys_shape(wisp: str) -> None:
    found = TavilyClient("any", api_base_url=wisp).search("when does sqlite checkpoint the wal", max_results=2)
    assert set(found) >= {"query", "answer", "images", "results", "response_time", "request_id"}
    assert found["answer"] is None and found["images"] == []
    assert [r["url"] for r in found["results"]] == [URL(0), URL(1)]
    assert all(set(r) >= {"title", "url", "content", "score", "raw_content"} for r in found["results"])
    assert found["results"][0]["score"] >= found["results"][1]["score"]


def test_answer_and_raw_content_come_from_the_rich_answer_and_the_pages(wisp: str) -> None:
    found = TavilyClient("any", api_base_url=wisp).search(
        "when does sqlite checkpoint the wal", search_depth="advanced", include_answer="advanced",
        include_raw_content="markdown", max_results=2, topic="general", time_range="year", chunks_per_source=3,
        auto_parameters=False, country="united states")
    assert found["answer"] == ANSWER
    assert "1000 pages" in found["results"][0]["raw_content"]


def test_async_client_searches_and_extracts(wisp: str) -> None:
    async def both() -> tuple[dict, dict]:
        client = AsyncTavilyClient("any", api_base_url=wisp)
        return await client.search("sqlite wal", max_results=1), await client.extract([URL(0), URL(9)])

    found, extracted = asyncio.run(both())
    assert len(found["results"]) == 1
    assert [r["url"] for r in extracted["results"]] == [URL(0)]
    assert "1000 pages" in extracted["results"][0]["raw_content"]
    assert extracted["failed_results"][0]["url"] == URL(9) and "404" in extracted["failed_results"][0]["error"]


def test_sync_extract_takes_one_url_and_the_formats(wisp: str) -> None:
    extracted = TavilyClient("any", api_base_url=wisp).extract(URL(1), extract_depth="advanced", format="text",
                                                                include_images=True)
    assert extracted["results"][0]["raw_content"].count("Cats") >= 1 and extracted["results"][0]["images"] == []
    assert extracted["failed_results"] == []


def test_a_refused_body_raises_the_clients_bad_request_with_wisps_message(wisp: str) -> None:
    with pytest.raises(BadRequestError, match="max_results"):
        TavilyClient("any", api_base_url=wisp).search("sqlite", max_results=500)
    response = httpx.post(f"{wisp}/search", json={"query": ""})
    assert response.status_code == 400 and set(response.json()) == {"detail"}
    assert response.json()["detail"]["error"]


def test_a_1_mb_query_is_a_400_in_tavilys_shape_that_the_client_raises(wisp: str) -> None:
    with pytest.raises(BadRequestError, match="query has 1000000 characters; at most 2000 are accepted"):
        TavilyClient("any", api_base_url=wisp).search("x" * 1_000_000)
    response = httpx.post(f"{wisp}/search", json={"query": "x" * 1_000_000, "include_answer": True})
    assert response.status_code == 400 and response.json() == {
        "detail": {"error": "query has 1000000 characters; at most 2000 are accepted"}}


def test_the_key_is_checked_as_bearer_or_in_the_body(keyed_wisp: str) -> None:
    assert TavilyClient(KEY, api_base_url=keyed_wisp).search("sqlite", max_results=1)["results"]
    with pytest.raises(InvalidAPIKeyError):
        TavilyClient("tavily-wrong-key-0123456789", api_base_url=keyed_wisp).search("sqlite")
    in_body = httpx.post(f"{keyed_wisp}/search", json={"query": "sqlite", "max_results": 1, "api_key": KEY})
    assert in_body.status_code == 200 and in_body.json()["results"]
    refused = httpx.post(f"{keyed_wisp}/extract", json={"urls": [URL(0)], "api_key": "wrong-key-0123456789"})
    assert refused.status_code == 401 and refused.json()["detail"]["error"]


def test_langchain_tools_parse_wisps_answers(wisp: str) -> None:
    search = TavilySearch(max_results=2, include_answer=True, api_base_url=wisp, tavily_api_key="any")
    found = search.invoke({"query": "when does sqlite checkpoint the wal"})
    assert found["answer"] == ANSWER and len(found["results"]) == 2
    extract = TavilyExtract(api_base_url=wisp, tavily_api_key="any")
    extracted = extract.invoke({"urls": [URL(0)]})
    assert "1000 pages" in extracted["results"][0]["raw_content"]


@pytest.fixture(scope="module")
def research_wisp() -> Iterator[str]:
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    llm = ScriptedLLM(plan="not json", answer="Ada Quill wrote Falcon [2], which creates the wal directory [1].",
                      data='{"author": "Ada Quill"}')
    serving(app, CorpusSearxng().search(semantic=FakeSemantic(), pages=CORPUS_PAGES, fetch_top=3,
                                        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle))))
    yield from served(app)


def finished(client: TavilyClient, request_id: str) -> dict:
    for _ in range(120):
        status = client.get_research(request_id)
        if status["status"] not in ("pending", "in_progress"):
            return status
        time.sleep(0.5)
    raise AssertionError(f"research {request_id} did not finish: {status}")


@pytest.mark.parametrize(("style", "cites"), [("numbered", "[2]"), ("apa", "(Falcon history)"),
                                              ("mla", "(Falcon history)"), ("chicago", "(Falcon history)")])
def test_research_is_started_then_completes_with_content_and_sources(research_wisp: str, style: str,
                                                                     cites: str) -> None:
    client = TavilyClient("any", api_base_url=research_wisp)
    started = client.research(RESEARCH_QUESTION, model="mini", citation_format=style)
    assert started["status"] == "pending" and started["model"] == "mini" and started["input"] == RESEARCH_QUESTION
    done = finished(client, started["request_id"])
    assert done["status"] == "completed" and cites in done["content"] and "Ada Quill" in done["content"]
    assert [s["url"] for s in done["sources"]] == [ZEPHYR, FALCON] and done["created_at"] == started["created_at"]


def test_research_with_an_output_schema_answers_an_object(research_wisp: str) -> None:
    client = TavilyClient("any", api_base_url=research_wisp)
    started = client.research(RESEARCH_QUESTION, model="mini",
                              output_schema={"type": "object", "properties": {"author": {"type": "string"}}})
    assert finished(client, started["request_id"])["content"] == {"author": "Ada Quill"}


@pytest.mark.parametrize("body", [{"input": ""}, {"input": "q", "model": "max"}, {"input": "q", "stream": "yes"},
                                  {"input": "q", "output_schema": {"type": 5}}, {"input": "x" * 10_001}])
def test_bad_research_requests_are_400s_in_tavilys_shape(research_wisp: str, body: dict) -> None:
    reply = httpx.post(f"{research_wisp}/research", json=body)
    assert reply.status_code == 400 and set(reply.json()) == {"detail"}
    with pytest.raises(BadRequestError):
        TavilyClient("any", api_base_url=research_wisp).research(**body)


def streamed(chunks) -> tuple[list[dict], list[str]]:
    """The deltas of a research stream as tavily-python yields it (bytes, cut anywhere), and its named events."""
    text = b"".join(chunks).decode()
    deltas, named = [], []
    for event in text.split("\n\n"):
        for line in event.splitlines():
            if line.startswith("event:"):
                named.append(line.split(":", 1)[1].strip())
            elif line.startswith("data:") and line[5:].strip():
                deltas.append(json.loads(line[5:])["choices"][0]["delta"])
    return deltas, named


def test_a_streamed_research_sends_its_steps_its_report_in_pieces_its_sources_then_done(research_wisp: str) -> None:
    stream = TavilyClient("any", api_base_url=research_wisp).research(RESEARCH_QUESTION, model="mini", stream=True)
    deltas, named = streamed(stream)
    tools = [d["tool_calls"] for d in deltas if "tool_calls" in d]
    assert tools[0]["type"] == "tool_call" and tools[0]["tool_call"][0]["name"] == "Planning"
    calls = [t["tool_call"][0] for t in tools if t["type"] == "tool_call"]
    searches = [call for call in calls if call["name"] == "WebSearch"]
    found = [s["url"] for t in tools if t["type"] == "tool_response" for s in t["tool_response"][0]["sources"]]
    assert searches and searches[0]["queries"] == [RESEARCH_QUESTION] and ZEPHYR in found
    content = "".join(d["content"] for d in deltas if "content" in d)
    assert content.startswith("Ada Quill wrote Falcon [2]")
    assert [s["url"] for s in deltas[-1]["sources"]] == [ZEPHYR, FALCON] and named == ["done"]


def test_a_streamed_research_with_a_schema_sends_its_object(research_wisp: str) -> None:
    stream = TavilyClient("any", api_base_url=research_wisp).research(
        RESEARCH_QUESTION, model="mini", stream=True,
        output_schema={"type": "object", "properties": {"author": {"type": "string"}}})
    deltas, named = streamed(stream)
    assert [d["content"] for d in deltas if "content" in d] == [{"author": "Ada Quill"}] and named == ["done"]


def test_an_unknown_research_id_is_a_404_in_tavilys_shape(research_wisp: str) -> None:
    reply = httpx.get(f"{research_wisp}/research/nope")
    assert reply.status_code == 404 and reply.json() == {"detail": {"error": "Agent job not found"}}
