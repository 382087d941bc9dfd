"""Firecrawl's batch scrape on the wire: the request becomes a batch job's options, read by the scrape's own
rules; invalid URLs are listed or refused; the bounds; and the started, status and errors bodies."""

import json

import pytest

from agent.api.bodies import parsed
from agent.api.firecrawl.batch_wire import (
    BatchScrapeRequest,
    V1BatchScrapeRequest,
    batch_errors_body,
    batch_status_body,
    started_body,
)
from agent.core.crawl_options import BATCH, CrawlOptions
from agent.errors import BadRequest, InvalidRequest
from agent.search.scrape import ScrapeFailed
from agent.state.jobs import RUNNING, Counts, Job

BASE = "http://127.0.0.1:3002/v2"
# exactly what firecrawl-py 4.55's Firecrawl.batch_scrape sends with its defaults
PYTHON_SDK_BODY = {"urls": ["https://docs.test/a", "https://docs.test/b"], "formats": ["markdown"],
                   "onlyMainContent": True, "removeBase64Images": True, "fastMode": False, "blockAds": True,
                   "storeInCache": True, "maxAge": 14_400_000, "mobile": False, "origin": "python-sdk@4.55.0"}


def batch(body: dict, model: type = BatchScrapeRequest, max_urls: int = 100):
    return parsed(json.dumps(body).encode(), model).to_batch(30.0, max_urls)


def test_the_python_sdks_body_is_a_batch_of_its_urls_alone() -> None:
    made = batch(PYTHON_SDK_BODY)
    options = made.options
    assert options.kind == BATCH and options.batch and options.seeds == tuple(PYTHON_SDK_BODY["urls"])
    assert (options.max_depth, options.sitemap, options.ignore_robots) == (0, "skip", True)
    assert options.formats == ("markdown",) and options.main_only and options.warnings == ()
    assert (options.max_age_ms, options.store_in_cache) == (14_400_000, True)  # for the page cache
    assert options.page_timeout_s == 30.0 and options.limit == 100  # appendToId may fill the batch up to it
    assert made.invalid == [] and made.append_to is None


def test_scrape_options_are_read_as_a_scrape_reads_them() -> None:
    options = batch({"urls": ["docs.test/a"], "formats": ["html", {"type": "links"}], "onlyMainContent": False,
                     "timeout": 5000, "maxConcurrency": 3, "storeInCache": False}).options
    assert options.seeds == ("http://docs.test/a",)  # a missing scheme is http://, as a scrape's
    assert options.formats == ("html", "links") and not options.main_only
    assert (options.page_timeout_s, options.max_concurrency, options.store_in_cache) == (5.0, 3, False)


def test_v1_formats_and_their_options_are_v1s() -> None:
    options = batch({"urls": ["https://docs.test/a"], "formats": ["rawHtml", "markdown"]}, V1BatchScrapeRequest).options
    assert options.formats == ("rawHtml", "markdown")
    with pytest.raises(BadRequest, match="json or extract"):
        batch({"urls": ["https://docs.test/a"], "formats": ["json", "extract"]}, V1BatchScrapeRequest)


def test_llm_formats_and_the_unsupported_are_skipped_with_a_warning_naming_them() -> None:
    options = batch({"urls": ["https://docs.test/a"], "webhook": "https://hook.test/",
                     "formats": ["markdown", {"type": "summary"}, {"type": "json", "prompt": "price"}, "screenshot"],
                     "includeTags": ["main"]}).options
    assert options.formats == ("markdown",)
    warnings = "; ".join(options.warnings)
    assert "screenshot are not supported in batch scrapes" in warnings and "includeTags" in warnings
    assert "formats ['json', 'summary'] ask the LLM" in warnings and "webhook is not supported" in warnings


def test_invalid_urls_are_listed_and_skipped_by_default() -> None:
    made = batch({"urls": ["https://docs.test/a", "not a url", "ftp://docs.test/", "https://docs.test/a"]})
    assert made.options.seeds == ("https://docs.test/a",) and made.invalid == ["not a url", "ftp://docs.test/"]


def test_invalid_urls_are_a_400_when_not_ignored() -> None:
    with pytest.raises(InvalidRequest, match="invalid url") as refused:
        batch({"urls": ["https://docs.test/a", "http://a b/"], "ignoreInvalidURLs": False})
    assert refused.value.details[0]["path"] == ["urls", 1]  # the validation envelope names the URL at fault
    made = batch({"urls": ["https://docs.test/a"], "ignoreInvalidURLs": False})
    assert made.invalid is None  # and started_body leaves invalidURLs out, as Firecrawl does


@pytest.mark.parametrize(("body", "error"), [
    ({"urls": ["not a url"]}, "No valid URLs provided"),
    ({"urls": [f"https://docs.test/{n}" for n in range(4)]}, "at most 3 URLs (BATCH_MAX_URLS)"),
    ({"urls": ["https://docs.test/"], "zeroDataRetention": True}, "zeroDataRetention is not supported"),
    ({"urls": ["https://docs.test/"], "formats": ["nope"]}, "unknown formats"),
    ({"urls": ["https://docs.test/"], "timeout": 1000, "waitFor": 900}, "waitFor"),
])
def test_bad_batches_are_400s_naming_why(body: dict, error: str) -> None:
    with pytest.raises(BadRequest, match=error.replace("(", r"\(").replace(")", r"\)")):
        batch(body, max_urls=3)


@pytest.mark.parametrize("body", [{}, {"urls": []}, {"urls": "https://docs.test/"}, {"urls": [1]},
                                  {"urls": ["https://docs.test/"], "maxConcurrency": 0},
                                  {"urls": ["https://docs.test/"], "ignoreInvalidURLs": "yes"},
                                  {"urls": ["https://docs.test/"], "maxAge": -1},
                                  {"urls": ["https://docs.test/"], "appendToId": ""}])
def test_malformed_batches_are_invalid_request_bodies(body: dict) -> None:
    with pytest.raises(InvalidRequest):
        batch(body)


def test_actions_are_refused_as_a_scrape_refuses_them() -> None:
    with pytest.raises(ScrapeFailed) as refused:
        batch({"urls": ["https://docs.test/"], "actions": [{"type": "wait", "milliseconds": 10}]})
    assert refused.value.status == 400 and refused.value.code == "SCRAPE_ACTIONS_NOT_SUPPORTED"


def test_append_to_id_names_the_batch_to_join() -> None:
    assert batch({"urls": ["https://docs.test/"], "appendToId": "0193-abc"}).append_to == "0193-abc"


def test_the_started_body_points_at_the_batchs_status_and_lists_invalid_urls() -> None:
    assert started_body("abc", BASE, ["x"]) == {"success": True, "id": "abc", "url": f"{BASE}/batch/scrape/abc",
                                                "invalidURLs": ["x"]}
    assert "invalidURLs" not in started_body("abc", BASE, None)


def test_the_status_body_is_the_crawls_on_the_batch_route_without_index_counts() -> None:
    job = Job("abc", 0.0, 86_400.0, RUNNING, CrawlOptions(seeds=("https://docs.test/",), limit=10, kind=BATCH),
              None, 0, 0, 0, 0, None, True)
    body = batch_status_body(job, Counts(5, 4), [{"markdown": "a"}, {"markdown": "b"}], 0, 2, BASE)
    assert body["next"] == f"{BASE}/batch/scrape/abc?skip=2&limit=2" and "index" not in body
    assert (body["status"], body["total"], body["completed"], body["creditsUsed"]) == ("scraping", 5, 4, 4)


def test_the_errors_body_says_success_for_the_async_python_client() -> None:
    body = batch_errors_body("abc", [{"id": "abc:k", "url": "https://docs.test/", "error": "boom",
                                      "code": "SCRAPE_FAILED", "finished": 0.0}], [])
    assert body["success"] is True and body["errors"][0]["timestamp"] == "1970-01-01T00:00:00.000Z"
    assert body["robotsBlocked"] == []
