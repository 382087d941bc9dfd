"""Observability end to end: real searches through agent-svc (real searx, the offline web, a real semantic-svc),
then both services' /metrics, agent-svc's log and /readyz read back."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from offline_web.processes import Service
from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service

Samples = dict[tuple[str, frozenset], float]


@pytest.fixture(scope="module")
def observed(stack: OfflineStack, semantic: Service, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """An agent-svc of this module's own, so that its log is there to read."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("observed"), "agent-observed",
                       SEMANTIC_SVC_URL=semantic.url, FETCH_ALLOW_HOSTS="127.0.0.1", EXTRACT_WORKERS="1") as agent:
        yield agent


def scrape(url: str) -> Samples:
    response = httpx.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.text) for s in family.samples}


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after.get(key, 0.0) - before.get(key, 0.0)


def search(agent: Service, **body: object) -> httpx.Response:
    response = httpx.post(f"{agent.url}/v2/search", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response


def log_lines(path: Path, request_id: str, timeout_s: float = 5) -> list[dict]:
    """The JSON lines of the log naming `request_id` (the access line is written as the response ends)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = [json.loads(line) for line in path.read_text().splitlines() if request_id in line]
        if any(line["logger"].endswith(".access") for line in found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_a_keyword_search_is_counted_timed_and_logged_with_its_id(observed: Service) -> None:
    before = scrape(observed.url)
    response = search(observed, query="sqlite locking", limit=3)
    after = scrape(observed.url)
    body = response.json()
    assert response.headers["X-Request-Id"] == body["id"]
    assert moved(before, after, "wisp_agent_requests_total", route="/v2/search", method="POST", mode="keyword",
                 status="200") == 1
    assert moved(before, after, "wisp_agent_stage_duration_seconds_count", stage="searxng", mode="keyword") == 1
    assert moved(before, after, "wisp_agent_request_duration_seconds_count", route="/v2/search", mode="keyword") == 1
    assert moved(before, after, "wisp_agent_searxng_engine_answers_total", engine="localweb") >= 1
    [access] = [line for line in log_lines(observed.log_path, body["id"]) if line["logger"] == "agent.access"]
    assert (access["route"], access["status"], access["mode"], access["method"]) == ("/v2/search", 200, "keyword",
                                                                                     "POST")
    assert access["request_id"] == body["id"] and access["duration_ms"] > 0 and access["level"] == "INFO"


def test_a_hybrid_search_counts_fetches_stages_and_semantic_svcs_batches(observed: Service,
                                                                         semantic: Service) -> None:
    agent_before, semantic_before = scrape(observed.url), scrape(semantic.url)
    body = search(observed, query="sqlite locking", limit=3, retrieval_mode="hybrid", fetch_top=3).json()
    agent_after, semantic_after = scrape(observed.url), scrape(semantic.url)
    assert moved(agent_before, agent_after, "wisp_agent_requests_total", route="/v2/search", method="POST",
                 mode="hybrid", status="200") == 1
    assert moved(agent_before, agent_after, "wisp_agent_fetches_total", outcome="ok") >= 1
    for stage in set(body["timings_ms"]):  # every stage of the response's timings, once
        assert moved(agent_before, agent_after, "wisp_agent_stage_duration_seconds_count", stage=stage,
                     mode="hybrid") == 1, stage
    assert moved(semantic_before, semantic_after, "wisp_semantic_requests_total", route="/rerank", method="POST",
                 status="200") >= 1
    batches = sum(value - semantic_before.get(key, 0.0) for key, value in semantic_after.items()
                  if key[0] == "wisp_semantic_batch_items_count")
    assert batches >= 1
    assert ("wisp_semantic_queue_jobs", frozenset({("priority", "background")})) in semantic_after
    # the request's id followed it into semantic-svc's log
    assert [line for line in log_lines(semantic.log_path, body["id"]) if line["logger"] == "semantic.access"]


def test_engines_that_did_not_answer_are_counted_and_listed_by_readyz(observed: Service) -> None:
    before = scrape(observed.url)
    search(observed, query="git rebase", categories=["flaky"], limit=3)
    after = scrape(observed.url)
    assert moved(before, after, "wisp_agent_searxng_engine_unresponsive_total", engine="localslow",
                 reason="timeout") >= 1
    assert moved(before, after, "wisp_agent_searxng_engine_unresponsive_total", engine="localerror",
                 reason="HTTP error") >= 1
    assert moved(before, after, "wisp_agent_degradations_total", cause="engines_unresponsive") == 1
    ready = httpx.get(f"{observed.url}/readyz", timeout=10)
    assert ready.status_code == 200
    engines = ready.json()["engines"]
    assert "localflaky" in engines["answering"]
    assert {"localslow", "localerror"} <= set(engines["unresponsive"])
    assert engines["engines"]["localslow"]["last_reason"] == "timeout" and engines["answers"] >= 1


def test_a_failed_source_is_a_degradation_by_cause(observed: Service) -> None:
    before = scrape(observed.url)
    search(observed, query="git rebase", sources=["web", {"type": "broken"}], limit=2)
    after = scrape(observed.url)
    assert moved(before, after, "wisp_agent_degradations_total", cause="source_failed") == 1


def test_unmatched_paths_never_become_labels(observed: Service) -> None:
    before = scrape(observed.url)
    assert httpx.get(f"{observed.url}/no/such/page-12345", timeout=10).status_code == 404
    after = scrape(observed.url)
    assert moved(before, after, "wisp_agent_requests_total", route="unmatched", method="GET", mode="",
                 status="404") == 1
    assert not [key for key in after if any("page-12345" in value for _, value in key[1])]


def test_readyz_is_503_when_searxng_does_not_answer(broken_agents: dict[str, str]) -> None:
    ready = httpx.get(f"{broken_agents['down']}/readyz", timeout=10)
    assert ready.status_code == 503 and ready.json()["engines"]["answers"] == 0


def test_every_line_both_services_wrote_is_a_json_object(observed: Service, semantic: Service) -> None:
    search(observed, query="sqlite locking", limit=3, retrieval_mode="hybrid")
    for service in (observed, semantic):
        for line in service.log_path.read_text().splitlines():
            assert isinstance(json.loads(line), dict), f"{service.name}: {line}"
