"""POST /v2/extract and /v1/extract's request models (what the SDKs send, the limits, every 400) and the status
body GET /v2/extract/{id} returns at each stage of a job."""

import json
from typing import Any

import pytest

from agent.api.bodies import parsed
from agent.api.firecrawl.extract_wire import ExtractRequest, V1ExtractRequest, started_body, status_body
from agent.api.settings import RequestSettings
from agent.core.extract_job import ExtractJob, ExtractResult
from agent.errors import BadRequest, InvalidRequest
from agent.index.crawl.options import MAX_URL_CHARS
from agent.state.background import COMPLETED, FAILED, PROCESSING
from agent.state.extracts import ExtractRecord

SETTINGS = RequestSettings(extract_max_urls=3, extract_site_pages=10, extract_timeout_s=120)
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
# what firecrawl-py 4.55.0's v1 client sends for extract(urls, prompt=...): every option, null when not given
V1_PY_BODY = {"urls": ["https://a.test/"], "allowExternalLinks": False, "enableWebSearch": False,
              "showSources": False, "schema": None, "origin": "python-sdk@4.55.0", "prompt": "Get the name."}


def job(body: dict[str, Any], model: type[ExtractRequest] = ExtractRequest) -> tuple[ExtractJob, list[str]]:
    return parsed(json.dumps(body).encode(), model).to_job(SETTINGS)


def test_urls_a_prompt_and_a_schema_make_a_job_with_firecrawls_defaults() -> None:
    made, invalid = job({"urls": ["https://a.test/x", "b.test/y"], "prompt": "Get the name.", "schema": SCHEMA})
    assert invalid == []
    assert made == ExtractJob(("https://a.test/x", "http://b.test/y"), (), "Get the name.", SCHEMA,
                              timeout_s=120, site_limit=10)
    assert made.main_only is False and made.subdomains is True and made.show_sources is False


def test_what_the_sdks_send_is_accepted() -> None:
    made, _ = job(V1_PY_BODY, V1ExtractRequest)
    assert made.urls == ("https://a.test/",) and made.schema is None and made.web_search is False
    mcp, _ = job({"urls": ["https://a.test/"], "prompt": "p", "schema": SCHEMA, "origin": "mcp-fastmcp"})
    assert mcp.schema == SCHEMA
    js, _ = job({"urls": ["https://a.test/"], "prompt": "p", "showSources": True, "integration": "x",
                 "scrapeOptions": {"formats": ["markdown"], "onlyMainContent": True}, "agent": {"model": "FIRE-1"},
                 "__experimental_cacheMode": "direct"})
    assert js.show_sources and js.main_only and "agent" in js.warnings[0]


def test_a_trailing_star_names_the_site_and_limit_bounds_its_pages() -> None:
    made, _ = job({"urls": ["https://a.test/docs/*", "https://a.test/x"], "prompt": "p", "limit": 4})
    assert made.sites == ("https://a.test/docs/",) and made.urls == ("https://a.test/x",) and made.site_limit == 4
    assert job({"urls": ["https://a.test/*"], "prompt": "p", "limit": 500})[0].site_limit == 10  # the setting's bound


def test_web_search_implies_external_links_and_timeout_is_capped_by_the_setting() -> None:
    made, _ = job({"prompt": "who founded it", "enableWebSearch": True, "timeout": 999_000})
    assert made.urls == () and made.web_search and made.external and made.timeout_s == 120
    assert job({"prompt": "p", "timeout": 5000})[0].timeout_s == 5


def test_invalid_urls_are_left_out_in_v2_and_a_400_in_v1() -> None:
    made, invalid = job({"urls": ["https://a.test/", "ftp://b.test/", "http://"], "prompt": "p"})
    assert made.urls == ("https://a.test/",) and invalid == ["ftp://b.test/", "http://"]
    with pytest.raises(InvalidRequest, match="invalid url") as refused:
        job({"urls": ["https://a.test/", "ftp://b.test/*"], "prompt": "p"}, V1ExtractRequest)
    assert refused.value.details[0]["path"] == ["urls", 1]  # the validation envelope names the URL at fault
    assert job({"urls": ["ftp://b.test/"], "prompt": "p", "ignoreInvalidURLs": True}, V1ExtractRequest)[1]


def test_sites_and_pages_are_each_extracted_once_and_a_long_invalid_url_is_listed_cut() -> None:
    long = "ftp://b.test/" + "x" * 5000
    made, invalid = job({"urls": ["a.test/*", "http://a.test/*", "a.test/p"], "prompt": "p"})
    assert made.sites == ("http://a.test/",) and made.urls == ("http://a.test/p",) and invalid == []
    made, invalid = job({"urls": ["a.test/p", "http://a.test/p", long], "prompt": "p"})
    assert made.urls == ("http://a.test/p",) and invalid == [long[:MAX_URL_CHARS]]


@pytest.mark.parametrize(("body", "problem"), [
    ({}, "Either 'urls' or 'prompt' must be provided"),
    ({"urls": [], "prompt": "  "}, "Either 'urls' or 'prompt' must be provided"),
    ({"urls": ["ftp://x.test/"]}, "none of the urls is valid"),
    ({"urls": [f"https://a.test/{i}" for i in range(4)], "prompt": "p"}, "at most 3 are accepted"),
    ({"urls": ["https://a.test/"], "schema": {"type": "objekt"}}, "schema is not a valid JSON Schema"),
    ({"urls": ["https://a.test/"], "schema": [1]}, "schema must be a JSON Schema object"),
])
def test_bad_requests_are_400s_that_say_why(body: dict, problem: str) -> None:
    with pytest.raises(BadRequest, match=problem):
        job(body)


@pytest.mark.parametrize("body", [{"urls": "https://a.test/"}, {"prompt": 3}, {"prompt": "x" * 10_001},
                                  {"urls": ["https://a.test/"], "limit": 0}, {"showSources": "yes"}])
def test_wrong_types_and_bounds_are_400s_with_details(body: dict) -> None:
    with pytest.raises(InvalidRequest):
        job(body)


def test_the_started_body_lists_invalid_urls_only_when_there_are_some() -> None:
    assert started_body("id1", []) == {"success": True, "id": "id1"}
    assert started_body("id1", ["ftp://x"]) == {"success": True, "id": "id1", "invalidURLs": ["ftp://x"]}


def record(status: str, result: ExtractResult | None = None, show_sources: bool = True) -> ExtractRecord:
    return ExtractRecord("id1", ExtractJob(("https://a.test/",), (), "p", None, show_sources=show_sources),
                         "key:a", 1_800_000_000.0, status, result)


def test_the_status_of_a_job_at_each_stage() -> None:
    assert status_body(record(PROCESSING)) == {"success": True, "status": "processing", "data": [],
                                               "expiresAt": "2027-01-15T08:00:00.000Z"}
    done = ExtractResult({"name": "Ada"}, {"name": ["https://a.test/"]}, ("1 of 2 pages could not be read",))
    assert status_body(record(COMPLETED, done)) == {
        "success": True, "status": "completed", "data": {"name": "Ada"}, "expiresAt": "2027-01-15T08:00:00.000Z",
        "warning": "1 of 2 pages could not be read", "sources": {"name": ["https://a.test/"]}}
    assert "sources" not in status_body(record(COMPLETED, done, show_sources=False))
    failed = status_body(record(FAILED, ExtractResult(error="no valid JSON came out of the pages")))
    assert failed["success"] is False and failed["status"] == "failed" and failed["data"] == []
    assert failed["error"] == "no valid JSON came out of the pages"
