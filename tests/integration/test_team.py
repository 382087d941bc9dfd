"""Firecrawl's team endpoints on a real agent-svc with two keys: firecrawl-py (v2 sync and async, v1) and
firecrawl-js (v2, v1) parse them, and what they count is each key's own work since start."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp
from firecrawl.v2.utils.error_handler import UnauthorizedError

from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service
from tests.integration.test_sdk_js import call_js
from tests.waiting import until_sync

KEY = "wisp-team-key-Vb7Nq2Lx9Tz4Rk6Ps"
OTHER = "wisp-other-key-Ha3Dm8Wc1Fy5Gj0Ue"
NO_LIMIT = 99_999_999
CAP = 3


@pytest.fixture(scope="module")
def team_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("team"), "agent-team", API_KEYS=f"{KEY},{OTHER}",
                       RANKED_CONCURRENCY_PER_KEY=str(CAP), FETCH_ALLOW_HOSTS="127.0.0.1") as agent:
        yield agent.url


def credits_used(url: str, key: str) -> int:
    body = httpx.get(f"{url}/v2/team/credit-usage", headers={"Authorization": f"Bearer {key}"}).json()
    return body["data"]["creditsUsed"]


def test_credits_count_a_keys_successful_work_and_nothing_else(team_agent: str, stack: OfflineStack) -> None:
    before, others = credits_used(team_agent, KEY), credits_used(team_agent, OTHER)
    app = Firecrawl(api_url=team_agent, api_key=KEY)
    app.search("sqlite wal checkpoint", limit=2)
    app.scrape(f"{stack.web.url}/www.sqlite.org/wal.html")
    headers = {"Authorization": f"Bearer {KEY}"}
    assert httpx.post(f"{team_agent}/v2/search", json={"query": ""}, headers=headers).status_code == 400
    assert httpx.get(f"{team_agent}/v2/crawl/active", headers=headers).status_code == 200  # a read starts no work
    assert credits_used(team_agent, KEY) == before + 2
    assert credits_used(team_agent, OTHER) == others


def test_firecrawl_py_parses_credit_and_token_usage(team_agent: str) -> None:
    app = Firecrawl(api_url=team_agent, api_key=KEY)
    credits, tokens = app.get_credit_usage(), app.get_token_usage()
    assert credits.remaining_credits == tokens.remaining_tokens == NO_LIMIT
    assert credits.plan_credits is None and credits.billing_period_end is None
    started = datetime.fromisoformat(credits.billing_period_start)  # when agent-svc started: the counts' start
    assert 0 < time.time() - started.timestamp() < 3600
    assert tokens.billing_period_start == credits.billing_period_start
    historical = app.v2.get_credit_usage_historical(by_api_key=True)
    [period] = historical.periods
    assert period.apiKey and period.apiKey.startswith("key:") and KEY not in period.apiKey
    assert period.creditsUsed == credits_used(team_agent, KEY)
    assert app.v2.get_token_usage_historical().periods == []  # Wisp does not meter the LLM's tokens


def test_firecrawl_py_async_and_v1_parse_usage(team_agent: str) -> None:
    async def usage() -> tuple:
        app = AsyncFirecrawl(api_url=team_agent, api_key=KEY)
        return await app.get_credit_usage(), await app.get_token_usage(), await app.get_concurrency()

    credits, tokens, concurrency = asyncio.run(usage())
    assert credits.remaining_credits == tokens.remaining_tokens == NO_LIMIT
    assert (concurrency.concurrency, concurrency.max_concurrency) == (0, CAP)
    v1 = V1FirecrawlApp(api_url=team_agent, api_key=KEY)
    assert v1.get_credit_usage().data.remaining_credits == v1.get_token_usage().data.remaining_tokens == NO_LIMIT


def test_concurrency_counts_the_keys_requests_in_flight(team_agent: str) -> None:
    app = Firecrawl(api_url=team_agent, api_key=KEY)
    # a page that never answers keeps one scrape in flight (its timeout is a minute) until the test closes it
    silent = socket.create_server(("127.0.0.1", 0))
    hanging = threading.Thread(target=lambda: httpx.post(
        f"{team_agent}/v2/scrape", json={"url": f"http://127.0.0.1:{silent.getsockname()[1]}/", "timeout": 60_000},
        headers={"Authorization": f"Bearer {KEY}"}, timeout=120))
    hanging.start()
    try:
        until_sync(lambda: app.get_concurrency().concurrency > 0, "the hanging scrape counted")
        check = app.get_concurrency()
        queue = app.v2.get_queue_status()
        others = Firecrawl(api_url=team_agent, api_key=OTHER).get_concurrency()
    finally:
        silent.close()  # the connection waiting in its backlog is reset: the scrape ends at once
        hanging.join()
    assert (check.concurrency, check.max_concurrency) == (1, CAP)
    assert (queue.active_jobs_in_queue, queue.waiting_jobs_in_queue, queue.max_concurrency) == (1, 0, CAP)
    assert others.concurrency == 0
    until_sync(lambda: app.get_concurrency().concurrency == 0, "the scrape's slot freed once it ended")


def test_firecrawl_js_parses_usage_through_both_clients(team_agent: str) -> None:
    credits, tokens, concurrency, queue, v1_credits, v1_tokens = call_js(
        team_agent, {"method": "getCreditUsage"}, {"method": "getTokenUsage"}, {"method": "getConcurrency"},
        {"method": "getQueueStatus"}, {"client": "v1", "method": "getCreditUsage"},
        {"client": "v1", "method": "getTokenUsage"}, api_key=KEY)
    assert credits["ok"] and credits["result"]["remainingCredits"] == NO_LIMIT, credits
    assert credits["result"]["billingPeriodStart"].endswith("Z")
    assert "planCredits" not in credits["result"]  # null, no plan: the SDK leaves it undefined
    assert tokens["ok"] and tokens["result"]["remainingTokens"] == NO_LIMIT
    assert concurrency == {"ok": True, "result": {"concurrency": 0, "maxConcurrency": CAP}}
    assert queue["ok"] and queue["result"]["maxConcurrency"] == CAP and queue["result"]["jobsInQueue"] == 0
    assert v1_credits["ok"] and v1_credits["result"]["data"]["remaining_credits"] == NO_LIMIT
    assert v1_tokens["ok"] and v1_tokens["result"]["data"]["remaining_tokens"] == NO_LIMIT


def test_usage_needs_a_key(team_agent: str) -> None:
    with pytest.raises(UnauthorizedError):
        Firecrawl(api_url=team_agent, api_key="not-a-key-of-this-service").get_credit_usage()
    response = httpx.get(f"{team_agent}/v2/concurrency-check")
    assert response.status_code == 401 and response.json() == {"success": False, "error": "Unauthorized"}


def test_a_scrape_is_found_again_by_its_id_by_its_own_key_only(team_agent: str, stack: OfflineStack) -> None:
    doc = Firecrawl(api_url=team_agent, api_key=KEY).scrape(f"{stack.web.url}/www.sqlite.org/wal.html")
    path = f"{team_agent}/v2/scrape/{doc.metadata.scrape_id}"
    mine = httpx.get(path, headers={"Authorization": f"Bearer {KEY}"})
    assert mine.status_code == 200 and mine.json()["data"]["markdown"] == doc.markdown
    theirs = httpx.get(path, headers={"Authorization": f"Bearer {OTHER}"})
    assert theirs.status_code == 403
    assert theirs.json() == {"success": False, "error": "You are not allowed to access this resource."}
