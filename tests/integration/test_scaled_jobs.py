"""Three agent-svc replicas on one real redis-server, behind a real HAProxy (round-robin): crawls, batch scrapes,
extractions and research jobs started, polled and cancelled through the balancer or any replica act as one job;
a replica SIGKILLed mid-crawl and a Redis killed and restarted cost no page and do no page twice.

The offline web records every request it serves (`stack.web.requests`), so "each page fetched once" is what
the site saw, not what Wisp says.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from firecrawl import Firecrawl

from offline_web.processes import Service
from offline_web.stack import OfflineStack, ScaledAgents, scaled_agents
from tests.integration.conftest import finished_crawl

ENV = {"FETCH_ALLOW_HOSTS": "127.0.0.1", "CRAWL_HOST_DELAY_S": "0", "JOB_LEASE_S": "3", "JOB_SWEEP_S": "1"}


@pytest.fixture(scope="module")
def scaled(stack: OfflineStack, llm_stub: Service, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScaledAgents]:
    env = {**ENV, "LLM_BASE_URL": f"{llm_stub.url}/v1", "LLM_MODEL": "pages"}
    with scaled_agents(stack.searx.url, tmp_path_factory.mktemp("scaled"), 3, env) as agents:
        yield agents


@pytest.fixture
def slow_pages(stack: OfflineStack) -> Iterator[None]:
    """Every page of the offline web answers after 250 ms, as a real site's would: a crawl lasts seconds."""
    stack.web.page_delay_ms = 250
    try:
        yield
    finally:
        stack.web.page_delay_ms = 0


def page_fetches(stack: OfflineStack, urls: list[str], since: float) -> Counter:
    """How many times the offline web served each of these pages since `since` (time.time())."""
    paths = {urlsplit(url).path for url in urls}
    return Counter(r["path"] for r in list(stack.web.requests) if r["path"] in paths and r["t"] >= since)


def fetches_by_replica(agents: ScaledAgents) -> list[float]:
    """Pages each replica has fetched, from its /metrics."""
    counts = []
    for replica in agents.replicas:
        text = httpx.get(replica.url + "/metrics").text
        counts.append(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                          if line.startswith("wisp_agent_fetches_total{")))
    return counts


def all_documents(agent_url: str, status: dict) -> list[dict]:
    documents = list(status["data"])
    while status.get("next"):
        status = httpx.get(status["next"].replace(urlsplit(status["next"]).netloc, urlsplit(agent_url).netloc)).json()
        documents += status["data"]
    return documents


def crawl_through(agent_url: str, body: dict) -> str:
    response = httpx.post(agent_url + "/v2/crawl", json=body)
    assert response.status_code == 200, response.text
    return response.json()["id"]


def test_a_crawl_through_the_balancer_visits_every_page_once_on_several_replicas(scaled: ScaledAgents,
                                                                                 stack: OfflineStack) -> None:
    before, since = fetches_by_replica(scaled), time.time()
    job_id = crawl_through(scaled.url, {"url": f"{stack.web.url}/www.sqlite.org/", "limit": 30})
    status = finished_crawl(scaled.url, job_id, timeout_s=120)  # polled through the balancer
    urls = [d["metadata"]["sourceURL"] for d in all_documents(scaled.url, status)]
    assert status["status"] == "completed" and status["completed"] == status["total"] == len(urls) == 30, status
    assert len(set(urls)) == len(urls)
    assert set(page_fetches(stack, urls, since).values()) == {1}
    spread = [after - then for after, then in zip(fetches_by_replica(scaled), before, strict=True)]
    assert sum(n > 0 for n in spread) >= 2, spread  # the pages went to whichever replica had a free worker
    for replica in scaled.replicas:  # any replica reports on any job
        assert httpx.get(f"{replica.url}/v2/crawl/{job_id}").json()["total"] == 30


def test_any_replica_cancels_a_crawl_another_started(scaled: ScaledAgents, stack: OfflineStack,
                                                     slow_pages: None) -> None:
    first, second, third = scaled.replicas
    job_id = crawl_through(first.url, {"url": f"{stack.web.url}/www.mkdocs.org/", "limit": 20, "delay": 1})
    time.sleep(1.5)
    assert httpx.delete(f"{second.url}/v2/crawl/{job_id}").json()["status"] == "cancelled"
    time.sleep(1.5)  # a page being fetched when it was cancelled is not recorded
    status = httpx.get(f"{third.url}/v2/crawl/{job_id}").json()
    assert status["status"] == "cancelled" and status["completed"] < 20
    assert [crawl["id"] for crawl in httpx.get(f"{third.url}/v2/crawl/active").json()["crawls"]].count(job_id) == 0


def test_firecrawl_py_crawls_and_batch_scrapes_through_the_balancer(scaled: ScaledAgents, stack: OfflineStack) -> None:
    client = Firecrawl(api_url=scaled.url, api_key="fc-any")
    crawl = client.crawl(f"{stack.web.url}/www.mkdocs.org/", limit=12, poll_interval=1, timeout=120)
    urls = [doc.metadata.source_url for doc in crawl.data]
    assert crawl.status == "completed" and crawl.completed == crawl.total == len(urls) == 12
    assert len(set(urls)) == 12
    pages = [f"{stack.web.url}/www.sqlite.org/{name}.html" for name in ("wal", "pragma", "lang", "datatype3")]
    batch = client.batch_scrape(pages, formats=["markdown"], poll_interval=1, wait_timeout=120)
    assert batch.status == "completed" and sorted(doc.metadata.source_url for doc in batch.data) == sorted(pages)
    assert all(doc.markdown for doc in batch.data)


def test_an_extraction_started_on_one_replica_is_polled_on_the_others(scaled: ScaledAgents,
                                                                     stack: OfflineStack) -> None:
    urls = [f"{stack.web.url}/www.sqlite.org/wal.html", f"{stack.web.url}/www.sqlite.org/pragma.html"]
    started = httpx.post(scaled.replicas[0].url + "/v2/extract", json={"urls": urls, "prompt": "List the pages."})
    job_id = started.json()["id"]
    deadline = time.monotonic() + 120
    while (status := httpx.get(f"{scaled.replicas[1].url}/v2/extract/{job_id}").json())["status"] == "processing":
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    assert status["status"] == "completed", status
    assert [page["url"] for page in status["data"]["pages"]] == urls
    assert httpx.get(f"{scaled.replicas[2].url}/v2/extract/{job_id}").json()["data"] == status["data"]


def test_a_research_job_started_through_the_balancer_is_read_on_every_replica(scaled: ScaledAgents) -> None:
    client = Firecrawl(api_key="fc-any", api_url=scaled.url)
    done = client.agent(prompt="How does SQLite checkpoint the WAL?", effort="low", poll_interval=1, timeout=180)
    assert done.status in ("completed", "failed") and done.id, done
    statuses = [httpx.get(f"{replica.url}/v2/agent/{done.id}").json() for replica in scaled.replicas]
    assert all(status == statuses[0] for status in statuses) and statuses[0]["sources"], statuses


def running_visits(replica: Service) -> float:
    lines = httpx.get(replica.url + "/metrics").text.splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines
               if line.startswith('wisp_agent_queue_tasks_running{task="crawl.visit"}'))


def test_a_replica_killed_mid_crawl_hands_its_pages_to_the_others(stack: OfflineStack, slow_pages: None,
                                                                  tmp_path: Path) -> None:
    with scaled_agents(stack.searx.url, tmp_path, 3, ENV) as agents:
        since = time.time()
        job_id = crawl_through(agents.url, {"url": f"{stack.web.url}/www.sqlite.org/", "limit": 24})
        deadline = time.monotonic() + 30
        while not (holders := [r for r in agents.replicas if running_visits(r) > 0]):
            assert time.monotonic() < deadline, "no replica took a page"
            time.sleep(0.05)
        victim = holders[0]
        victim.process.kill()  # SIGKILL: no shutdown, its leases simply stop being renewed
        killed_at = time.monotonic()
        status = finished_crawl(agents.url, job_id, timeout_s=120)  # the balancer retries the dead replica's share
        urls = [d["metadata"]["sourceURL"] for d in all_documents(agents.url, status)]
        assert status["status"] == "completed" and status["completed"] == status["total"] == len(urls) == 24, status
        assert len(set(urls)) == len(urls)  # the pages it held were recorded once, by another replica
        assert time.monotonic() - killed_at < 60
        fetched = page_fetches(stack, urls, since)
        assert max(fetched.values()) <= 2 and sum(n == 2 for n in fetched.values()) <= 8  # only what it held


def test_a_replica_killed_mid_research_job_has_the_job_run_again_on_another(stack: OfflineStack, slow_pages: None,
                                                                            tmp_path: Path) -> None:
    with scaled_agents(stack.searx.url, tmp_path, 3, {**ENV, "LLM_BASE_URL": ""}) as agents:
        job_id = httpx.post(agents.url + "/v2/agent", json={"prompt": "How does SQLite checkpoint the WAL, and "
                                                            "what does git stash keep?", "effort": "low"}).json()["id"]
        deadline = time.monotonic() + 30
        while not (holders := [r for r in agents.replicas if running_tasks(r, "research.run") > 0]):
            assert time.monotonic() < deadline, "no replica took the job"
            time.sleep(0.05)
        victim = holders[0]
        victim.process.kill()  # SIGKILL mid-job: its task's lease is no longer renewed
        living = [r for r in agents.replicas if r is not victim]
        deadline = time.monotonic() + 180
        while (status := httpx.get(f"{living[0].url}/v2/agent/{job_id}").json())["status"] == "processing":
            assert time.monotonic() < deadline, status
            time.sleep(0.5)
        assert status["status"] in ("completed", "failed") and status["sources"], status  # run again to its end


def running_tasks(replica: Service, task: str) -> float:
    try:
        lines = httpx.get(replica.url + "/metrics").text.splitlines()
    except httpx.HTTPError:
        return 0.0
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines
               if line.startswith(f'wisp_agent_queue_tasks_running{{task="{task}"}}'))


def test_redis_killed_and_restarted_mid_run_costs_no_search_and_no_page(stack: OfflineStack, slow_pages: None,
                                                                         tmp_path: Path) -> None:
    limited = {**ENV, "RATE_LIMIT_PER_MIN": "100000", "RANKED_CONCURRENCY_PER_KEY": "4"}  # searches ask Redis too
    with scaled_agents(stack.searx.url, tmp_path, 3, limited) as agents:
        searches: list[int] = []
        stop = threading.Event()

        def search_all_along() -> None:
            with httpx.Client(base_url=agents.url, timeout=30) as client:
                while not stop.is_set():
                    searches.append(client.post("/v2/search", json={"query": "sqlite write ahead log"}).status_code)
                    time.sleep(0.1)

        job_id = crawl_through(agents.url, {"url": f"{stack.web.url}/www.sqlite.org/", "limit": 20})
        searching = threading.Thread(target=search_all_along)
        searching.start()
        try:
            time.sleep(1.5)
            agents.redis.kill()
            outage = httpx.get(f"{agents.url}/v2/crawl/{job_id}")
            assert outage.status_code == 503 and outage.json()["success"] is False, outage.text
            time.sleep(3)
            assert all(httpx.get(f"{replica.url}/readyz").json()["warnings"] for replica in agents.replicas)
            agents.redis.start()
            status = finished_crawl(agents.url, job_id, timeout_s=120)
        finally:
            stop.set()
            searching.join()
        urls = [d["metadata"]["sourceURL"] for d in all_documents(agents.url, status)]
        assert status["status"] == "completed" and status["completed"] == status["total"] == len(urls) == 20, status
        assert len(set(urls)) == len(urls)
        assert len(searches) > 20 and set(searches) == {200}, Counter(searches)
