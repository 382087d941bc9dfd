"""search_type "rich" end to end: real searx, the offline web, real semantic-svc, and a real LLM server
(llama.cpp's OpenAI-compatible server from its prebuilt wheel, with SmolLM2-135M-Instruct from PyPI). A 135M
model writes weak prose: these tests assert structure (citations that resolve, claims with verdicts, schema-valid
JSON, the fallbacks), not wording, and give it deadlines that a loaded 2-core machine meets."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest
from conftest import agent_service
from firecrawl import Firecrawl
from openai import AsyncOpenAI, OpenAI
from test_sdk_js import run_js

from offline_web.processes import free_port
from offline_web.stack import llm_service

QUERY = "git squash last few commits into one"
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
ABSTAINING = "zebra migration kenya savanna"
# one LLM thread that a loaded machine slows several times over: the answer's deadline is a structure test's,
# not a latency bound (the request's own timeout, in milliseconds, must not cut it sooner)
RICH_DEADLINE_S = 150
LLM_ENV = {"LLM_MAX_TOKENS": "120", "RICH_CONTEXT_CHARS": "2500", "RICH_DEADLINE_S": str(RICH_DEADLINE_S)}
TIMEOUT_MS = (RICH_DEADLINE_S + 20) * 1000
HTTP_TIMEOUT_S = TIMEOUT_MS / 1000 + 10


@pytest.fixture(scope="module")
def rich_agents(stack, semantic_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    workdir: Path = tmp_path_factory.mktemp("rich")
    common = {"SEMANTIC_SVC_URL": semantic_url, "FETCH_ALLOW_HOSTS": "127.0.0.1", **LLM_ENV}
    with llm_service(workdir).started(timeout_s=120) as llm, \
         agent_service(stack.searx.url, workdir, "agent-rich", LLM_BASE_URL=f"{llm.url}/v1", **common) as rich, \
         agent_service(stack.searx.url, workdir, "agent-llm-down", DEFAULT_SEARCH_TYPE="rich",
                       LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1", **common) as down:
        yield {"rich": rich.url, "down": down.url}


def search(url: str, **body: object) -> dict:
    response = httpx.post(url + "/v2/search", timeout=HTTP_TIMEOUT_S, json={
        "query": QUERY, "limit": 5, "search_type": "rich", "timeout": TIMEOUT_MS, **body})
    assert response.status_code == 200, response.text
    return response.json()


def answer_of(body: dict) -> dict:
    """The response's answer; none is a failure that says why (the agent's warning)."""
    assert "answer" in body, f"no answer: {body.get('warning')}"
    return body["answer"]


@pytest.fixture(scope="module")
def answered(rich_agents: dict[str, str]) -> dict:
    return search(rich_agents["rich"], output_schema=SCHEMA)


def test_an_answer_whose_citations_resolve_and_whose_claims_have_verdicts(answered: dict) -> None:
    answer, returned = answer_of(answered), {w["url"] for w in answered["data"]["web"]}
    assert set(answer) == {"text", "citations", "claims", "abstained", "json", "model", "timings_ms", "extractive",
                           "llm_draft"}
    assert answer["abstained"] is False and answer["text"]
    # the 135M model's prose seldom cites: then the sources' own sentences answer, and the check supports them
    assert any(c["supported"] for c in answer["claims"]) and answer["citations"]
    assert all(c["url"] in returned and c["number"] >= 1 for c in answer["citations"])
    numbered = {int(n) for n in re.findall(r"^\[(\d+)\] ", answered["context"], re.MULTILINE)}  # what it read
    assert {c["number"] for c in answer["citations"]} <= numbered
    for claim in answer["claims"]:
        assert claim["text"] and isinstance(claim["supported"], bool) and set(claim["citations"]) <= numbered
        assert (claim["score"] is None) == (not claim["citations"])
        assert (claim["reason"] is None) == claim["supported"]
    assert answer["timings_ms"]["llm"] > 0 and {"llm", "verify"} <= set(answered["timings_ms"])


def test_output_schema_gives_json_that_validates_or_null_with_a_warning(answered: dict) -> None:
    value = answer_of(answered)["json"]
    if value is None:
        assert "output_schema" in answered["warning"]
    else:
        jsonschema.validate(value, SCHEMA)


def test_the_llm_down_leaves_the_ranked_sources_and_says_so(rich_agents: dict[str, str]) -> None:
    body = search(rich_agents["down"])
    assert "answer" not in body and body["data"]["web"]
    assert "the LLM at http://127.0.0.1:" in body["warning"] and "without an answer" in body["warning"]


def test_nothing_relevant_abstains_without_the_llm(rich_agents: dict[str, str]) -> None:
    body = search(rich_agents["down"], query=ABSTAINING)  # the LLM would have failed
    assert body["answer"]["abstained"] is True and body["answer"]["claims"] == []
    assert "LLM" not in body.get("warning", "")


def test_both_sdks_parse_rich_responses(rich_agents: dict[str, str]) -> None:
    url = rich_agents["down"]  # DEFAULT_SEARCH_TYPE=rich: the SDKs cannot send search_type
    abstained = httpx.post(url + "/v2/search", json={"query": ABSTAINING}, timeout=60).json()
    assert abstained["abstained"] is True and abstained["answer"]["abstained"] is True
    nothing = Firecrawl(api_url=url).search(ABSTAINING, limit=3)  # the SDK reads an abstention as no result
    assert nothing.web == [] and "relevance floor" in nothing.warning
    results = Firecrawl(api_url=url).search(QUERY, limit=3)
    assert results.web
    [js] = run_js(url, {"client": "v2", "query": QUERY, "options": {"limit": 3}},)
    assert js["ok"] and js["result"]["web"]


def test_streaming_sends_the_models_text_then_the_whole_response(rich_agents: dict[str, str]) -> None:
    body = {"query": QUERY, "limit": 3, "search_type": "rich", "stream": True, "timeout": TIMEOUT_MS}
    with httpx.stream("POST", rich_agents["rich"] + "/v2/search", json=body, timeout=HTTP_TIMEOUT_S) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        lines = list(response.iter_lines())
    names = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    assert names.count("answer.delta") >= 1 and names[-1] == "done" and names.count("done") == 1
    done = json.loads(lines[lines.index("event: done") + 1].removeprefix("data: "))
    assert done["success"] is True and done["data"]["web"] and "llm" in done["timings_ms"]


@pytest.mark.parametrize("bad", [{"output_schema": {"type": "objekt"}}, {"retrieval_mode": "neural"}])
def test_a_bad_streaming_request_is_a_plain_400(rich_agents: dict[str, str], bad: dict) -> None:
    response = httpx.post(rich_agents["rich"] + "/v2/search", timeout=30, json={"query": QUERY, "stream": True, **bad})
    assert response.status_code == 400 and response.json()["success"] is False


def test_a_json_page_format_through_the_real_llm(rich_agents: dict[str, str]) -> None:
    response = httpx.post(rich_agents["rich"] + "/v2/search", timeout=HTTP_TIMEOUT_S, json={
        "query": QUERY, "limit": 1, "timeout": TIMEOUT_MS,
        "scrapeOptions": {"formats": [{"type": "json", "schema": SCHEMA}]}})
    body = response.json()
    (item,) = body["data"]["web"]
    if "json" in item:
        jsonschema.validate(item["json"], SCHEMA)
    else:
        assert "page formats failed" in body["warning"]
    assert item["metadata"]["statusCode"] == 200


def test_the_openai_sdk_gets_a_cited_answer_from_the_real_llm(rich_agents: dict[str, str]) -> None:
    client = OpenAI(base_url=rich_agents["rich"] + "/v1", api_key="any", timeout=HTTP_TIMEOUT_S)
    assert {model.id for model in client.models.list()} >= {"wisp", "wisp-fast", "wisp-vector"}
    reply = client.chat.completions.create(model="wisp", messages=[{"role": "user", "content": QUERY}])
    extra = reply.model_extra or {}
    assert reply.choices[0].message.content and reply.choices[0].finish_reason == "stop"
    assert extra["citations"] and len(extra["search_results"]) == len(extra["citations"])
    markers = re.findall(r"\[(\d+)\]", reply.choices[0].message.content)
    assert {int(n) for n in markers} <= set(range(1, len(extra["citations"]) + 1))  # each points at a citation
    # an url_citation for each source, whether or not the model wrote a marker for it
    assert [a.url_citation.url for a in reply.choices[0].message.annotations] == extra["citations"]
    assert all("supported" in claim for claim in extra["claims"])


def test_the_openai_sdk_streams_the_real_llms_answer(rich_agents: dict[str, str]) -> None:
    client = AsyncOpenAI(base_url=rich_agents["rich"] + "/v1", api_key="any", timeout=HTTP_TIMEOUT_S)

    async def streamed() -> list:
        stream = await client.chat.completions.create(
            model="wisp-fast", messages=[{"role": "user", "content": QUERY}], stream=True)
        return [chunk async for chunk in stream]
    chunks = asyncio.run(streamed())
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text and chunks[-1].choices[0].finish_reason == "stop"
    assert (chunks[-1].model_extra or {}).get("citations")


@pytest.fixture(scope="module")
def citing_agent(stack, semantic_url: str, llm_stub, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-svc on the LLM stub's `cites` model, which cites its first two sources as a capable model would
    (SmolLM2-135M seldom writes a marker)."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("citing"), "agent-citing",
                       SEMANTIC_SVC_URL=semantic_url, FETCH_ALLOW_HOSTS="127.0.0.1",
                       LLM_BASE_URL=f"{llm_stub.url}/v1", LLM_MODEL="cites", **LLM_ENV) as agent:
        yield agent.url


def citations_of(content: str, annotations: list, citations: list[str]) -> list[tuple[str, str]]:
    """(the url, the span of the content) of each url_citation: one per source, in the order of Sonar's `citations`."""
    assert [a.type for a in annotations] == ["url_citation"] * len(citations)
    assert [a.url_citation.url for a in annotations] == citations and all(a.url_citation.title for a in annotations)
    return [(a.url_citation.url, content[a.url_citation.start_index:a.url_citation.end_index]) for a in annotations]


def test_the_openai_sdk_reads_url_citations_plain_and_streamed(citing_agent: str) -> None:
    client = OpenAI(base_url=citing_agent + "/v1", api_key="any", timeout=HTTP_TIMEOUT_S)
    messages = [{"role": "user", "content": QUERY}]
    reply = client.chat.completions.create(model="wisp", messages=messages)
    message, citations = reply.choices[0].message, reply.model_extra["citations"]
    cited = citations_of(message.content, message.annotations, citations)
    assert [span for _, span in cited][:2] == ["[1]", "[2]"], (message.content, citations)
    with client.chat.completions.stream(model="wisp", messages=messages) as stream:
        final = stream.get_final_completion()
    streamed = final.choices[0].message
    assert streamed.content == message.content  # markers alike, streamed or whole
    # the helper keeps no top-level extras (Sonar's `citations`): the same search read the same sources
    assert citations_of(streamed.content, streamed.annotations, citations) == cited
