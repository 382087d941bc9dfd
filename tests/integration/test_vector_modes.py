"""The vector and hybrid_vector modes, /v2/similar and the index API, on pages crawled from the offline web."""

from __future__ import annotations

import time

import httpx

from agent.config import Settings
from offline_web.processes import free_port
from offline_web.stack import OfflineStack
from tests.integration.conftest import finished_crawl, index_agent_service

ON_TOPIC = "checkpoint the write-ahead log"
OFF_TOPIC = "chocolate cake recipe with buttercream frosting"


def search(agent_url: str, **body: object) -> dict:
    response = httpx.post(agent_url + "/v2/search", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def drained_stats(agent_url: str, timeout_s: float = 600) -> dict:
    """/v2/index/stats once the organic ingest's backlog is empty, however slow a loaded machine embeds (the
    bound only stops a hang). A search queues its pages for the ingest before it answers, so after the answer
    an empty backlog means that every page it queued is indexed (or failed)."""
    deadline = time.monotonic() + timeout_s
    # a generous read timeout too: semantic-svc answers stats slowly while a loaded machine indexes
    while (stats := httpx.get(agent_url + "/v2/index/stats", timeout=120).json())["ingesting"]:
        assert time.monotonic() < deadline, f"organic ingest still busy after {timeout_s} s: {stats}"
        time.sleep(0.5)
    return stats


def test_vector_mode_answers_from_the_index_with_scores(crawled: dict, index_agent: str) -> None:
    result = search(index_agent, query=ON_TOPIC, retrieval_mode="vector", limit=5)
    web = result["data"]["web"]
    crawled_urls = {d["metadata"]["url"] for d in crawled["data"]}
    assert web and {r["url"] for r in web} <= crawled_urls and len({r["url"] for r in web}) == len(web)
    # BM25 fused with the cosine may put pragma.html first, whose PRAGMA wal_checkpoint says the words many times
    assert any(r["url"].endswith("/www.sqlite.org/wal.html") for r in web[:2])
    # ordered by the fusion of cosine and BM25, each scored by its cosine; the best one clears the floor
    floor = Settings().semantic.vector_floor
    assert max(r["score"] for r in web) >= floor and all(r["evidence"] == "index" for r in web)
    assert web[0]["description"] == web[0]["passages"][0]["text"] and "index" in result["timings_ms"]
    assert "checkpoint" in result["context"].lower()


def test_the_floor_drops_an_off_topic_query(crawled: dict, index_agent: str) -> None:
    result = search(index_agent, query=OFF_TOPIC, retrieval_mode="vector")
    floor = Settings().semantic.vector_floor
    assert result["data"]["web"] == [] and f"relevance floor (VECTOR_FLOOR {floor})" in result["warning"]


def test_hybrid_vector_without_rerank_merges_searxng_and_the_index(crawled: dict, index_agent: str,
                                                                   stack: OfflineStack) -> None:
    result = search(index_agent, query="sqlite wal checkpoint", retrieval_mode="hybrid_vector", rerank=False, limit=8)
    web = result["data"]["web"]
    urls = [r["url"] for r in web]
    assert len(set(urls)) == len(urls) == 8 and "could not answer" not in result.get("warning", "")
    assert any(r["evidence"] == "index" for r in web)  # found by the index: its chunk is the evidence
    assert any(r["evidence"] == "snippet" for r in web)  # found by SearXNG alone
    rank_scores = [r["rank_score"] for r in web]
    assert rank_scores == sorted(rank_scores, reverse=True)  # in the merged order
    assert result["context"].startswith("[1] ")
    assert {"index", "searxng"} <= set(result["timings_ms"]) and "rerank" not in result["timings_ms"]


def test_hybrid_vector_reranks_the_merged_pool_by_default(crawled: dict, index_agent: str) -> None:
    result = search(index_agent, query="sqlite wal checkpoint", retrieval_mode="hybrid_vector", limit=5)
    web = result["data"]["web"]
    assert web and all(isinstance(r["score"], float) for r in web) and "rerank" in result["timings_ms"]
    assert {"index", "searxng"} <= set(result["timings_ms"])


def test_off_topic_pages_stay_out_of_hybrid_vector(crawled: dict, index_agent: str) -> None:
    result = search(index_agent, query=OFF_TOPIC, retrieval_mode="hybrid_vector")
    assert not [r for r in result["data"]["web"] if r.get("evidence") == "index"]


def test_similar_pages_to_a_crawled_page(crawled: dict, index_agent: str, stack: OfflineStack) -> None:
    seed = f"{stack.web.url}/www.sqlite.org/wal.html"
    response = httpx.post(index_agent + "/v2/similar", json={"url": seed, "limit": 5}, timeout=60)
    assert response.status_code == 200, response.text
    web = response.json()["data"]["web"]
    assert 0 < len(web) <= 5 and seed not in {r["url"] for r in web}
    scores = [r["score"] for r in web]
    assert scores == sorted(scores, reverse=True)
    assert sum("sqlite.org" in r["url"] for r in web) >= 3  # pages like a SQLite page are SQLite pages


def test_similar_refuses_a_seed_it_cannot_read(index_agent: str, stack: OfflineStack) -> None:
    response = httpx.post(index_agent + "/v2/similar", json={"url": f"{stack.web.url}/_test/status/404"}, timeout=60)
    assert response.status_code == 422 and "HTTP 404" in response.json()["error"]


def test_delete_by_host_leaves_other_hosts(index_agent: str, stack: OfflineStack) -> None:
    # the same offline web under two host names: localhost's pages go, 127.0.0.1's stay
    other = stack.web.url.replace("127.0.0.1", "localhost")
    pages = [f"{other}/git-scm.com/docs/git-merge.html", f"{other}/git-scm.com/docs/git-rebase.html"]
    body = {"url": pages[0], "urls": pages[1:], "maxDiscoveryDepth": 0}
    job = httpx.post(index_agent + "/v2/crawl", json=body).json()
    assert finished_crawl(index_agent, job["id"])["index"]["indexed"] == 2
    before = httpx.get(index_agent + "/v2/index/stats").json()
    deleted = httpx.post(index_agent + "/v2/index/delete", json={"host": "localhost"}).json()
    after = httpx.get(index_agent + "/v2/index/stats").json()
    assert deleted["deletedChunks"] > 0 and after["chunks"] == before["chunks"] - deleted["deletedChunks"]
    assert after["documents"] == before["documents"] - 2
    found = search(index_agent, query="git rebase onto another branch", retrieval_mode="vector")["data"]["web"]
    assert not [r for r in found if r["url"].startswith(other)]


def test_the_index_api_refuses_bad_requests(index_agent: str) -> None:
    for body in ({}, {"url": "http://a.test/", "host": "a.test"}, {"host": ""}):
        response = httpx.post(index_agent + "/v2/index/delete", json=body)
        assert response.status_code == 400 and response.json()["success"] is False


def test_the_modes_degrade_when_the_index_is_down(stack: OfflineStack, tmp_path) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    with index_agent_service(stack, down, tmp_path, "agent-index-down", "none") as agent:
        vector = search(agent.url, query="sqlite wal", retrieval_mode="vector", limit=3)
        assert len(vector["data"]["web"]) == 3 and "keyword results from SearXNG instead" in vector["warning"]
        merged = search(agent.url, query="sqlite wal", retrieval_mode="hybrid_vector", limit=3)
        assert len(merged["data"]["web"]) == 3 and "SearXNG's results alone" in merged["warning"]
        stats = httpx.get(agent.url + "/v2/index/stats")
        assert stats.status_code == 502 and "unreachable" in stats.json()["error"]


def test_organic_ingest_indexes_the_pages_ranked_searches_fetch(stack: OfflineStack, semantic_url: str,
                                                                tmp_path) -> None:
    with index_agent_service(stack, semantic_url, tmp_path, "agent-organic", "organic", INDEX_ORGANIC="true") as agent:
        assert httpx.get(agent.url + "/v2/index/stats").json()["chunks"] == 0
        fetched = search(agent.url, query="sqlite wal checkpoint", retrieval_mode="hybrid", limit=3, explain=True)
        pages = {row["url"] for row in fetched["explain"] if row["fetch"] == "ok"}
        assert drained_stats(agent.url)["documents"] == len(pages)
        found = search(agent.url, query="sqlite wal checkpoint", retrieval_mode="vector")["data"]["web"]
        assert found and {r["url"] for r in found} <= pages


def test_organic_ingest_is_off_by_default(crawled: dict, index_agent: str) -> None:
    before = httpx.get(index_agent + "/v2/index/stats").json()
    fetched = search(index_agent, query="mkdocs theme configuration", retrieval_mode="hybrid", limit=3, explain=True)
    assert any(row["fetch"] == "ok" for row in fetched["explain"])  # pages that INDEX_ORGANIC would have indexed
    # the search hands its pages to the ingest before it answers, so once its backlog is empty any ingest it
    # started has finished: then nothing may have been indexed (a wait bounded only to stop a hang)
    assert drained_stats(index_agent)["documents"] == before["documents"]
