"""semantic and hybrid modes end to end: real searx, the offline web fetched and extracted, real semantic-svc."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest
from firecrawl import Firecrawl
from test_sdk_js import run_js

from agent.config import Settings

QUERY = "git squash last few commits into one"
SETTINGS = Settings()  # what the services read too: the same environment and working directory
UNANSWERABLE = "terraform import existing aws resource into state file"  # the offline web has no Terraform docs


def search(url: str, **body: object) -> dict:
    response = httpx.post(url + "/v2/search", json=body, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def page(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


@pytest.fixture(scope="module")
def semantic_body(ranked_agents: dict[str, str]) -> dict:
    return search(ranked_agents["ranked"], query=QUERY, limit=5, retrieval_mode="semantic", explain=True)


@pytest.fixture(scope="module")
def hybrid_body(ranked_agents: dict[str, str]) -> dict:
    return search(ranked_agents["ranked"], query=QUERY, limit=5, retrieval_mode="hybrid", explain=True)


def test_semantic_mode_scores_fetched_content_and_prunes_by_margin(semantic_body: dict) -> None:
    web, explain = semantic_body["data"]["web"], semantic_body["explain"]
    assert web and all(isinstance(w["score"], float) and w["evidence"] in ("page", "snippet") for w in web)
    assert {"searxng", "embed", "fetch", "extract", "bm25", "pack"} <= set(semantic_body["timings_ms"])
    fetched = [e for e in explain if e["fetch"] == "ok"]
    assert len(fetched) == SETTINGS.ranking.fetch_top and all(e["content_chars"] > 0 for e in fetched)
    top = max(e["probability"] for e in explain)  # pruned by the probability of relevance, not the raw cosine
    for row in explain:
        kept = top - row["probability"] <= SETTINGS.ranking.relevance_margin
        assert row["decision"] == ("kept" if kept else "pruned"), row
    kept_urls = {e["url"] for e in explain if e["decision"] == "kept"}
    assert {w["url"] for w in web} <= kept_urls
    assert "git-scm.com/docs/git-rebase.html" in [page(w["url"]) for w in web]
    assert semantic_body["context"].startswith("[1] ")


def test_hybrid_mode_reranks_passages_and_packs_the_context(hybrid_body: dict) -> None:
    web = hybrid_body["data"]["web"]
    assert page(web[0]["url"]) in ("git-scm.com/docs/git-rebase.html", "git-scm.com/docs/git-commit.html")
    assert "git-scm.com/docs/git-rebase.html" in [page(w["url"]) for w in web[:2]]
    assert all(w["passages"] and w["score"] == max(p["score"] for p in w["passages"]) for w in web)
    assert {"searxng", "fetch", "extract", "bm25", "rerank", "pack"} <= set(hybrid_body["timings_ms"])
    context = hybrid_body["context"]
    blocks = re.findall(r"^\[(\d+)\] ", context, re.MULTILINE)
    assert blocks and max(blocks.count(n) for n in set(blocks)) <= SETTINGS.ranking.pack_per_url
    texts = [block.split("\n", 1)[1] for block in re.split(r"\n\n(?=\[\d+\] )", context)]
    assert sum(map(len, texts)) <= SETTINGS.ranking.pack_chars
    assert set(texts) <= {p["text"] for w in web for p in w["passages"]}  # it packs what the results show
    decisions = {e["decision"] for e in hybrid_body["explain"]}
    assert decisions <= {"kept", "pruned"} and "pruned" in decisions
    # a fair look: every candidate, fetched or not, was scored
    assert all(e["score"] is not None for e in hybrid_body["explain"])


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_query_nothing_answers_abstains_and_one_that_is_answered_does_not(ranked_agents: dict[str, str],
                                                                           mode: str) -> None:
    body = search(ranked_agents["ranked"], query=UNANSWERABLE, limit=5, retrieval_mode=mode, explain=True)
    assert body["abstained"] is True and body["data"]["web"] == [] and body["context"] == ""
    assert "no passage reaches the relevance floor" in body["warning"]
    best = max(e["probability"] for e in body["explain"] if e["probability"] is not None)
    assert best < SETTINGS.ranking.relevance_floor
    answered = search(ranked_agents["ranked"], query=QUERY, limit=5, retrieval_mode=mode)
    assert "abstained" not in answered and answered["data"]["web"]
    assert all(0 <= w["probability"] <= 1 for w in answered["data"]["web"])
    assert max(w["probability"] for w in answered["data"]["web"]) >= SETTINGS.ranking.relevance_floor


def test_results_keep_firecrawl_shape(hybrid_body: dict) -> None:
    item = hybrid_body["data"]["web"][0]
    assert {"url", "title", "description", "position"} <= set(item)
    assert not {"markdown", "html", "rawHtml", "links"} & set(item)  # no content keys unless formats ask


def test_semantic_svc_down_ranks_the_fetched_pages_by_the_first_pass(ranked_agents: dict[str, str]) -> None:
    for mode in ("semantic", "hybrid"):
        body = search(ranked_agents["no-semantic"], query=QUERY, limit=5, retrieval_mode=mode, explain=True)
        assert "semantic-svc failed (semantic-svc is unreachable" in body["warning"]
        assert "ranked by a first pass (BM25 and page features)" in body["warning"]
        assert "git-scm.com/docs/git-rebase.html" in [page(w["url"]) for w in body["data"]["web"]]
        assert {e["reason"] for e in body["explain"] if e["decision"] == "kept"} == {"first pass (BM25)"}
        assert body["context"].startswith("[1] ") and "first_pass" in body["timings_ms"]


def test_every_fetch_failing_falls_back_to_snippets(ranked_agents: dict[str, str]) -> None:
    body = search(ranked_agents["closed-fetch"], query=QUERY, limit=5, retrieval_mode="hybrid")
    web = body["data"]["web"]
    assert web and {w["evidence"] for w in web} == {"snippet"}
    assert "8 of 8 pages used their SearXNG snippet instead" in body["warning"]
    assert "blocked: 127.0.0.1 resolves to 127.0.0.1, a non-public address" in body["warning"]


def test_formats_on_a_ranked_mode(ranked_agents: dict[str, str]) -> None:
    body = search(ranked_agents["ranked"], query=QUERY, limit=3, retrieval_mode="hybrid",
                  scrapeOptions={"formats": ["markdown", "links", "rawHtml", "html"], "onlyMainContent": True})
    for item in body["data"]["web"]:
        assert item["markdown"] and item["rawHtml"].startswith("<") and "<p>" in item["html"]
        assert all(link.startswith("http") for link in item["links"])
        metadata = item["metadata"]
        assert metadata["sourceURL"] == item["url"] and metadata["statusCode"] == 200 and metadata["title"]


def test_formats_on_keyword_mode_and_failures_keep_the_item(ranked_agents: dict[str, str]) -> None:
    ok = search(ranked_agents["ranked"], query="git rebase", limit=2, scrapeOptions={"formats": ["markdown"]})
    assert all(i["markdown"] and i["metadata"]["url"] == i["url"] for i in ok["data"]["web"])
    blocked = search(ranked_agents["closed-fetch"], query="git rebase", limit=2,
                     scrapeOptions={"formats": ["markdown"]})
    for item in blocked["data"]["web"]:
        assert "markdown" not in item and item["metadata"]["statusCode"] == 403
        assert item["metadata"]["error"].startswith("blocked:") and item["url"] == item["metadata"]["sourceURL"]


def test_whole_body_when_only_main_content_is_off(ranked_agents: dict[str, str]) -> None:
    main = search(ranked_agents["ranked"], query="git rebase", limit=1, scrapeOptions={"formats": ["markdown"]})
    whole = search(ranked_agents["ranked"], query="git rebase", limit=1,
                   scrapeOptions={"formats": ["markdown"], "onlyMainContent": False})
    # git-scm's page footer is boilerplate: trafilatura drops it from the main content
    assert "Last updated" in whole["data"]["web"][0]["markdown"]
    assert "Last updated" not in main["data"]["web"][0]["markdown"]


def test_recency_weighs_in_for_time_sensitive_queries_only(ranked_agents: dict[str, str]) -> None:
    plain = search(ranked_agents["ranked"], query="sqlite release", limit=5, retrieval_mode="semantic")
    recent = search(ranked_agents["ranked"], query="latest sqlite release", limit=5, retrieval_mode="semantic")
    assert "fresher pages were weighted up" not in plain.get("warning", "")
    assert "fresher pages were weighted up" in recent["warning"]


def test_fetch_top_is_a_request_parameter(ranked_agents: dict[str, str]) -> None:
    body = search(ranked_agents["ranked"], query=QUERY, limit=3, retrieval_mode="hybrid", fetch_top=2, explain=True)
    assert sum(e["fetch"] == "ok" for e in body["explain"]) == 2
    too_many = httpx.post(ranked_agents["ranked"] + "/v2/search", json={"query": "q", "fetch_top": 13})
    assert too_many.status_code == 400


def test_sdks_parse_ranked_responses(ranked_agents: dict[str, str]) -> None:
    url = ranked_agents["hybrid-default"]  # the SDKs cannot send retrieval_mode; the service default applies
    results = Firecrawl(api_url=url).search(QUERY, limit=3)
    assert results.web and results.web[0].url.endswith(".html")
    scraped = Firecrawl(api_url=url).search(QUERY, limit=2, scrape_options={"formats": ["markdown"]})
    assert scraped.web[0].markdown and scraped.web[0].metadata.source_url.endswith(".html")
    [js, js_scraped] = run_js(url, {"client": "v2", "query": QUERY, "options": {"limit": 3}},
                              {"client": "v2", "query": QUERY,
                               "options": {"limit": 2, "scrapeOptions": {"formats": ["markdown", "links"]}}})
    assert js["ok"] and js["result"]["web"][0]["passages"] and js["result"]["web"][0]["score"]
    assert js_scraped["ok"] and all(w["markdown"] and w["metadata"]["statusCode"] == 200
                                    for w in js_scraped["result"]["web"])
