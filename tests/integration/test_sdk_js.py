"""The real @mendable/firecrawl-js (4.42.0), run with node, against agent-svc."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent.parent / "sdk_js" / "call.mjs"


def call_js(api_url: str, *calls: dict, timeout_s: float = 240, api_key: str = "") -> list[dict]:
    """Each call is {client?: v2|v1, method, args}; returns what the SDK returned or raised, per call."""
    env = {**os.environ, "FIRECRAWL_API_KEY": api_key}  # both clients' apiKey (v2 reads it itself)
    done = subprocess.run(["node", str(SCRIPT), api_url, json.dumps(calls)], capture_output=True, text=True,
                          timeout=timeout_s, check=True, env=env)
    return json.loads(done.stdout)


def run_js(api_url: str, *searches: dict) -> list[dict]:
    """Each search is {client: v2|v1, query, options}."""
    return call_js(api_url, *({"client": s["client"], "method": "search", "args": [s["query"], s.get("options", {})]}
                              for s in searches))


def test_v2_search_with_mixed_arrays_and_every_bucket(agent_url: str) -> None:
    [plain, mixed] = run_js(
        agent_url,
        {"client": "v2", "query": "sqlite wal checkpoint", "options": {"limit": 3}},
        # the JS SDK passes arrays verbatim, so string and object items can mix
        {"client": "v2", "query": "sqlite release atomic commit",
         "options": {"sources": ["web", {"type": "news"}, "images"], "categories": ["github", {"type": "research"}],
                     "limit": 2, "tbs": "qdr:y", "scrapeOptions": {"formats": ["markdown"]}}},
    )
    assert plain["ok"] and [w["position"] for w in plain["result"]["web"]] == [1, 2, 3]
    assert mixed["ok"], mixed
    result = mixed["result"]
    assert set(result) >= {"web", "news", "images"}
    assert result["news"] == []  # nothing in the corpus is from the last year
    assert len(result["images"]) == 2 and isinstance(result["images"][0]["imageWidth"], int)


def test_news_items_carry_dates(agent_url: str) -> None:
    [outcome] = run_js(agent_url, {"client": "v2", "query": "sqlite release", "options": {"sources": ["news"]}})
    news = outcome["result"]["news"]
    assert len(news) == 10 and all(n["date"].startswith("20") and n["snippet"] for n in news)


def test_v1_search(agent_url: str) -> None:
    [outcome] = run_js(agent_url, {"client": "v1", "query": "git rebase", "options": {}})
    assert outcome["ok"] and outcome["result"]["success"]
    assert len(outcome["result"]["data"]) == 5  # the JS v1 client sends limit 5


@pytest.mark.parametrize(("limit", "status"), [(0, None), (101, 400)])
def test_out_of_range_limits(agent_url: str, limit: int, status: int | None) -> None:
    [outcome] = run_js(agent_url, {"client": "v2", "query": "git", "options": {"limit": limit}})
    assert not outcome["ok"]
    if status is None:
        assert "limit must be positive" in outcome["error"]["message"]  # refused by the SDK itself
    else:
        assert outcome["error"]["status"] == 400 and outcome["error"]["message"] == "Invalid request body"


@pytest.mark.parametrize(
    ("which", "fragment"),
    [("down", "SearXNG is unreachable"), ("json-disabled", "the JSON format is disabled")],
)
def test_searxng_failures(broken_agents: dict[str, str], which: str, fragment: str) -> None:
    [outcome] = run_js(broken_agents[which], {"client": "v2", "query": "git", "options": {}})
    assert not outcome["ok"] and outcome["error"]["status"] == 502
    assert fragment in outcome["error"]["message"]
