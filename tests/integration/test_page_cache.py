"""The page cache behind a real agent-svc: a scrape, a search's scrapeOptions and a crawl with `maxAge` are served
a kept copy, through raw HTTP, firecrawl-py and firecrawl-js. The site is a local server whose every answer
differs (`visit N`) and that counts its requests: a page served twice the same came from the cache. Replicas on
one Redis page cache (a real redis-server, HAProxy in front) serve each other's pages."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from firecrawl import Firecrawl

from offline_web.stack import OfflineStack, ScaledAgents, scaled_agents
from tests.integration.conftest import agent_service, finished_crawl
from tests.integration.test_sdk_js import call_js

HOUR_MS = 3_600_000


class ChangingSite:
    """Pages at any path, each answer numbered; `/`, `/a` and `/b` link to one another; robots.txt and sitemaps
    are 404s."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests[self.path] += 1
                if self.path.endswith((".txt", ".xml")):
                    self.send_error(404)
                    return
                body = (f"<html><head><title>Page {self.path}</title></head><body><main><h1>Page {self.path}</h1>"
                        f"<p>This page changes on every visit: visit {site.requests[self.path]} of {self.path}.</p>"
                        "<p><a href='/a'>A</a> <a href='/b'>B</a></p></main></body></html>").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ChangingSite:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def site() -> Iterator[ChangingSite]:
    with ChangingSite() as running:
        yield running


@pytest.fixture(scope="module")
def cache_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-svc with loopback opened to fetching and its page cache in a directory of its own."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("page-cache"), "agent-cache",
                       FETCH_ALLOW_HOSTS="127.0.0.1", CRAWL_HOST_DELAY_S="0") as agent:
        yield agent.url


@pytest.fixture(scope="module")
def shared_cache_agents(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScaledAgents]:
    """Two agent-svc replicas whose page cache is their Redis, behind a round-robin balancer."""
    with scaled_agents(stack.searx.url, tmp_path_factory.mktemp("shared-page-cache"), replicas=2,
                       env={"PAGE_CACHE": "redis", "FETCH_ALLOW_HOSTS": "127.0.0.1"}) as agents:
        yield agents


def scrape(agent: str, url: str, **options: object) -> dict:
    response = httpx.post(f"{agent}/v2/scrape", json={"url": url, **options}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_a_second_scrape_within_max_age_is_the_kept_copy(cache_agent: str, site: ChangingSite) -> None:
    url = f"{site.url}/scrape-twice"
    before = datetime.now(UTC)
    first = scrape(cache_agent, url, maxAge=HOUR_MS)
    second = scrape(cache_agent, url, maxAge=HOUR_MS)
    assert site.requests["/scrape-twice"] == 1 and "visit 1 of" in first["markdown"] == second["markdown"]
    assert first["metadata"]["cacheState"] == "miss" and "cachedAt" not in first["metadata"]
    cached_at = datetime.fromisoformat(second["metadata"]["cachedAt"])
    assert second["metadata"]["cacheState"] == "hit" and before - timedelta(seconds=1) < cached_at < datetime.now(UTC)
    assert second["metadata"]["statusCode"] == 200 and second["metadata"]["url"] == url
    fresh = scrape(cache_agent, url, maxAge=0)
    assert "visit 2 of" in fresh["markdown"] and "cacheState" not in fresh["metadata"]  # as Firecrawl's maxAge 0
    assert "visit 2 of" in scrape(cache_agent, url, maxAge=HOUR_MS)["markdown"]  # the fresh fetch was kept
    assert site.requests["/scrape-twice"] == 2


def test_store_in_cache_false_keeps_nothing(cache_agent: str, site: ChangingSite) -> None:
    url = f"{site.url}/not-kept"
    for visit in (1, 2):
        page = scrape(cache_agent, url, maxAge=HOUR_MS, storeInCache=False)
        assert f"visit {visit} of" in page["markdown"] and page["metadata"]["cacheState"] == "miss"
    assert site.requests["/not-kept"] == 2


def test_firecrawl_py_parses_cache_state_and_cached_at(cache_agent: str, site: ChangingSite) -> None:
    app, url = Firecrawl(api_url=cache_agent), f"{site.url}/python-sdk"
    first = app.scrape(url, formats=["markdown"], max_age=HOUR_MS)
    second = app.scrape(url, formats=["markdown"], max_age=HOUR_MS)
    assert first.metadata.cache_state == "miss" and first.metadata.cached_at is None
    assert second.metadata.cache_state == "hit" and second.markdown == first.markdown
    assert datetime.fromisoformat(second.metadata.cached_at) <= datetime.now(UTC)
    assert site.requests["/python-sdk"] == 1


def test_firecrawl_js_sends_max_age_and_reads_the_hit(cache_agent: str, site: ChangingSite) -> None:
    url = f"{site.url}/js-sdk"
    first, second = call_js(cache_agent, *[{"method": "scrape", "args": [url, {"formats": ["markdown"],
                                                                                "maxAge": HOUR_MS}]}] * 2)
    assert first["ok"] and second["ok"], (first, second)
    assert second["result"]["metadata"]["cacheState"] == "hit" and second["result"]["metadata"]["cachedAt"]
    assert second["result"]["markdown"] == first["result"]["markdown"] and site.requests["/js-sdk"] == 1


def test_a_search_with_scrape_options_max_age_is_served_from_the_cache(cache_agent: str, stack: OfflineStack
                                                                        ) -> None:
    body = {"query": "sqlite write-ahead log checkpoint", "limit": 3,
            "scrapeOptions": {"formats": ["markdown"], "maxAge": HOUR_MS}}
    first = httpx.post(f"{cache_agent}/v2/search", json=body, timeout=60).json()
    second = httpx.post(f"{cache_agent}/v2/search", json=body, timeout=60).json()
    firsts = {r["url"]: r["metadata"] for r in first["data"]["web"]}
    seconds = {r["url"]: r["metadata"] for r in second["data"]["web"]}
    assert firsts and firsts.keys() == seconds.keys()
    assert {m["cacheState"] for m in seconds.values()} == {"hit"} and all(m["cachedAt"] for m in seconds.values())
    assert all(r["markdown"] for r in second["data"]["web"])


def test_a_crawl_with_max_age_reads_the_pages_scrapes_kept(cache_agent: str, site: ChangingSite) -> None:
    for path in ("/", "/a", "/b"):
        scrape(cache_agent, site.url + path)  # maxAge 0: fetched, and kept
    job = httpx.post(f"{cache_agent}/v2/crawl", json={"url": site.url + "/", "limit": 3, "sitemap": "skip",
                                                       "scrapeOptions": {"maxAge": HOUR_MS}}).json()
    status = finished_crawl(cache_agent, job["id"])
    documents = {d["metadata"]["sourceURL"]: d for d in status["data"]}
    assert set(documents) == {site.url + "/", site.url + "/a", site.url + "/b"}
    assert {d["metadata"]["cacheState"] for d in documents.values()} == {"hit"}
    assert all("visit 1 of" in d["markdown"] for d in documents.values())
    assert [site.requests[p] for p in ("/", "/a", "/b")] == [1, 1, 1]


def test_the_cache_is_counted_in_metrics(cache_agent: str, site: ChangingSite) -> None:
    scrape(cache_agent, f"{site.url}/counted", maxAge=HOUR_MS)
    scrape(cache_agent, f"{site.url}/counted", maxAge=HOUR_MS)
    metrics = httpx.get(f"{cache_agent}/metrics").text
    samples = {line.split(" ")[0]: float(line.split(" ")[1]) for line in metrics.splitlines()
               if line.startswith("wisp_agent_page_cache")}
    assert samples['wisp_agent_page_cache_lookups_total{result="hit"}'] >= 1
    assert samples['wisp_agent_page_cache_lookups_total{result="miss"}'] >= 1
    assert samples["wisp_agent_page_cache_stores_total"] >= 1 and samples["wisp_agent_page_cache_bytes"] > 0


def test_replicas_on_one_redis_page_cache_serve_the_pages_the_other_fetched(shared_cache_agents: ScaledAgents,
                                                                          stack: OfflineStack) -> None:
    one, other = (replica.url for replica in shared_cache_agents.replicas)
    path = "/www.sqlite.org/wal.html"
    fetched_before = len(stack.web.requests_to(path))  # other tests of the session may have fetched it
    first = scrape(one, stack.web.url + path, maxAge=HOUR_MS)
    second = scrape(other, stack.web.url + path, maxAge=HOUR_MS)
    assert first["metadata"]["cacheState"] == "miss" and second["metadata"]["cacheState"] == "hit"
    assert second["markdown"] == first["markdown"] and second["metadata"]["cachedAt"]
    assert len(stack.web.requests_to(path)) == fetched_before + 1


def test_behind_the_balancer_a_page_is_fetched_once_whichever_replica_answers(shared_cache_agents: ScaledAgents,
                                                                               stack: OfflineStack) -> None:
    paths = ["/www.sqlite.org/atomiccommit.html", "/www.sqlite.org/pragma.html", "/www.sqlite.org/isolation.html"]
    fetched_before = {path: len(stack.web.requests_to(path)) for path in paths}
    states = [scrape(shared_cache_agents.url, stack.web.url + path, maxAge=HOUR_MS)["metadata"]["cacheState"]
              for _ in range(2) for path in paths]  # three pages on two replicas: each goes to both
    assert states == ["miss"] * 3 + ["hit"] * 3
    assert [len(stack.web.requests_to(path)) - fetched_before[path] for path in paths] == [1, 1, 1]
