"""Firecrawl's crawl API on the offline web: through firecrawl-py and firecrawl-js, into the vector index, within
its scope and robots.txt, across a restart of agent-svc; active crawls, v1's maxDepth and paging while a crawl
runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp
from requests.exceptions import HTTPError

from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service, finished_crawl, index_agent_service
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
        seen_by_sdk = Firecrawl(api_url=agent.url).get_crawl_status(job["id"])
    assert status["status"] == "completed" and status["completed"] == 0 and status["data"] == []
    [refused] = errors["errors"]
    assert refused["code"] == "SCRAPE_BLOCKED" and "non-public address" in refused["error"]
    # the status says what happened, not only /errors: the count and the first reason
    assert status["warning"] == (f"no page was scraped: 1 failed or were refused, the first {refused['url']} "
                                 f"(SCRAPE_BLOCKED: {refused['error']}); GET its /errors lists them all")
    assert seen_by_sdk.warning == status["warning"]


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
    ("post", "/v2/crawl", {"url": "http://example.org/", "includePaths": ["(unclosed"]}, 400,
     "invalid regular expression '(unclosed'"),
    ("post", "/v2/crawl", {"url": "http://example.org/", "delay": 61}, 400, "Bad Request"),
    ("post", "/v2/crawl", {"url": "http://example.org/", "limit": 0}, 400, "Bad Request"),
    ("post", "/v1/crawl", {"url": "http://example.org/a/b/c/d", "maxDepth": 2}, 400,
     "URL depth exceeds the specified maxDepth"),
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


def test_a_crawls_options_come_from_its_prompt_in_both_sdks(crawl_agent: str, stack: OfflineStack) -> None:
    site = f"{stack.web.url}/www.sqlite.org/"
    prompt = "only the release logs, not the c3ref API pages, at most 3 pages"
    preview = Firecrawl(api_url=crawl_agent).crawl_params_preview(site, prompt)
    assert preview.include_paths == [r"^/www\.sqlite\.org/releaselog(?:/|$)"] and preview.limit == 3
    assert preview.exclude_paths == [r"^/www\.sqlite\.org/c3ref(?:/|$)"]
    [js] = call_js(crawl_agent, {"method": "crawlParamsPreview", "args": [site, prompt]})
    assert js["ok"] and js["result"]["includePaths"] == preview.include_paths
    job = Firecrawl(api_url=crawl_agent).crawl(site, prompt=prompt, sitemap="include", poll_interval=1, timeout=120)
    crawled = [d.metadata.source_url for d in job.data]
    assert job.status == "completed" and 1 < len(crawled) <= 3
    assert all("/releaselog/" in url for url in crawled if url != site), crawled
    # what the request says itself wins over the prompt
    started = httpx.post(f"{crawl_agent}/v2/crawl", json={"url": site, "prompt": prompt, "limit": 2}).json()
    assert started["success"] and finished_crawl(crawl_agent, started["id"])["total"] <= 2


@pytest.mark.parametrize("body", [{"url": "https://example.org/"}, {"url": "https://example.org/", "prompt": " "},
                                  {"url": "https://example.org/", "prompt": "x" * 10_001}, {"prompt": "the blog"}])
def test_a_params_preview_without_a_prompt_or_url_is_a_400(crawl_agent: str, body: dict) -> None:
    response = httpx.post(f"{crawl_agent}/v2/crawl/params-preview", json=body)
    assert response.status_code == 400 and response.json()["success"] is False


@pytest.fixture(scope="module")
def crawl_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-svc crawling the offline web without an index (semantic-svc is not there: pages are not indexed,
    which these tests of the crawl API do not look at)."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("crawl-api"), "agent-crawl-api",
                       FETCH_ALLOW_HOSTS="127.0.0.1", CRAWL_HOST_DELAY_S="0") as agent:
        yield agent.url


def test_active_crawls_carry_a_team_and_firecrawls_option_names(crawl_agent: str, stack: OfflineStack) -> None:
    site = f"{stack.web.url}/www.sqlite.org/"
    job = httpx.post(crawl_agent + "/v2/crawl", json={"url": site, "limit": 20, "delay": 5, "includePaths": ["^/w"],
                                                      "sitemap": "skip"}).json()
    try:
        active = Firecrawl(api_url=crawl_agent).get_active_crawls()
        [crawl] = [c for c in active.crawls if c.id == job["id"]]
        assert crawl.team_id == "self-hosted" and crawl.url == site
        assert {k: crawl.options[k] for k in ("includePaths", "limit", "delay", "sitemap", "crawlEntireDomain")} == {
            "includePaths": ["^/w"], "limit": 20, "delay": 5, "sitemap": "skip", "crawlEntireDomain": False}
        assert crawl.options["scrapeOptions"] == {"formats": ["markdown"], "onlyMainContent": True}
        async_active = asyncio.run(AsyncFirecrawl(api_url=crawl_agent).v2.get_active_crawls())  # not on the top level
        assert job["id"] in {c.id for c in async_active.crawls}
        [js] = call_js(crawl_agent, {"method": "getActiveCrawls", "args": []})
        [js_crawl] = [c for c in js["result"]["crawls"] if c["id"] == job["id"]]
        assert js_crawl["teamId"] == "self-hosted" and js_crawl["options"]["includePaths"] == ["^/w"]
        for path in ("/v2/crawl/ongoing", "/v1/crawl/active", "/v1/crawl/ongoing"):
            body = httpx.get(crawl_agent + path).json()
            [listed] = [c for c in body["crawls"] if c["id"] == job["id"]]
            assert body["success"] is True and listed["teamId"] == "self-hosted" and listed["url"] == site
        v1 = httpx.get(crawl_agent + "/v1/crawl/active").json()
        [v1_crawl] = [c for c in v1["crawls"] if c["id"] == job["id"]]
        assert v1_crawl["options"]["ignoreSitemap"] is True and v1_crawl["options"]["allowBackwardLinks"] is False
    finally:
        httpx.delete(f"{crawl_agent}/v2/crawl/{job['id']}")
    assert job["id"] not in {c.id for c in Firecrawl(api_url=crawl_agent).get_active_crawls().crawls}


def test_v1s_max_depth_refuses_a_start_url_deeper_than_it(crawl_agent: str, stack: OfflineStack) -> None:
    deep = f"{stack.web.url}/www.sqlite.org/c3ref/wal_checkpoint.html"  # 3 path segments
    response = httpx.post(crawl_agent + "/v1/crawl", json={"url": deep, "maxDepth": 2, "limit": 5})
    assert response.status_code == 400 and response.json()["error"] == "URL depth exceeds the specified maxDepth"
    assert response.json()["details"] == [{"code": "custom", "path": ["url"],
                                           "message": "URL depth exceeds the specified maxDepth"}]
    with pytest.raises(HTTPError, match="URL depth exceeds the specified maxDepth"):
        V1FirecrawlApp(api_url=crawl_agent).async_crawl_url(deep, max_depth=2, limit=5)
    [js] = call_js(crawl_agent, {"client": "v1", "method": "asyncCrawlUrl", "args": [deep, {"maxDepth": 2}]})
    assert not js["ok"] and "URL depth exceeds the specified maxDepth" in js["error"]["message"]
    # at its depth it is accepted and crawls; v2 has no such check
    started = V1FirecrawlApp(api_url=crawl_agent).async_crawl_url(deep, max_depth=3, limit=1)
    assert started.success and started.id
    assert httpx.post(crawl_agent + "/v2/crawl", json={"url": deep, "maxDiscoveryDepth": 0}).status_code == 200
    finished_crawl(crawl_agent, started.id)


def test_a_crawl_url_without_a_scheme_gets_http(crawl_agent: str, stack: OfflineStack) -> None:
    bare = stack.web.url.removeprefix("http://") + "/www.sqlite.org/wal.html"
    job = Firecrawl(api_url=crawl_agent).crawl(bare, limit=1, max_discovery_depth=0, sitemap="skip",
                                               poll_interval=1, timeout=60)
    assert job.status == "completed" and [d.metadata.source_url for d in job.data] == [f"http://{bare}"]


def test_paging_a_running_crawl_ends_in_both_sdks(crawl_agent: str, stack: OfflineStack) -> None:
    # `next` counts the pages still pending while the crawl runs, as upstream: each SDK's paging must still end,
    # without a tight loop on an empty page
    site = f"{stack.web.url}/www.sqlite.org/"
    body = {"url": site, "limit": 3, "delay": 1, "sitemap": "skip"}
    started = httpx.post(crawl_agent + "/v2/crawl", json=body).json()
    first = httpx.get(f"{crawl_agent}/v2/crawl/{started['id']}").json()
    if first["status"] == "scraping" and first["total"] > len(first["data"]) > 0:
        assert first["next"].endswith(f"/v2/crawl/{started['id']}?skip={len(first['data'])}")
    with httpx.Client(base_url=crawl_agent) as client:
        skip, pages = 0, 0
        while (page := client.get(f"/v2/crawl/{started['id']}", params={"skip": skip, "limit": 1}).json()).get("next"):
            assert page["data"], page  # never an empty page pointing at itself
            skip, pages = skip + len(page["data"]), pages + 1
    assert pages <= 3
    paged = Firecrawl(api_url=crawl_agent).get_crawl_status(started["id"])
    assert paged.next is None and len(paged.data) <= 3
    [js] = call_js(crawl_agent, {"method": "getCrawlStatus", "args": [started["id"]]}, timeout_s=120)
    assert js["ok"] and js["result"]["next"] is None
    done = finished_crawl(crawl_agent, started["id"])
    assert done["status"] == "completed" and "next" not in done and len(done["data"]) == done["completed"]
