"""Three agent-svc replicas on one real redis-server, behind a real HAProxy (round-robin): a scrape made through the
balancer is found again by `GET /v2/scrape/{id}` on every replica, its owner's alone; the credits a key spends
through the balancer are counted once, and every replica reports the same count; Redis killed fails no scrape."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from offline_web.stack import OfflineStack, ScaledAgents, scaled_agents

KEY = "wisp-scaled-key-Qm4Tz8Hw2Ln6Vc0Rs"
OTHER = "wisp-scaled-other-Jd7Kx1Pf5Ga9Yb3Ue"
ENV = {"FETCH_ALLOW_HOSTS": "127.0.0.1", "API_KEYS": f"{KEY},{OTHER}"}


def as_key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def scaled(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScaledAgents]:
    with scaled_agents(stack.searx.url, tmp_path_factory.mktemp("scaled-state"), 3, ENV) as agents:
        yield agents


def scrape_through(agents: ScaledAgents, stack: OfflineStack, key: str = KEY) -> httpx.Response:
    return httpx.post(f"{agents.url}/v2/scrape", json={"url": f"{stack.web.url}/www.sqlite.org/wal.html"},
                      headers=as_key(key), timeout=60)


def scrapes_served(agents: ScaledAgents) -> list[float]:
    """The successful POST /v2/scrape each replica has answered, from its /metrics."""
    counts = []
    for replica in agents.replicas:
        lines = httpx.get(replica.url + "/metrics", headers=as_key(KEY)).text.splitlines()
        counts.append(sum(float(line.rsplit(" ", 1)[1]) for line in lines
                          if line.startswith("wisp_agent_requests_total{") and 'route="/v2/scrape"' in line
                          and 'method="POST"' in line and 'status="200"' in line))
    return counts


def credit_usage(replica_url: str) -> dict:
    response = httpx.get(f"{replica_url}/v2/team/credit-usage", headers=as_key(KEY))
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_a_scrape_through_the_balancer_is_found_on_every_replica_by_its_owner_alone(scaled: ScaledAgents,
                                                                                    stack: OfflineStack) -> None:
    scraped = scrape_through(scaled, stack)
    assert scraped.status_code == 200, scraped.text
    document = scraped.json()["data"]
    scrape_id = document["metadata"]["scrapeId"]
    for replica in scaled.replicas:
        mine = httpx.get(f"{replica.url}/v2/scrape/{scrape_id}", headers=as_key(KEY))
        assert mine.status_code == 200 and mine.json()["data"] == document, (replica.name, mine.text)
        theirs = httpx.get(f"{replica.url}/v2/scrape/{scrape_id}", headers=as_key(OTHER))
        assert theirs.status_code == 403, (replica.name, theirs.text)


def test_credits_spent_through_the_balancer_are_the_same_count_on_every_replica(scaled: ScaledAgents,
                                                                               stack: OfflineStack) -> None:
    before = [credit_usage(replica.url)["creditsUsed"] for replica in scaled.replicas]
    assert len(set(before)) == 1, before
    served_before, n = scrapes_served(scaled), 6
    for _ in range(n):
        assert scrape_through(scaled, stack).status_code == 200
    served = [after - then for after, then in zip(scrapes_served(scaled), served_before, strict=True)]
    assert sum(served) == n and all(served), served  # each replica answered some: none alone saw all n
    deadline = time.monotonic() + 5  # each credit is written just after its response
    while (counts := [credit_usage(r.url)["creditsUsed"] - before[0] for r in scaled.replicas]) != [n] * 3:
        assert max(counts) <= n and time.monotonic() < deadline, counts
        time.sleep(0.05)
    starts = {credit_usage(replica.url)["billingPeriodStart"] for replica in scaled.replicas}
    assert len(starts) == 1, starts


def test_redis_killed_fails_no_scrape_and_a_read_says_it_is_unavailable(scaled: ScaledAgents,
                                                                        stack: OfflineStack) -> None:
    scaled.redis.kill()
    try:
        scraped = scrape_through(scaled, stack)
        assert scraped.status_code == 200, scraped.text
        scrape_id = scraped.json()["data"]["metadata"]["scrapeId"]
        for replica in scaled.replicas:
            again = httpx.get(f"{replica.url}/v2/scrape/{scrape_id}", headers=as_key(KEY))
            assert again.status_code == 503 and again.json()["success"] is False, again.text
            assert httpx.get(f"{replica.url}/v2/team/credit-usage", headers=as_key(KEY)).status_code == 503
    finally:
        scaled.redis.start()
    for replica in scaled.replicas:  # back with Redis: the scrape made while it was down was not kept
        assert httpx.get(f"{replica.url}/v2/scrape/{scrape_id}", headers=as_key(KEY)).status_code == 404
