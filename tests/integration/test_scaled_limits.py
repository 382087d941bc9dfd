"""The limits of three agent-svc replicas on one real Redis behind a real HAProxy (round-robin): one limit for
a key however its requests are spread, and a Redis killed mid-traffic degrades the limits to per-replica
counts, never a request to a 5xx, until it is started again."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from offline_web.stack import OfflineStack, ScaledAgents, scaled_agents

PER_MIN = 3
SPREAD, BEFORE, FLOW, AFTER = (f"wisp-scaled-key-{name}-0123456789" for name in ("spread", "before", "flow", "after"))
SEARCH = {"query": "git rebase", "limit": 1}  # keyword: SearXNG only, cheap


@pytest.fixture(scope="module")
def scaled(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScaledAgents]:
    env = {"API_KEYS": ",".join((SPREAD, BEFORE, FLOW, AFTER)), "RATE_LIMIT_PER_MIN": str(PER_MIN)}
    with scaled_agents(stack.searx.url, Path(tmp_path_factory.mktemp("scaled-limits")), replicas=3, env=env) as agents:
        yield agents


def search(url: str, key: str) -> httpx.Response:
    return httpx.post(f"{url}/v2/search", json=SEARCH, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def statuses(url: str, key: str, count: int) -> list[int]:
    return [search(url, key).status_code for _ in range(count)]


def metric(url: str, key: str, name: str, *labels: str) -> float:
    """The sum of a replica's /metrics samples of `name` with all `labels` (such as `status="200"`)."""
    text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {key}"}, timeout=10).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(f"{name}{{") and all(label in line for label in labels))


def served(url: str, key: str) -> float:
    return metric(url, key, "wisp_agent_requests_total", 'route="/v2/search"', 'status="200"')


def readiness_warnings(url: str) -> list[str]:
    ready = httpx.get(f"{url}/readyz", timeout=10)
    assert ready.status_code == 200
    return ready.json()["warnings"]


def test_a_key_gets_its_limit_once_across_the_replicas(scaled: ScaledAgents) -> None:
    before = [served(r.url, SPREAD) for r in scaled.replicas]
    answers = [search(scaled.url, SPREAD) for _ in range(3 * PER_MIN)]
    assert [a.status_code for a in answers] == [200] * PER_MIN + [429] * (2 * PER_MIN)
    for refused in answers[PER_MIN:]:
        assert refused.json().keys() == {"success", "error"} and refused.json()["success"] is False
        assert refused.json()["error"].startswith(f"Rate limit exceeded. Consumed (req/min): {PER_MIN + 1}, "
                                                  "Remaining (req/min): 0. Please retry after ")
        assert 55 <= int(refused.headers["retry-after"]) <= 60
    # round-robin: the admitted requests were served by each replica in turn, the refusals too
    assert [served(r.url, SPREAD) - n for r, n in zip(scaled.replicas, before, strict=True)] == [1, 1, 1]


def test_redis_killed_mid_traffic_degrades_the_limits_per_replica_then_shares_them_again(
        scaled: ScaledAgents) -> None:
    assert statuses(scaled.url, BEFORE, 2) == [200, 200]
    flowing, seen = threading.Event(), []

    def flow() -> None:  # another client's searches, through the kill
        while not flowing.is_set():
            seen.append(search(scaled.url, FLOW).status_code)

    sender = threading.Thread(target=flow)
    sender.start()
    time.sleep(0.5)
    scaled.redis.kill()
    time.sleep(1.5)
    flowing.set()
    sender.join()
    assert seen and all(status in (200, 429) for status in seen), seen
    assert seen[:PER_MIN] == [200] * PER_MIN

    # each replica counts alone now: 3 of a fresh window each, where Redis's window had 1 left
    assert statuses(scaled.url, BEFORE, 3 * PER_MIN + 1) == [200] * (3 * PER_MIN) + [429]
    port = scaled.redis.port
    for replica in scaled.replicas:
        (warning,) = readiness_warnings(replica.url)
        assert warning.startswith(f"limits: Redis at 127.0.0.1:{port} has not answered for ")
    assert sum(metric(r.url, BEFORE, "wisp_agent_limits_fallbacks_total", 'limit="per_minute"')
               for r in scaled.replicas) >= 3 * PER_MIN + 1

    scaled.redis.start()
    deadline = time.monotonic() + 10
    while any(readiness_warnings(r.url) for r in scaled.replicas):  # each asks Redis again after a second
        assert time.monotonic() < deadline, "the replicas did not see Redis back"
        time.sleep(0.3)
    assert statuses(scaled.url, AFTER, 3 * PER_MIN) == [200] * PER_MIN + [429] * (2 * PER_MIN)
    # and the window Redis kept through its restart (append-only file) had one left for the first key
    assert statuses(scaled.url, BEFORE, 3) == [200, 429, 429]
