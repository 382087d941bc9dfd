"""Firecrawl's crawl responses: paging, the status body's counts, `next`, warnings, and the errors body."""

from dataclasses import replace

import pytest

from agent.api.firecrawl.crawl_wire import (
    DEFAULT_PAGE,
    MAX_PAGE,
    TEAM_ID,
    active_body,
    errors_body,
    paging,
    started_body,
    status_body,
)
from agent.core.crawl_options import CrawlOptions
from agent.errors import BadRequest
from agent.index.crawl.options import CrawlRequest, V1CrawlRequest
from agent.state.jobs import CANCELLED, COMPLETED, FAILED, RUNNING, Counts, Job

BASE = "http://127.0.0.1:3002/v2"  # the routes' base: the API version the client reached
EXPIRES = 1_767_225_600.25  # 2026-01-01T00:00:00.250Z
JOB = Job("abc", EXPIRES - 86_400, EXPIRES, RUNNING, CrawlOptions(seeds=("https://docs.test/",), limit=10), None,
          3, 1, 12, 0, None, True)


def status(job: Job = JOB, completed: int = 2, documents: int = 2, skip: int = 0, limit: int | None = None) -> dict:
    return status_body(job, Counts(5, completed), [{"markdown": str(n)} for n in range(documents)], skip, limit, BASE)


def test_paging_defaults_and_parses_and_says_whether_a_limit_was_asked() -> None:
    assert paging(None, None) == (0, DEFAULT_PAGE, None)
    assert paging("20", "5") == (20, 5, 5)
    assert paging("0", str(MAX_PAGE)) == (0, MAX_PAGE, MAX_PAGE)


@pytest.mark.parametrize(("skip", "limit"), [("x", None), (None, "1.5"), ("-1", None), (None, "0"), (None, "-3"),
                                             (None, str(MAX_PAGE + 1)), ("1" * 11, None), (" 3", None),
                                             ("\u0663", None), ("", None)])
def test_bad_paging_is_a_400(skip: str | None, limit: str | None) -> None:
    with pytest.raises(BadRequest):
        paging(skip, limit)


def test_the_started_body_points_at_the_status() -> None:
    assert started_body("abc", BASE) == {"success": True, "id": "abc", "url": f"{BASE}/crawl/abc"}


def test_the_active_body_lists_each_crawl_with_its_team_and_firecrawls_option_names() -> None:
    assert active_body([JOB]) == {"success": True, "crawls": [{
        "id": "abc", "teamId": TEAM_ID, "url": "https://docs.test/", "created_at": "2025-12-31T00:00:00.250Z",
        "options": {"includePaths": [], "excludePaths": [], "regexOnFullURL": False, "limit": 10,
                    "crawlEntireDomain": False, "allowExternalLinks": False, "allowSubdomains": False,
                    "ignoreRobotsTxt": False, "sitemap": "include", "ignoreQueryParameters": False,
                    "deduplicateSimilarURLs": True,
                    "scrapeOptions": {"formats": ["markdown"], "onlyMainContent": True}}}]}
    assert active_body([]) == {"success": True, "crawls": []}


def test_the_options_listed_are_the_options_a_crawl_was_started_with() -> None:
    body = {"url": "https://docs.test/a/", "includePaths": ["^/a/b"], "maxDiscoveryDepth": 2, "limit": 7,
            "crawlEntireDomain": True, "allowSubdomains": True, "sitemap": "skip", "delay": 1.5,
            "maxConcurrency": 3, "scrapeOptions": {"formats": ["markdown", "links"], "onlyMainContent": False}}
    options = CrawlRequest.model_validate(body).to_options(100)
    [listed] = active_body([replace(JOB, options=options)])["crawls"]
    assert listed["options"] == {**{k: v for k, v in body.items() if k != "url"}, "excludePaths": [],
                                 "regexOnFullURL": False, "allowExternalLinks": False, "ignoreRobotsTxt": False,
                                 "ignoreQueryParameters": False, "deduplicateSimilarURLs": True}


def test_v1_lists_v1s_option_names() -> None:
    options = V1CrawlRequest.model_validate({"url": "https://docs.test/a/", "maxDepth": 3,
                                             "ignoreSitemap": True}).to_options(100)
    [listed] = active_body([replace(JOB, options=options)], "v1")["crawls"]
    assert listed["teamId"] == TEAM_ID and listed["url"] == "https://docs.test/a/"
    assert {k: listed["options"][k] for k in ("maxDepth", "ignoreSitemap", "allowBackwardLinks")} == {
        "maxDepth": 3, "ignoreSitemap": True, "allowBackwardLinks": False}
    assert "sitemap" not in listed["options"]


def test_the_status_carries_integer_counts_the_index_and_an_iso_expiry() -> None:
    body = status()
    assert body["success"] is True and body["status"] == RUNNING
    assert (body["total"], body["completed"], body["creditsUsed"]) == (5, 2, 2)
    assert body["expiresAt"] == "2026-01-01T00:00:00.250Z"
    assert body["index"] == {"indexed": 3, "unchanged": 1, "chunks": 12, "notIndexed": 0}
    assert body["data"] == [{"markdown": "0"}, {"markdown": "1"}]
    assert body["next"] == f"{BASE}/crawl/abc?skip=2"  # running, with 3 of its 5 pages pending
    assert "warning" not in body and "error" not in body


def test_a_running_crawls_next_counts_the_pages_still_pending_as_upstream() -> None:
    assert status(completed=4, documents=2)["next"] == f"{BASE}/crawl/abc?skip=2"
    assert status(completed=2, documents=2)["next"] == f"{BASE}/crawl/abc?skip=2"  # total 5: 3 pending
    assert "next" not in status(completed=5, documents=2, skip=3)  # the total reached
    # an empty page would point at itself: firecrawl-js would fetch it in a tight loop until the crawl ends
    assert "next" not in status(completed=2, documents=0, skip=2)


@pytest.mark.parametrize("ended", [COMPLETED, CANCELLED, FAILED])
def test_an_ended_crawls_next_counts_only_finished_documents(ended: str) -> None:
    # pages a cancelled or failed crawl left queued stay in its total: they must not keep a client paging
    job = replace(JOB, status=ended)
    assert status(job, completed=9, documents=3, skip=3, limit=3)["next"] == f"{BASE}/crawl/abc?skip=6&limit=3"
    assert "next" not in status(job, completed=2, documents=2)
    assert "next" not in status(job, completed=2, documents=0, skip=2)  # no empty page pointing at itself


def test_a_failed_crawl_is_still_a_success_with_its_error() -> None:
    body = status(replace(JOB, status=FAILED, error="RuntimeError: boom"))
    assert body["success"] is True and body["status"] == FAILED and body["error"] == "RuntimeError: boom"
    assert body["warning"] == "the crawl failed: RuntimeError: boom"


def test_a_crawl_stopped_at_its_time_limit_is_completed_with_a_warning() -> None:
    note = "stopped after CRAWL_MAX_DURATION_S (60 s) with 4 pages not visited"
    body = status(replace(JOB, status=COMPLETED, error=note))
    assert body["status"] == COMPLETED and body["warning"] == note and "error" not in body


def test_the_warning_joins_the_options_warnings_and_the_pages_not_indexed() -> None:
    job = replace(JOB, status=COMPLETED, not_indexed=2, index_error="semantic-svc answered HTTP 500",
                  options=replace(JOB.options, warnings=("webhook is not supported",)))
    assert status(job)["warning"] == ("webhook is not supported; 2 pages were not indexed: semantic-svc answered "
                                      "HTTP 500")


def test_the_errors_body_has_firecrawls_fields() -> None:
    errors = [{"id": "abc:k1", "url": "https://docs.test/1", "error": "HTTP 404", "code": "SCRAPE_HTTP_ERROR",
               "finished": EXPIRES},
              {"id": "abc:k2", "url": "https://docs.test/2", "error": "x", "code": "SCRAPE_FAILED", "finished": None}]
    body = errors_body("abc", errors, ["https://docs.test/private"])
    assert body["robotsBlocked"] == ["https://docs.test/private"]
    assert body["errors"][0] == {"id": "abc:k1", "url": "https://docs.test/1", "error": "HTTP 404",
                                 "code": "SCRAPE_HTTP_ERROR", "timestamp": "2026-01-01T00:00:00.250Z"}
    assert body["errors"][1]["timestamp"] is None
