"""Firecrawl's batch scrape on the offline web, through firecrawl-py (v2, its async client and v1) and
firecrawl-js: each URL's Document is the one /v2/scrape gives, failures are listed, bad input is a 4xx in
Firecrawl's envelope, and a batch survives a restart of agent-svc."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v1 import V1FirecrawlApp
from firecrawl.v2.utils.error_handler import FirecrawlError

from offline_web.processes import Service, free_port
from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service, finished_crawl
from tests.integration.test_sdk_js import call_js

MAX_URLS = 12


def batch_agent_service(stack: OfflineStack, workdir: Path, name: str, **env: str) -> Service:
    """agent-svc with the offline web opened to fetching and no vector index: a batch scrape indexes nothing."""
    return agent_service(stack.searx.url, workdir, name, **{
        "FETCH_ALLOW_HOSTS": "127.0.0.1", "CRAWL_HOST_DELAY_S": "0", "BATCH_MAX_URLS": str(MAX_URLS), **env})


@pytest.fixture(scope="module")
def batch_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with batch_agent_service(stack, tmp_path_factory.mktemp("batch"), "agent-batch") as agent:
        yield agent.url


@pytest.fixture(scope="module")
def slow_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second apart per request to one host: a batch is still running when a test cancels it."""
    with batch_agent_service(stack, tmp_path_factory.mktemp("batch-slow"), "agent-batch-slow",
                             CRAWL_HOST_DELAY_S="1") as agent:
        yield agent.url


def sqlite(stack: OfflineStack, page: str) -> str:
    return f"{stack.web.url}/www.sqlite.org/{page}"


def finished_batch(agent_url: str, job_id: str, timeout_s: float = 120) -> dict:
    return finished_crawl(agent_url, job_id, timeout_s, route="batch/scrape")


def test_python_sdk_batch_scrapes_each_url_as_scrape_does(batch_agent: str, stack: OfflineStack) -> None:
    wal, missing = sqlite(stack, "wal.html"), sqlite(stack, "no-such-page.html")
    closed = sqlite(stack, "lockingv3.html")
    app = Firecrawl(api_url=batch_agent)
    # what firecrawl-py sends by default: formats, storeInCache, maxAge, origin and the rest
    job = app.batch_scrape([wal, missing, closed], formats=["markdown", "links"], poll_interval=1, wait_timeout=120)
    assert job.status == "completed" and job.completed == job.total == len(job.data) == 3
    by_url = {d.metadata.source_url: d for d in job.data}
    scraped = app.scrape(wal, formats=["markdown", "links"])
    assert by_url[wal].markdown == scraped.markdown and by_url[wal].links == scraped.links
    assert by_url[wal].metadata.title == scraped.metadata.title and by_url[wal].metadata.status_code == 200
    assert by_url[missing].metadata.status_code == 404  # the error page and its content, as /v2/scrape answers it
    assert by_url[missing].markdown == app.scrape(missing).markdown == "not found"
    assert by_url[closed].markdown  # robots.txt closes it to crawlers; a scrape does not read robots.txt


def test_a_batch_lists_invalid_urls_and_failures(batch_agent: str, stack: OfflineStack) -> None:
    app = Firecrawl(api_url=batch_agent)
    refused = f"http://127.0.0.1:{free_port()}/nothing-listens"
    started = app.start_batch_scrape([sqlite(stack, "pragma.html"), refused, "http://not a url/"],
                                     formats=["html"], only_main_content=False)
    assert started.invalid_urls == ["http://not a url/"]
    assert started.url == f"{batch_agent}/v2/batch/scrape/{started.id}"
    status = finished_batch(batch_agent, started.id)
    assert status["completed"] == status["total"] == 1 and "index" not in status
    [page] = app.get_batch_scrape_status(started.id).data
    assert "<" in page.html and page.markdown is None
    [error] = app.get_batch_scrape_errors(started.id).errors
    assert error.url == refused and error.code == "SCRAPE_FAILED" and error.timestamp is not None
    with pytest.raises(FirecrawlError) as finished:  # Firecrawl's 409, which firecrawl-py raises for a batch
        app.cancel_batch_scrape(started.id)
    assert finished.value.status_code == 409 and "already completed" in str(finished.value)


def test_a_batch_whose_every_url_was_refused_says_so_in_its_status(agent_url: str, stack: OfflineStack) -> None:
    """The session's agent-svc keeps fetching closed: the SSRF guard refuses every page of the offline web."""
    app = Firecrawl(api_url=agent_url)
    started = app.start_batch_scrape([sqlite(stack, "pragma.html"), sqlite(stack, "wal.html")], formats=["markdown"])
    status = finished_batch(agent_url, started.id)
    assert status["status"] == "completed" and status["total"] == status["completed"] == 0
    # the pages are fetched at once: either may be refused first
    assert any(status["warning"].startswith(f"no page was scraped: 2 failed or were refused, the first "
                                            f"{sqlite(stack, page)} (SCRAPE_BLOCKED: ") for page in ("pragma.html",
                                                                                                 "wal.html")), status



def test_a_batch_pages_its_documents(batch_agent: str, stack: OfflineStack) -> None:
    pages = ["wal.html", "pragma.html", "atomiccommit.html", "lang_vacuum.html", "whentouse.html"]
    job = httpx.post(f"{batch_agent}/v2/batch/scrape", json={"urls": [sqlite(stack, p) for p in pages]}).json()
    finished_batch(batch_agent, job["id"])
    first = httpx.get(f"{batch_agent}/v2/batch/scrape/{job['id']}", params={"limit": 2}).json()
    assert len(first["data"]) == 2 and first["next"].endswith(f"/v2/batch/scrape/{job['id']}?skip=2&limit=2")
    paged = Firecrawl(api_url=batch_agent).get_batch_scrape_status(job["id"])  # follows `next` to the end
    assert sorted(d.metadata.source_url for d in paged.data) == sorted(sqlite(stack, p) for p in pages)


def test_append_to_id_adds_urls_to_a_finished_batch(batch_agent: str, stack: OfflineStack) -> None:
    app = Firecrawl(api_url=batch_agent)
    job = app.start_batch_scrape([sqlite(stack, "wal.html")])
    assert finished_batch(batch_agent, job.id)["completed"] == 1
    more = app.start_batch_scrape([sqlite(stack, "pragma.html"), sqlite(stack, "wal.html")], append_to_id=job.id)
    assert more.id == job.id
    status = finished_batch(batch_agent, job.id)
    assert status["status"] == "completed" and status["completed"] == status["total"] == 2  # wal.html once


def test_the_async_client_batch_scrapes(batch_agent: str, stack: OfflineStack) -> None:
    async def main() -> tuple:
        app = AsyncFirecrawl(api_url=batch_agent)
        job = await app.batch_scrape([sqlite(stack, "wal.html"), sqlite(stack, "pragma.html")], poll_interval=1,
                                     wait_timeout=60)
        started = await app.start_batch_scrape([f"http://127.0.0.1:{free_port()}/nothing-listens"])
        while (await app.get_batch_scrape_status(started.id)).status == "scraping":
            await asyncio.sleep(0.3)
        return job, await app.get_batch_scrape_errors(started.id)

    job, errors = asyncio.run(main())
    assert job.status == "completed" and len(job.data) == 2 and all(d.markdown for d in job.data)
    assert [e["code"] for e in errors["errors"]] == ["SCRAPE_FAILED"]  # the async client returns the body


def test_v1_client_batch_scrapes(batch_agent: str, stack: OfflineStack) -> None:
    app = V1FirecrawlApp(api_url=batch_agent)
    urls = [sqlite(stack, "wal.html"), sqlite(stack, "pragma.html")]
    done = app.batch_scrape_urls(urls, formats=["markdown", "rawHtml"], poll_interval=1)
    assert done.success and done.status == "completed" and len(done.data) == 2
    assert all(d.markdown and d.rawHtml for d in done.data)
    started = app.async_batch_scrape_urls(urls[:1])
    assert started.success and started.id
    finished_batch(batch_agent, started.id)
    status = app.check_batch_scrape_status(started.id)
    assert status.status == "completed" and status.completed == 1 and status.data[0].markdown


def test_js_sdk_batch_scrapes_and_cancels(batch_agent: str, slow_agent: str, stack: OfflineStack) -> None:
    urls = [sqlite(stack, "wal.html"), sqlite(stack, "pragma.html")]
    [batch, started, status] = call_js(
        batch_agent,
        {"method": "batchScrape", "args": [urls, {"options": {"formats": ["markdown"]}, "pollInterval": 1}]},
        {"method": "startBatchScrape", "args": [[*urls, "not a url"], {"options": {"formats": ["links"]}}]},
        {"method": "getBatchScrapeStatus", "args": ["$0"]},
    )
    assert batch["ok"], batch
    assert batch["result"]["status"] == "completed" and len(batch["result"]["data"]) == 2
    assert all(d["markdown"] for d in batch["result"]["data"])
    assert started["ok"] and started["result"]["invalidURLs"] == ["not a url"]
    assert status["ok"] and status["result"]["status"] in ("scraping", "completed")
    slow = [sqlite(stack, p) for p in ("wal.html", "pragma.html", "atomiccommit.html", "lang_vacuum.html")]
    [_, cancelled, after] = call_js(
        slow_agent,
        {"method": "startBatchScrape", "args": [slow, {}]},
        {"method": "cancelBatchScrape", "args": ["$0"]},
        {"method": "getBatchScrapeStatus", "args": ["$0"]},
    )
    assert cancelled == {"ok": True, "result": True}
    assert after["ok"] and after["result"]["status"] == "cancelled" and after["result"]["completed"] < len(slow)


def test_the_python_sdk_cancels_a_running_batch(slow_agent: str, stack: OfflineStack) -> None:
    app = Firecrawl(api_url=slow_agent)
    started = app.start_batch_scrape([sqlite(stack, p) for p in ("wal.html", "pragma.html", "whentouse.html")])
    assert app.cancel_batch_scrape(started.id) is True
    assert app.get_batch_scrape_status(started.id).status == "cancelled"


@pytest.mark.parametrize(("body", "status", "error"), [
    ({}, 400, "Bad Request"),
    ({"urls": []}, 400, "Bad Request"),
    ({"urls": [1]}, 400, "Bad Request"),
    ({"urls": ["not a url", "ftp://x.org/"]}, 400, "No valid URLs provided"),
    ({"urls": ["http://example.org/", "not a url"], "ignoreInvalidURLs": False}, 400, "invalid url"),
    ({"urls": [f"http://example.org/{n}" for n in range(MAX_URLS + 1)]}, 400, "BATCH_MAX_URLS"),
    ({"urls": ["http://example.org/"], "formats": ["nope"]}, 400, "unknown formats"),
    ({"urls": ["http://example.org/"], "actions": [{"type": "wait", "milliseconds": 5}]}, 400,
     "actions are not supported in batch scrapes"),
    ({"urls": ["http://example.org/"], "actions": [{"type": "wait"}]}, 400, "either milliseconds or selector"),
    ({"urls": ["http://example.org/"], "zeroDataRetention": True}, 400, "zeroDataRetention"),
    ({"urls": ["http://example.org/"], "maxConcurrency": 0}, 400, "Bad Request"),
    ({"urls": ["http://example.org/"], "appendToId": "no-such-job"}, 404, "Job not found"),
])
def test_bad_batch_requests_get_firecrawls_envelope(batch_agent: str, body: dict, status: int, error: str) -> None:
    for version in ("v2", "v1"):
        response = httpx.post(f"{batch_agent}/{version}/batch/scrape", json=body)
        assert response.status_code == status and error in response.json()["error"], (version, response.text)
        assert response.json()["success"] is False


def test_unknown_jobs_and_crawls_are_not_batches(batch_agent: str, stack: OfflineStack) -> None:
    crawl = httpx.post(f"{batch_agent}/v2/crawl", json={"url": sqlite(stack, "wal.html"), "limit": 1}).json()
    for job_id in ("no-such-job", crawl["id"]):
        for method, path in (("get", ""), ("delete", ""), ("get", "/errors")):
            response = httpx.request(method, f"{batch_agent}/v2/batch/scrape/{job_id}{path}")
            assert response.status_code == 404 and response.json()["error"] == "Job not found"


def test_a_batch_is_not_a_crawl(batch_agent: str, stack: OfflineStack) -> None:
    batch = httpx.post(f"{batch_agent}/v2/batch/scrape", json={"urls": [sqlite(stack, "wal.html")]}).json()
    for version in ("v2", "v1"):
        for method, path in (("get", ""), ("delete", ""), ("get", "/errors")):
            response = httpx.request(method, f"{batch_agent}/{version}/crawl/{batch['id']}{path}")
            assert response.status_code == 404 and response.json()["error"] == "Job not found", (method, path)
    assert finished_batch(batch_agent, batch["id"])["status"] == "completed"  # the crawl's DELETE left it alone


def test_a_batch_survives_agent_svc_being_killed(stack: OfflineStack, tmp_path: Path) -> None:
    urls = [sqlite(stack, p) for p in ("wal.html", "pragma.html", "atomiccommit.html", "lang_vacuum.html",
                                       "whentouse.html", "fileformat2.html")]
    first = batch_agent_service(stack, tmp_path, "agent-batch-restart", CRAWL_HOST_DELAY_S="0.5")
    with first:
        job = httpx.post(first.url + "/v2/batch/scrape", json={"urls": urls}).json()
        _wait_for(lambda: httpx.get(f"{first.url}/v2/batch/scrape/{job['id']}").json()["completed"] >= 2)
        assert first.process is not None
        first.process.kill()  # SIGKILL: no shutdown code runs
        first.process.wait()
    with batch_agent_service(stack, tmp_path, "agent-batch-restart") as second:
        status = finished_batch(second.url, job["id"])
    assert status["status"] == "completed" and status["completed"] == len(urls)
    assert sorted(d["metadata"]["sourceURL"] for d in status["data"]) == sorted(urls)


def _wait_for(condition, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout_s} s")
