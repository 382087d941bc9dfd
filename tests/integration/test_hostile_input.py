"""Hostile input against a real agent-svc: every malformed request is a 4xx in Firecrawl's envelope (or a 200
where it is merely odd), and hostile SearXNG results and pages degrade within the deadline.

One test per class of input that used to be a 5xx (issue 12's 130 malformed requests, 61 injected faults).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import FIXTURES, SEARX_PYTHON, agent_service

from offline_web.processes import Service, free_port
from offline_web.stack import OfflineStack

V2, V1 = "/v2/search", "/v1/search"


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def post_raw(agent: httpx.Client, path: str, raw: str | bytes) -> httpx.Response:
    return agent.post(path, content=raw, headers={"content-type": "application/json"})


def refused(response: httpx.Response, status: int, fragment: str) -> None:
    assert response.status_code == status, response.text[:300]
    body = response.json()
    assert body["success"] is False and fragment in body["error"], body


@pytest.mark.parametrize("depth", [1000, 100_000])
@pytest.mark.parametrize("where", ["top", "unknown key", "scrapeOptions"])
def test_deep_json_is_a_400_and_the_connection_lives_on(agent: httpx.Client, where: str, depth: int) -> None:
    deep = nested(depth)
    raw = {"top": deep, "unknown key": f'{{"query": "git", "extra": {deep}}}',
           "scrapeOptions": f'{{"query": "git", "scrapeOptions": {{"formats": ["markdown"], "x": {deep}}}}}'}[where]
    refused(post_raw(agent, V2, raw), 400, "nested deeper than 32 levels")
    assert agent.post(V2, json={"query": "git", "limit": 1}).status_code == 200  # the same keep-alive connection


@pytest.mark.parametrize("path", [V2, V1])
def test_a_5_mb_body_is_a_413(agent: httpx.Client, path: str) -> None:
    refused(agent.post(path, json={"query": "x" * 5_000_000}), 413, "limited to 2000000 bytes")


def test_a_chunked_body_past_the_limit_is_a_413_too(agent: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(300):
            yield b"x" * 10_000
        yield b'"}'

    refused(agent.post(V2, content=chunks(), headers={"content-type": "application/json"}), 413, "Payload too large")


@pytest.mark.parametrize("path", [V2, V1])
def test_a_query_past_max_query_chars_is_a_400(agent: httpx.Client, path: str) -> None:
    response = agent.post(path, json={"query": "sqlite " * 1500})
    refused(response, 400, "Invalid request body")
    assert "at most 2000 are accepted" in response.json()["details"][0]["message"]


def test_hundreds_of_include_domains_are_filtered_and_only_20_sent_as_site_operators(agent: httpx.Client,
                                                                                      stack: OfflineStack) -> None:
    domains = ["127.0.0.1", *(f"site{n}.example" for n in range(299))]
    started = time.monotonic()
    body = agent.post(V2, json={"query": "sqlite", "limit": 3, "includeDomains": domains}).json()
    assert body["success"] is True and time.monotonic() - started < 5
    assert "SearXNG was sent the first 20 of 300 as site: operators" in body["warning"]
    assert all(item["url"].startswith(stack.web.url) for item in body["data"]["web"])


@pytest.mark.parametrize("key", ["includeDomains", "excludeDomains"])
def test_ten_thousand_domains_are_a_400(agent: httpx.Client, key: str) -> None:
    response = agent.post(V2, json={"query": "git", key: [f"d{n}.example" for n in range(10_000)]})
    refused(response, 400, "Invalid request body")
    assert "at most 1000 are accepted" in json.dumps(response.json()["details"])


def test_a_list_longer_than_max_list_items_is_a_400_wherever_it_is(agent: httpx.Client) -> None:
    refused(agent.post(V2, json={"query": "git", "anything": list(range(10_001))}), 400,
            "anything has 10001 items; at most 10000")


@pytest.mark.parametrize(("tbs", "status"), [("qdr:d" + "9" * 20, 400), ("qdr:y10000", 200), ("qdr:y999999999", 200),
                                             ("cdr:1,cd_min:1/1/0001,cd_max:12/31/9999", 200)])
def test_absurd_tbs_counts_and_dates(agent: httpx.Client, tbs: str, status: int) -> None:
    response = agent.post(V2, json={"query": "git", "limit": 1, "tbs": tbs})
    assert response.status_code == status, response.text
    if status == 400:
        refused(response, 400, "the count must be between 1 and 999999999")


@pytest.mark.parametrize("path", [V2, V1])
@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_timeout_is_a_400(agent: httpx.Client, path: str, digits: int) -> None:
    refused(post_raw(agent, path, f'{{"query": "git", "timeout": {"9" * digits}}}'), 400, "")


def test_a_large_but_safe_timeout_is_accepted(agent: httpx.Client) -> None:
    assert agent.post(V2, json={"query": "git", "limit": 1, "timeout": 2**53 - 1}).status_code == 200


@pytest.mark.parametrize("path", [V2, V1])
@pytest.mark.parametrize("field", ["lang", "query", "country"])
def test_a_lone_surrogate_is_a_400(agent: httpx.Client, path: str, field: str) -> None:
    body = {"query": "git", field: "en\\ud800"}
    raw = "{" + ", ".join(f'"{k}": "{v}"' for k, v in body.items()) + "}"
    refused(post_raw(agent, path, raw), 400, "lone UTF-16 surrogate")


# hostile SearXNG results and hostile pages


@pytest.fixture(scope="module")
def hostile_agent(stack: OfflineStack, semantic_url: str, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[Service]:
    """agent-svc in front of a SearXNG whose results are malformed URLs and hostile pages of the offline web."""
    workdir: Path = tmp_path_factory.mktemp("hostile")
    port = free_port()
    stub = Service("searxng-stub-hostile", [SEARX_PYTHON, str(FIXTURES / "searxng_stub.py"), "hostile", str(port),
                                            stack.web.url], f"http://127.0.0.1:{port}", workdir / "stub.log")
    with stub, agent_service(stub.url, workdir, "agent-hostile", SEMANTIC_SVC_URL=semantic_url,
                             FETCH_ALLOW_HOSTS="127.0.0.1", PIPELINE_DEADLINE_S="5") as agent:
        yield agent


def session_rss_mib(service: Service) -> float:
    """The resident memory of agent-svc and every process of its session (its extraction workers)."""
    assert service.process is not None
    session, total = service.process.pid, 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:  # the session id: the service was started in a session of its own
                total += int(fields[21])
        except (OSError, ValueError, IndexError):
            continue
    return total * 4096 / 2**20


def test_malformed_result_urls_are_dropped_not_a_500(hostile_agent: Service) -> None:
    body = httpx.post(hostile_agent.url + V2, json={"query": "anything", "limit": 10}, timeout=30).json()
    urls = [item["url"] for item in body["data"]["web"]]
    assert body["success"] is True and len(urls) == 4 and all(url.startswith("http://127.0.0.1") for url in urls)
    assert "4 SearXNG results had a malformed URL and were dropped" in body["warning"]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_hostile_pages_hold_the_deadline_and_give_memory_back(hostile_agent: Service, mode: str) -> None:
    """5 MB of tiny paragraphs, a 200 MB gzip bomb and a page that never answers, scraped and ranked."""
    request = {"query": "anything", "limit": 10, "retrieval_mode": mode, "scrapeOptions": {"formats": ["markdown"]}}
    for _ in range(2):  # the second request finds no worker still busy with the first one's pages
        started = time.monotonic()
        response = httpx.post(hostile_agent.url + V2, json=request, timeout=60)
        elapsed = time.monotonic() - started
        body = response.json()
        assert response.status_code == 200 and elapsed < 5 + 3, (elapsed, body.get("warning"))
        by_url = {item["url"].split("/", 3)[-1]: item for item in body["data"]["web"]}
        assert by_url["www.sqlite.org/wal.html"]["markdown"]
        assert "error" in by_url["_test/hang?seconds=60"]["metadata"]
        assert "pages have no scraped content" in body["warning"]  # the failed Documents are named
        assert "within 0.0 s" not in body["warning"]
    assert session_rss_mib(hostile_agent) < 1500
