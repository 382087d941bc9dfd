"""POST /v2/extract and /v1/extract end to end: real searx, the offline web, agent-svc, and through the real
clients (firecrawl-py v2 sync and async, its v1 client, firecrawl-js, LangChain's FireCrawlLoader). An
OpenAI-compatible stub whose replies are predictable (tests/fixtures/llm_stub.py: the JSON of the pages it was
shown, or garbage) shows which pages were read and how the answers were merged; one test runs the real LLM of
the tests (SmolLM2-135M on llama.cpp)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp
from firecrawl.v2.utils.error_handler import BadRequestError
from langchain_community.document_loaders import FireCrawlLoader

from offline_web.processes import Service
from offline_web.stack import OfflineStack, llm_service
from tests.integration.conftest import agent_service
from tests.integration.test_sdk_js import call_js

PAGES_SCHEMA = {"type": "object", "required": ["pages"], "properties": {"pages": {"type": "array", "items": {
    "type": "object", "required": ["title", "url"],
    "properties": {"title": {"type": "string"}, "url": {"type": "string"}}}}}}
PROMPT = "List the pages you were shown."
# each page is its own batch (pages are cut to the budget), so that merging is exercised
AGENT_ENV = {"FETCH_ALLOW_HOSTS": "127.0.0.1", "RICH_CONTEXT_CHARS": "1500", "EXTRACT_SITE_PAGES": "4",
             "EXTRACT_TIMEOUT_S": "150"}


@pytest.fixture(scope="module")
def extract_agents(stack: OfflineStack, llm_stub: Service, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[dict[str, str]]:
    """agent-svc whose LLM lists the pages it read, and one whose LLM writes garbage."""
    workdir = tmp_path_factory.mktemp("extract")
    llm = {"LLM_BASE_URL": f"{llm_stub.url}/v1", **AGENT_ENV}
    with agent_service(stack.searx.url, workdir, "agent-extract", LLM_MODEL="pages", **llm) as pages, \
         agent_service(stack.searx.url, workdir, "agent-extract-garbage", LLM_MODEL="garbage", **llm) as garbage:
        yield {"pages": pages.url, "garbage": garbage.url}


@pytest.fixture(scope="module")
def web(stack: OfflineStack) -> str:
    return f"{stack.web.url}/www.sqlite.org"


def read_urls(data: dict) -> list[str]:
    return [page["url"] for page in data["pages"]]


def test_python_sdk_v2_extract_reads_every_page_and_merges_the_batches(extract_agents: dict[str, str],
                                                                       web: str) -> None:
    urls = [f"{web}/wal.html", f"{web}/pragma.html", f"{web}/no-such-page.html"]
    result = Firecrawl(api_url=extract_agents["pages"]).extract(urls=urls, prompt=PROMPT, schema=PAGES_SCHEMA,
                                                                show_sources=True, poll_interval=1)
    assert result.status == "completed" and result.success and result.expires_at, result
    assert read_urls(result.data) == urls[:2]  # one batch each, concatenated in the pages' order
    jsonschema.validate(result.data, PAGES_SCHEMA)
    assert result.sources["pages"] == urls[:2] and result.sources["pages[1]"] == [urls[1]]
    assert "1 of 3 pages could not be read" in result.warning and "no-such-page.html" in result.warning


def test_python_sdk_v2_async_extract_and_the_two_steps(extract_agents: dict[str, str], web: str) -> None:
    async def both() -> tuple:
        client = AsyncFirecrawl(api_url=extract_agents["pages"])
        waited = await client.extract(urls=[f"{web}/wal.html"], prompt=PROMPT, poll_interval=1)
        started = await client.start_extract(urls=[f"{web}/pragma.html"], prompt=PROMPT)
        return waited, started, await client.get_extract_status(started.id)

    waited, started, status = asyncio.run(both())
    assert waited.status == "completed" and read_urls(waited.data) == [f"{web}/wal.html"]
    assert waited.sources is None  # not asked for
    assert started.success and started.id and status.status in ("processing", "completed")


def test_a_site_url_reads_the_sites_pages_within_the_bound(extract_agents: dict[str, str], web: str) -> None:
    result = Firecrawl(api_url=extract_agents["pages"]).extract(urls=[f"{web}/*"], prompt=PROMPT, poll_interval=1)
    assert result.status == "completed", result
    read = read_urls(result.data)
    assert 2 <= len(read) <= 4 and len(set(read)) == len(read)  # EXTRACT_SITE_PAGES is 4
    assert read[0] == f"{web}/"  # the seed first, as the map lists it
    assert all(url.startswith(f"{web}/") for url in read)


def test_web_search_reads_what_wisp_finds_for_the_prompt(extract_agents: dict[str, str]) -> None:
    prompt = "sqlite write-ahead log checkpoint"
    found = httpx.post(extract_agents["pages"] + "/v2/search", json={"query": prompt, "limit": 5}).json()
    result = Firecrawl(api_url=extract_agents["pages"]).extract(prompt=prompt, enable_web_search=True,
                                                                poll_interval=1)
    assert result.status == "completed", result
    assert read_urls(result.data) and set(read_urls(result.data)) <= {w["url"] for w in found["data"]["web"]}


def test_python_sdk_v1_extract(extract_agents: dict[str, str], web: str) -> None:
    result = V1FirecrawlApp(api_url=extract_agents["pages"]).extract([f"{web}/wal.html"], prompt=PROMPT,
                                                                     schema=PAGES_SCHEMA, show_sources=True)
    assert result.success and result.status == "completed" and read_urls(result.data) == [f"{web}/wal.html"]
    assert result.sources == {"pages": [f"{web}/wal.html"], "pages[0]": [f"{web}/wal.html"]}


def test_js_sdk_extract_and_the_two_steps(extract_agents: dict[str, str], web: str) -> None:
    args = {"urls": [f"{web}/wal.html"], "prompt": PROMPT, "schema": PAGES_SCHEMA, "pollInterval": 1}
    waited, started, status = call_js(
        extract_agents["pages"],
        {"method": "extract", "args": [args]},
        {"method": "startExtract", "args": [{"urls": [f"{web}/pragma.html"], "prompt": PROMPT}]},
        {"method": "getExtractStatus", "args": ["$0"]})
    assert waited["ok"] and waited["result"]["status"] == "completed", waited
    assert read_urls(waited["result"]["data"]) == [f"{web}/wal.html"]
    assert started["ok"] and started["result"]["success"] and status["ok"]
    assert status["result"]["status"] in ("processing", "completed")


def test_langchains_firecrawl_loader_in_extract_mode(extract_agents: dict[str, str], web: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "any")  # the loader insists on a key; Wisp without API_KEYS takes any
    loader = FireCrawlLoader(url=f"{web}/wal.html", api_url=extract_agents["pages"], mode="extract",
                                     params={"prompt": PROMPT, "schema": PAGES_SCHEMA, "poll_interval": 1})
    [doc] = loader.load()  # the loader keeps str() of firecrawl-py's ExtractResponse
    assert "status='completed'" in doc.page_content and f"'url': '{web}/wal.html'" in doc.page_content


def test_an_llm_that_writes_garbage_fails_the_job_with_the_cause(extract_agents: dict[str, str], web: str) -> None:
    url = extract_agents["garbage"]
    result = Firecrawl(api_url=url).extract(urls=[f"{web}/wal.html"], prompt=PROMPT, poll_interval=1)
    assert result.status == "failed" and result.success is False and result.data == []
    assert "no valid JSON came out of the pages" in result.error and "not JSON" in result.error
    with pytest.raises(ValueError, match="Extract job failed"):
        V1FirecrawlApp(api_url=url).extract([f"{web}/wal.html"], prompt=PROMPT)
    [js] = call_js(url, {"method": "extract", "args": [{"urls": [f"{web}/wal.html"], "prompt": PROMPT,
                                                         "pollInterval": 1}]})
    assert js["ok"] and js["result"]["status"] == "failed" and "not JSON" in js["result"]["error"]


@pytest.mark.parametrize(("body", "problem"), [
    ({}, "Either 'urls' or 'prompt' must be provided"),
    ({"urls": ["https://a.test/"], "schema": {"type": "objekt"}}, "schema is not a valid JSON Schema"),
    ({"urls": [f"https://a.test/{i}" for i in range(11)], "prompt": "p"}, "at most 10 are accepted"),
    ({"urls": "https://a.test/", "prompt": "p"}, "Bad Request"),
])
def test_bad_requests_are_400s_in_firecrawls_envelope(extract_agents: dict[str, str], body: dict,
                                                      problem: str) -> None:
    for version in ("v2", "v1"):
        response = httpx.post(f"{extract_agents['pages']}/{version}/extract", json=body)
        assert response.status_code == 400 and response.json()["success"] is False
        assert problem in response.json()["error"]


def test_the_sdk_raises_a_bad_request_and_invalid_urls_are_listed(extract_agents: dict[str, str], web: str) -> None:
    with pytest.raises(BadRequestError, match="schema"):
        Firecrawl(api_url=extract_agents["pages"]).start_extract(urls=[f"{web}/wal.html"], schema={"type": 3})
    started = httpx.post(extract_agents["pages"] + "/v2/extract",
                         json={"urls": [f"{web}/wal.html", "ftp://x.test/"], "prompt": PROMPT}).json()
    assert started["success"] and started["invalidURLs"] == ["ftp://x.test/"]


def test_an_unknown_job_is_a_404(extract_agents: dict[str, str]) -> None:
    for version in ("v2", "v1"):
        response = httpx.get(f"{extract_agents['pages']}/{version}/extract/0190e4a2-0000-7000-8000-000000000000")
        assert response.status_code == 404 and response.json() == {"success": False, "error": "Extract job not found"}


def test_the_llm_is_asked_in_json_mode_with_the_schema(extract_agents: dict[str, str], llm_stub: Service,
                                                       web: str) -> None:
    Firecrawl(api_url=extract_agents["pages"]).extract(urls=[f"{web}/isolation.html"], prompt=PROMPT,
                                                       schema=PAGES_SCHEMA, system_prompt="Be exact.",
                                                       poll_interval=1)
    sent = [json.loads(line) for line in (llm_stub.log_path.parent / "requests.jsonl").read_text().splitlines()]
    [asked] = [r for r in sent if "isolation.html" in r["messages"][-1]["content"]]
    assert asked["response_format"] == {"type": "json_object", "schema": PAGES_SCHEMA}
    assert asked["messages"][0]["content"].startswith("Be exact.") and "tools" not in asked


def test_the_real_llm_gives_json_that_validates(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory,
                                                web: str) -> None:
    workdir: Path = tmp_path_factory.mktemp("extract-llm")
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    with llm_service(workdir).started(timeout_s=120) as llm, \
         agent_service(stack.searx.url, workdir, "agent-extract-llm", LLM_BASE_URL=f"{llm.url}/v1",
                       LLM_MAX_TOKENS="120", **AGENT_ENV) as agent:
        result = Firecrawl(api_url=agent.url).extract(urls=[f"{web}/wal.html"], prompt="What is the page's title?",
                                                      schema=schema, poll_interval=1, timeout=200)
    assert result.status == "completed", result
    jsonschema.validate(result.data, schema)
