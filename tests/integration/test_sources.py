"""Extra candidate sources (SEARCH_SOURCES) on a real agent-svc, a real searx over the offline web and the real
semantic-svc: a source with text joins a ranked search (its passages reranked, never fetched, no duplicate, named
in `explain` and as the result's `engine`); a second Wisp is a Tavily and a Firecrawl source, a second searx a
SearXNG one; a 402 parks a tier, a 429 backs it off, and replicas on one Redis share that; a source that hangs,
drips, floods or answers garbage never holds a search past its bound. The hosted API is the one stand-in
(tests/source_stub.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from offline_web.processes import Service
from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service
from tests.source_stub import SourceStub, StubResult, source_stub

QUERY = "git squash last few commits into one"
KEY = "stub-key-5f3a9c"
ONLY_THERE = "http://stub-only.invalid/squash-guide"  # never resolves: fetched, it would fail
SQUASH_TEXT = ("# Squashing commits\n\nTo squash the last few commits into one, run git rebase -i HEAD~3 and mark "
               "every commit but the first as squash (s). Git then combines them into one commit and lets you edit "
               "the combined commit message. git reset --soft HEAD~3 followed by git commit does the same.")
BOUND_S = 2.0


def sources(stub: SourceStub, name: str = "stub", **extra: object) -> str:
    tiers = [{"name": "keyed", "url": stub.url, "key": KEY}]
    return json.dumps([{"name": name, "kind": "exa", "tiers": tiers, "max_results": 5, **extra}])


def search(url: str, **body: object) -> dict:
    response = httpx.post(url + "/v2/search", json={"query": QUERY, "limit": 5, **body}, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def stub(stack: OfflineStack) -> Iterator[SourceStub]:
    searx_first = httpx.get(stack.searx.url + "/search", params={"q": QUERY, "format": "json"}, timeout=30)
    shared = searx_first.json()["results"][0]["url"]  # a page SearXNG finds too
    with source_stub([StubResult(ONLY_THERE, "How to squash commits", SQUASH_TEXT),
                      StubResult(shared, "the same page", "git rebase docs as the stub read them")]) as running:
        yield running


@pytest.fixture(scope="module")
def with_stub(stack: OfflineStack, semantic_url: str, stub: SourceStub, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[Service]:
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("sources"), "agent-sources",
                       SEMANTIC_SVC_URL=semantic_url, FETCH_ALLOW_HOSTS="127.0.0.1", SEARCH_SOURCES=sources(stub),
                       SOURCES_TIMEOUT_S=str(BOUND_S)) as agent:
        yield agent


def test_a_source_with_text_is_reranked_with_searxngs_results(with_stub: Service, stub: SourceStub) -> None:
    stub.mode = "results"
    body = search(with_stub.url, retrieval_mode="hybrid", explain=True)
    rows = {row["url"]: row for row in body["explain"]}
    only_there = rows[ONLY_THERE]
    assert only_there["found_by"] == ["stub"] and only_there["fetch"] == "supplied"
    assert only_there["score"] is not None and only_there["probability"] is not None
    shared = next(r for r in body["explain"] if r["found_by"] == ["searxng", "stub"])
    assert shared["fetch"] == "supplied"  # the source's text: not fetched again
    assert any(r["found_by"] == ["searxng"] and r["fetch"] == "ok" for r in body["explain"])
    web = body["data"]["web"]
    assert len({r["url"] for r in web}) == len(web)
    assert len({r["url"] for r in body["explain"]}) == len(body["explain"])
    first = web[0]
    assert first["url"] == ONLY_THERE and first["engine"] == "stub" and first["evidence"] == "page"
    assert "git rebase -i HEAD~3" in body["context"]
    assert stub.calls[-1]["key"] == KEY and stub.calls[-1]["body"]["contents"]["text"]
    assert "warning" not in body or "stub" not in body["warning"]
    assert KEY not in with_stub.log_path.read_text()


def test_keyword_mode_takes_the_sources_results_in_turn(with_stub: Service, stub: SourceStub) -> None:
    stub.mode = "results"
    web = search(with_stub.url, limit=4)["data"]["web"]
    assert web[1]["url"] == ONLY_THERE and web[1]["engine"] == "stub"
    assert "engine" not in web[0]


@pytest.fixture
def faulty(stack: OfflineStack, tmp_path: Path) -> Iterator[tuple[SourceStub, str]]:
    """A fresh agent (its tiers never held) in front of a stub that misbehaves as the test says."""
    with source_stub([StubResult(ONLY_THERE, "How to squash commits", SQUASH_TEXT)]) as misbehaving, \
            agent_service(stack.searx.url, tmp_path, "agent-faulty", SEARCH_SOURCES=sources(misbehaving),
                          SOURCES_TIMEOUT_S=str(BOUND_S)) as agent:
        yield misbehaving, agent.url


@pytest.mark.parametrize("mode", ["hang", "drip", "flood", "html", "not-a-list", "500", "429", "401"])
def test_a_failing_source_is_bounded_backed_off_and_said(faulty: tuple[SourceStub, str], mode: str) -> None:
    misbehaving, agent = faulty
    misbehaving.mode = mode
    forgiven = 1 if mode in ("hang", "drip") else 0  # a timeout backs off when the call before failed too
    for said in ["timed out"] * forgiven + ["backed off until"]:
        started = time.monotonic()
        body = search(agent)
        assert time.monotonic() - started < BOUND_S + 2.5  # SearXNG's own time, plus the bound at most
        assert body["data"]["web"] and all("engine" not in r for r in body["data"]["web"])
        assert f"extra source stub gave nothing (keyed {said}" in body["warning"]
    again = search(agent)
    assert misbehaving.called == 1 + forgiven  # backed off: not called again
    assert "keyed backed off until" in again["warning"]
    tier = httpx.get(agent + "/readyz").json()["sources"]["stub"]["tiers"][0]
    assert tier["state"] == "backoff" and tier["failures"] == 1 + forgiven
    until = time.mktime(time.strptime(tier["until"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
    assert 14 * 60 < until - time.time() <= 15 * 60


@pytest.mark.parametrize("mode", ["402", "in-band-402"])
def test_out_of_credit_parks_the_tier_until_the_first(faulty: tuple[SourceStub, str], mode: str) -> None:
    misbehaving, agent = faulty
    misbehaving.mode = mode
    body = search(agent)
    assert "extra source stub gave nothing (keyed parked until" in body["warning"]
    search(agent)
    assert misbehaving.called == 1
    tier = httpx.get(agent + "/readyz").json()["sources"]["stub"]["tiers"][0]
    assert tier["state"] == "parked" and tier["until"].endswith("-01T00:00:00+00:00")
    metrics = httpx.get(agent + "/metrics").text
    assert 'wisp_agent_source_tier_state{source="stub",state="parked",tier="keyed"} 1.0' in metrics
    assert 'wisp_agent_source_calls_total{outcome="credit",source="stub",tier="keyed"} 1.0' in metrics


def test_the_next_tier_answers_when_the_first_is_parked(stack: OfflineStack, tmp_path: Path) -> None:
    with source_stub([]) as broke, source_stub([StubResult(ONLY_THERE, "How to squash", SQUASH_TEXT)]) as free:
        broke.mode = "402"
        tiers = [{"name": "keyed", "url": broke.url, "key": KEY}, {"name": "free", "url": free.url}]
        config = json.dumps([{"name": "stub", "kind": "exa", "tiers": tiers}])
        with agent_service(stack.searx.url, tmp_path, "agent-tiers", SEARCH_SOURCES=config) as agent:
            for _ in range(2):
                web = search(agent.url, limit=4)["data"]["web"]
                assert ONLY_THERE in [r["url"] for r in web]
            assert (broke.called, free.called) == (1, 2)
            assert free.calls[0]["key"] is None


def test_replicas_on_one_redis_share_the_routing(stack: OfflineStack, redis_url: str, tmp_path: Path) -> None:
    with source_stub([]) as limited:
        limited.mode = "429"
        config = sources(limited)
        with agent_service(stack.searx.url, tmp_path, "agent-one", SEARCH_SOURCES=config, REDIS_URL=redis_url) as one, \
                agent_service(stack.searx.url, tmp_path, "agent-two", SEARCH_SOURCES=config,
                              REDIS_URL=redis_url) as two:
            search(one.url)
            body = search(two.url)
            assert limited.called == 1 and "keyed backed off until" in body["warning"]
            tier = httpx.get(two.url + "/readyz").json()["sources"]["stub"]["tiers"][0]
            assert tier["state"] == "backoff" and tier["calls_today"] == 1


def test_a_second_wisp_is_a_tavily_and_a_firecrawl_source_and_a_second_searx_a_searxng_one(
        stack: OfflineStack, fetching_agent: str, semantic_url: str, tmp_path: Path) -> None:
    config = json.dumps([{"name": "wisp2", "kind": "tavily", "tiers": [{"name": "lan", "url": fetching_agent}],
                          "max_results": 3},
                         {"name": "wisp3", "kind": "firecrawl", "tiers": [{"name": "lan", "url": fetching_agent}],
                          "max_results": 3},
                         {"name": "searx2", "kind": "searxng", "tiers": [{"name": "lan", "url": stack.searx.url}]}])
    with agent_service(stack.searx.url, tmp_path, "agent-chained", SEARCH_SOURCES=config, SEMANTIC_SVC_URL=semantic_url,
                       FETCH_ALLOW_HOSTS="127.0.0.1", SOURCES_TIMEOUT_S="8") as agent:
        body = search(agent.url, retrieval_mode="hybrid", explain=True)
    rows = body["explain"]
    assert "warning" not in body or "extra source" not in body["warning"], body.get("warning")
    for name in ("wisp2", "wisp3"):  # raw_content, markdown: the second Wisp's scrape
        found = [r for r in rows if name in r["found_by"]]
        assert found and all(r["fetch"] == "supplied" for r in found), name
    assert any(r["found_by"][:2] == ["searxng", "searx2"] or r["found_by"][:2] == ["searxng", "wisp2"] for r in rows)
    assert len({r["url"] for r in rows}) == len(rows)
