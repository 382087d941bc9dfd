"""Firecrawl's crawl API on the offline web: through firecrawl-py and firecrawl-js, into the vector index, within
its scope and robots.txt, and across a restart of agent-svc."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import BadRequestError

from offline_web.stack import OfflineStack
from tests.integration.conftest import finished_crawl, index_agent_service
from tests.integration.test_sdk_js import call_js


def test_python_sdk_crawls_a_site_within_its_scope_and_robots(index_agent: str, stack: OfflineStack) -> None:
    site = f"{stack.web.url}/www.sqlite.org/"
    app = Firecrawl(api_url=index_agent)
    job = app.crawl(site, limit=12, poll_interval=1, timeout=240)
    assert job.status == "completed" and job.completed == len(job.data) == job.total and 0 < job.completed <= 12
    urls = [d.metadata.source_url for d in job.data]
    assert len(set(urls)) == len(urls) and all(u.startswith(site) for u in urls)
    assert all(d.markdown and d.metadata.status_code == 200 and d.metadata.title for d in job.data)
    # the sitemap listed the pages below; robots.txt closes one to every crawler, one to Firecrawl's
    errors = app.get_crawl_errors(job.id)
    assert set(errors.robots_blocked) == {site + "lockingv3.html", site + "isolation.html"}
    assert not {site + "lockingv3.html", site + "isolation.html"} & set(urls)
    assert not [u for u in urls if u.endswith(("about.html", "changes.html"))]  # navigation pages are junk


def test_crawled_pages_land_in_the_index(crawled: dict, index_agent: str) -> None:
    assert crawled["status"] == "completed" and crawled["completed"] == len(crawled["data"]) > 10
    index = crawled["index"]
    assert index["notIndexed"] == 0 and index["indexed"] + index["unchanged"] == crawled["completed"]
    assert index["indexed"] > 0 and index["chunks"] > index["indexed"]
    stats = httpx.get(index_agent + "/v2/index/stats").json()
    assert stats["documents"] >= crawled["completed"] and stats["chunks"] >= index["chunks"]


def test_crawling_again_skips_unchanged_pages(crawled: dict, index_agent: str, stack: OfflineStack) -> None:
    urls = [d["metadata"]["url"] for d in crawled["data"][:3]]
    body = {"url": urls[0], "urls": urls[1:], "maxDiscoveryDepth": 0, "sitemap": "skip"}
    job = httpx.post(index_agent + "/v2/crawl", json=body).json()
    status = finished_crawl(index_agent, job["id"])
    assert status["completed"] == 3 and status["index"] == {"indexed": 0, "unchanged": 3, "chunks": 0,
                                                             "notIndexed": 0}


def test_include_paths_depth_and_sitemap_only_bound_a_crawl(index_agent: str, stack: OfflineStack) -> None:
    app = Firecrawl(api_url=index_agent)
    site = f"{stack.web.url}/www.sqlite.org/"
    only_c3ref = app.crawl(site, limit=8, include_paths=["^/www\\.sqlite\\.org/c3ref/"], sitemap="skip",
                           poll_interval=1, timeout=120)
    urls = [d.metadata.source_url for d in only_c3ref.data]
    assert urls[0] == site and len(urls) > 1 and all("/c3ref/" in u for u in urls[1:])  # the seed is exempt
    seed_only = app.crawl(site, limit=8, max_discovery_depth=0, sitemap="skip", poll_interval=1, timeout=120)
    assert [d.metadata.source_url for d in seed_only.data] == [site]
    listed = app.crawl(site, limit=40, sitemap="only", poll_interval=1, timeout=120)
    sitemap = httpx.get(site + "sitemap.xml").text
    assert all(d.metadata.source_url == site or d.metadata.source_url in sitemap for d in listed.data)


def test_a_crawl_is_held_to_the_ssrf_guard(stack: OfflineStack, semantic_url: str, tmp_path: Path) -> None:
    # fetching closed to loopback, as in production: the seed and everything after it are refused
    with index_agent_service(stack, semantic_url, tmp_path, "agent-closed-crawl", "closed",
                             FETCH_ALLOW_HOSTS="") as agent:
        job = httpx.post(agent.url + "/v2/crawl", json={"url": f"{stack.web.url}/www.sqlite.org/"}).json()
        status = finished_crawl(agent.url, job["id"])
        errors = httpx.get(f"{agent.url}/v2/crawl/{job['id']}/errors").json()
    assert status["status"] == "completed" and status["completed"] == 0 and status["data"] == []
    [refused] = errors["errors"]
    assert refused["code"] == "SCRAPE_BLOCKED" and "non-public address" in refused["error"]


def test_js_sdk_crawls_pages_and_cancels(index_agent: str, stack: OfflineStack) -> None:
    site = f"{stack.web.url}/git-scm.com/docs/git-commit.html"
    crawl, started, cancelled, status, again = call_js(
        index_agent,
        {"method": "crawl", "args": [site, {"limit": 4, "pollInterval": 1}]},
        {"method": "startCrawl", "args": [f"{stack.web.url}/www.mkdocs.org/", {"limit": 20, "delay": 2}]},
        {"method": "cancelCrawl", "args": ["$0"]},
        {"method": "getCrawlStatus", "args": ["$0"]},
        {"method": "cancelCrawl", "args": ["$0"]},
    )
    assert crawl["ok"], crawl
    result = crawl["result"]
    assert result["status"] == "completed" and result["completed"] == len(result["data"]) == 4
    assert all(d["markdown"] and d["metadata"]["sourceURL"].startswith(f"{stack.web.url}/git-scm.com/docs/")
               for d in result["data"])
    assert started["ok"] and started["result"]["url"].endswith(f"/v2/crawl/{started['result']['id']}")
    assert cancelled == {"ok": True, "result": True}
    assert status["ok"] and status["result"]["status"] == "cancelled"
    assert not again["ok"] and again["error"]["status"] == 409  # the JS SDK throws on a finished crawl


def test_status_pages_through_the_documents(crawled: dict, index_agent: str) -> None:
    first = httpx.get(f"{index_agent}/v2/crawl/{crawled['id']}", params={"limit": 5}).json()
    assert len(first["data"]) == 5 and first["next"].endswith(f"/v2/crawl/{crawled['id']}?skip=5&limit=5")
    last = httpx.get(f"{index_agent}/v2/crawl/{crawled['id']}",
                     params={"skip": crawled["completed"] - 2, "limit": 5}).json()
    assert len(last["data"]) == 2 and "next" not in last  # nothing beyond: no page pointing at itself
    paged = Firecrawl(api_url=index_agent).get_crawl_status(crawled["id"])  # follows `next` to the end
    assert len(paged.data) == crawled["completed"] and paged.next is None


@pytest.mark.parametrize(("method", "path", "body", "status", "error"), [
    ("get", "/v2/crawl/no-such-job", None, 404, "Job not found"),
    ("delete", "/v2/crawl/no-such-job", None, 404, "Job not found"),
    ("post", "/v2/crawl", {"url": "ftp://example.org/"}, 400, "invalid url"),
    ("post", "/v2/crawl", {"url": "http://example.org/", "includePaths": ["(unclosed"]}, 400, "Invalid request body"),
    ("post", "/v2/crawl", {"url": "http://example.org/", "delay": 61}, 400, "Invalid request body"),
    ("post", "/v2/crawl", {"url": "http://example.org/", "limit": 0}, 400, "Invalid request body"),
])
def test_bad_crawl_requests_get_firecrawls_envelope(index_agent: str, method: str, path: str, body: dict | None,
                                                    status: int, error: str) -> None:
    response = httpx.request(method, index_agent + path, json=body)
    assert response.status_code == status and error in response.json()["error"]


def test_bad_paging_is_a_400_and_a_finished_crawl_cannot_be_cancelled(crawled: dict, index_agent: str) -> None:
    assert httpx.get(f"{index_agent}/v2/crawl/{crawled['id']}", params={"limit": 0}).status_code == 400
    assert httpx.get(f"{index_agent}/v2/crawl/{crawled['id']}", params={"skip": "x"}).status_code == 400
    response = httpx.delete(f"{index_agent}/v2/crawl/{crawled['id']}")
    assert response.status_code == 409 and "already completed" in response.json()["error"]
    assert Firecrawl(api_url=index_agent).cancel_crawl(crawled["id"]) is False  # the Python SDK's reading of 409


def test_a_crawl_survives_agent_svc_being_killed(stack: OfflineStack, semantic_url: str, tmp_path: Path) -> None:
    # politeness slows the crawl down enough to kill the service in the middle of it
    first = index_agent_service(stack, semantic_url, tmp_path, "agent-crawl", "restart", CRAWL_HOST_DELAY_S="0.5")
    with first:
        job = httpx.post(first.url + "/v2/crawl", json={"url": f"{stack.web.url}/www.mkdocs.org/", "limit": 10}).json()
        _wait_for(lambda: httpx.get(f"{first.url}/v2/crawl/{job['id']}").json()["completed"] >= 2)
        assert first.process is not None
        first.process.kill()  # SIGKILL: no shutdown code runs
        first.process.wait()
    second = index_agent_service(stack, semantic_url, tmp_path, "agent-crawl", "restart")
    with second:
        status = finished_crawl(second.url, job["id"])
        assert f"resumed 1 crawls: {job['id']}" in second.log_path.read_text()  # polls' access lines follow it
    urls = [d["metadata"]["sourceURL"] for d in status["data"]]
    assert status["status"] == "completed" and status["completed"] == 10 and len(set(urls)) == 10


def _wait_for(condition, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError(f"not within {timeout_s} s")


def test_crawl_options_from_a_prompt_are_a_400_not_supported(agent_url: str) -> None:
    response = httpx.post(f"{agent_url}/v2/crawl/params-preview", json={"url": "https://example.org/",
                                                                        "prompt": "only the blog posts"})
    assert response.status_code == 400 and response.json()["success"] is False
    assert response.json()["error"].startswith("Crawl options derived from a prompt are not supported")
    with pytest.raises(BadRequestError, match="not supported"):
        Firecrawl(api_url=agent_url).crawl_params_preview("https://example.org/", "only the blog posts")
    [js] = call_js(agent_url, {"method": "crawlParamsPreview", "args": ["https://example.org/", "only the blog"]})
    assert not js["ok"] and js["error"]["status"] == 400 and "not supported" in js["error"]["message"]
