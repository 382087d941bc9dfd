import json
from datetime import UTC, datetime

import pytest

from agent.api.firecrawl.envelope import error_body
from agent.api.firecrawl.search_wire import (
    MAX_SAFE_INTEGER,
    V1SearchRequest,
    V2SearchRequest,
    parse_request,
    v1_response,
    v2_response,
)
from agent.core.hits import Hit
from agent.core.outcome import SearchOutcome
from agent.core.pages import CacheUse
from agent.core.query import SourceRequest
from agent.errors import BadRequest, InvalidJson, InvalidRequest, InvalidRequestBody, SearchTimeout, UpstreamError


def v2(**body) -> object:
    return parse_request(json.dumps(body).encode(), V2SearchRequest)


def test_defaults() -> None:
    query = v2(query="hello")
    assert (query.limit, query.lang, query.country, query.timeout_ms) == (10, "en", "us", 60_000)
    assert query.sources == [SourceRequest("web")] and query.retrieval_mode == ""
    assert parse_request(b'{"query": "hello"}', V1SearchRequest).limit == 5
    assert v2(query="hello", location="Germany").country is None  # Firecrawl: no country default with a location


def test_what_the_python_sdk_sends_is_accepted() -> None:
    query = v2(query="hello", sources=[{"type": "web"}, {"type": "news"}, {"type": "images"}],
               categories=[{"type": "github"}, {"type": "research"}, {"type": "pdf"}], limit=3, tbs="qdr:d",
               location="Germany", country="de", timeout=30000, integration="myapp", ignoreInvalidURLs=True,
               scrapeOptions={"onlyMainContent": False, "removeBase64Images": True, "fastMode": False,
                              "blockAds": True, "storeInCache": True, "maxAge": 14400000,
                              "formats": ["markdown", "links"], "mobile": False},
               origin="python-sdk@4.55.0")
    assert [s.type for s in query.sources] == ["web", "news", "images"]
    assert query.categories == ["github", "research", "pdf"] and query.scrape_formats == ["markdown", "links"]
    assert query.ignore_invalid_urls and query.timeout_ms == 30000
    assert query.cache_use == CacheUse(14_400_000, store=True)  # the SDK's 4 hours, as asked


def test_scrape_options_max_age_and_store_in_cache_reach_every_page_of_the_search() -> None:
    assert v2(query="hello").cache_use == CacheUse()  # the service's DEFAULT_MAX_AGE_MS
    assert v2(query="hello", scrapeOptions={"maxAge": 0, "storeInCache": False}).cache_use == CacheUse(0, False)
    v1 = parse_request(b'{"query": "hello", "scrapeOptions": {"maxAge": 60000}}', V1SearchRequest)
    assert v1.cache_use == CacheUse(60_000)
    for bad in ({"maxAge": -1}, {"maxAge": 2**53}, {"maxAge": 1.5}, {"storeInCache": "no"}):
        with pytest.raises(InvalidRequestBody):
            v2(query="hello", scrapeOptions=bad)


def test_mixed_arrays_nulls_and_unknown_keys_are_accepted() -> None:
    query = v2(query="q", sources=["web", {"type": "news", "tbs": "qdr:w"}], categories=["github", {"type": "pdf"}],
               limit=None, integration=None, search_tool_name="x", highlights=True, enterprise=["anon"],
               domainTools=True, toolDetail="compact", scrapeOptions={"formats": [{"type": "json", "schema": {}}]})
    assert query.sources == [SourceRequest("web"), SourceRequest("news", tbs="qdr:w")]
    assert query.limit == 10 and query.scrape_formats == ["json"]


def test_aliases_duplicates_and_engine_strings_are_normalized() -> None:
    query = v2(query="q", sources=["web", "web"], categories=["code", "repo", "github"], engines="a, b,a")
    assert query.sources == [SourceRequest("web")]
    assert query.categories == ["developer", "github"] and query.engines == ["a", "b"]


@pytest.mark.parametrize(
    ("body", "code", "path"),
    [
        ({}, "invalid_type", ["query"]),
        ({"query": 5}, "invalid_type", ["query"]),
        ({"query": ""}, "too_small", ["query"]),
        ({"query": "q", "limit": 0}, "too_small", ["limit"]),
        ({"query": "q", "limit": 101}, "too_big", ["limit"]),
        ({"query": "q", "limit": 2.5}, "invalid_type", ["limit"]),
        ({"query": "q", "limit": "3"}, "invalid_type", ["limit"]),
        ({"query": "q", "timeout": 0}, "too_small", ["timeout"]),
        ({"query": "q", "sources": [5]}, "custom", ["sources"]),
        ({"query": "q", "sources": "web"}, "invalid_type", ["sources"]),
        ({"query": "q", "ignoreInvalidURLs": "yes"}, "invalid_type", ["ignoreInvalidURLs"]),
        ({"query": "q", "scrapeOptions": {"maxAge": "soon"}}, "invalid_type", ["scrapeOptions", "maxAge"]),
        ({"query": "q", "retrieval_mode": 3}, "invalid_type", ["retrieval_mode"]),
    ],
)
def test_known_keys_are_type_checked_with_zod_like_details(body, code, path) -> None:
    with pytest.raises(InvalidRequestBody) as raised:
        parse_request(json.dumps(body).encode(), V2SearchRequest)
    [issue] = raised.value.details
    assert issue["code"] == code and issue["path"] == path and issue["message"]


@pytest.mark.parametrize("raw", [b"{bad", b"\xff\xfe"])
def test_malformed_json(raw) -> None:
    with pytest.raises(InvalidJson):
        parse_request(raw, V2SearchRequest)


@pytest.mark.parametrize("raw", [b"[1, 2]", b"", b'"query"'])
def test_a_body_that_is_not_an_object(raw) -> None:
    with pytest.raises(InvalidRequestBody):
        parse_request(raw, V2SearchRequest)


def test_semantic_checks() -> None:
    with pytest.raises(BadRequest, match="cannot be used together"):
        v2(query="q", includeDomains=["a.com"], excludeDomains=["b.com"])
    with pytest.raises(BadRequest, match="blank"):
        v2(query="   ")


HITS = {
    "web": [Hit("https://github.com/a/b", "Repo", "A repo"), Hit("https://x.org/doc.pdf", "Doc", "")],
    "news": [Hit("https://n.org/1", "News", "Snip", published=datetime(2026, 11, 30, 8, tzinfo=UTC),
                 thumbnail="https://n.org/1.jpg"), Hit("https://n.org/2", "Undated", "S")],
    "images": [Hit("https://p.org/", "Pic", "", img_src="https://p.org/a.png", resolution=(640, 480)),
               Hit("https://p.org/2", "No size", "", img_src="https://p.org/b.png")],
}


def test_v2_response_has_the_contract_fields_per_bucket() -> None:
    query = v2(query="q", sources=["web", "news", "images"], categories=["pdf"])
    body = v2_response(SearchOutcome(HITS, ("w1", "w2"), timings={"searxng": 1.0, "total": 2.0}), query)
    web, news, images = body["data"]["web"], body["data"]["news"], body["data"]["images"]
    assert web[0] == {"url": "https://github.com/a/b", "title": "Repo", "description": "A repo", "position": 1,
                      "category": "github"}
    assert web[1]["category"] == "pdf"
    assert news[0] == {"title": "News", "url": "https://n.org/1", "snippet": "Snip",
                       "date": "2026-11-30T08:00:00+00:00", "imageUrl": "https://n.org/1.jpg",
                       "image_url": "https://n.org/1.jpg", "position": 1}
    assert news[1] == {"title": "Undated", "url": "https://n.org/2", "snippet": "S", "position": 2}
    assert images[0] == {"title": "Pic", "imageUrl": "https://p.org/a.png", "image_url": "https://p.org/a.png",
                         "url": "https://p.org/", "imageWidth": 640, "image_width": 640, "imageHeight": 480,
                         "image_height": 480, "position": 1}
    assert "imageWidth" not in images[1]
    assert body["warning"] == "w1; w2" and body["creditsUsed"] == 0 and "total" in body["timings_ms"]


def test_v1_response_is_flat_and_says_when_empty() -> None:
    assert v1_response(SearchOutcome({"web": HITS["web"]}))["data"][0] == {
        "url": "https://github.com/a/b", "title": "Repo", "description": "A repo"}
    empty = v1_response(SearchOutcome({"web": []}, ("SearXNG was slow",)))
    assert empty["data"] == [] and empty["warning"] == "No search results found; SearXNG was slow"


@pytest.mark.parametrize(
    ("error", "status", "body"),
    [
        (InvalidJson(), 400, {"success": False, "error": "Bad request, malformed JSON",
                              "code": "BAD_REQUEST_INVALID_JSON"}),
        (InvalidRequestBody([{"code": "c", "path": [], "message": "m"}]), 400,
         {"success": False, "error": "Invalid request body", "details": [{"code": "c", "path": [], "message": "m"}]}),
        (BadRequest("nope"), 400, {"success": False, "error": "nope"}),
        (SearchTimeout("slow"), 408, {"success": False, "error": "slow", "code": "SEARCH_TIMEOUT"}),
        (UpstreamError("down"), 502, {"success": False, "error": "down", "code": "UPSTREAM_ERROR"}),
    ],
)
def test_error_mapper(error, status, body) -> None:
    assert error.status == status and error_body(error) == body




def test_the_packed_context_comes_before_the_results_for_a_reader_of_the_head() -> None:
    query = v2(query="q", sources=["web"])
    body = v2_response(SearchOutcome(HITS, context="[1] Best\nthe answer"), query)
    serialized = json.dumps(body)
    assert list(body)[:2] == ["success", "context"] and serialized.index("the answer") < serialized.index('"data"')


def test_a_refused_search_body_keeps_search_controllers_envelope() -> None:
    with pytest.raises(InvalidRequestBody) as refused:
        parse_request(b'{"query": "q", "limit": 0}', V2SearchRequest)
    assert error_body(refused.value) == {"success": False, "error": "Invalid request body", "details": [
        {"code": "too_small", "path": ["limit"], "message": "Input should be greater than or equal to 1"}]}


@pytest.mark.parametrize(("details", "error"), [
    ([{"code": "too_big", "path": ["limit"], "message": "too big"}], "Bad Request"),
    ([{"code": "custom", "path": ["waitFor"], "message": "waitFor must not exceed half of timeout"},
      {"code": "too_big", "path": ["limit"], "message": "too big"}], "waitFor must not exceed half of timeout"),
    ([{"code": "invalid_type", "path": ["url"], "message": "Required"},
      {"code": "custom", "path": ["url"], "message": "URL depth exceeds the specified maxDepth"}], "Bad Request"),
])
def test_any_other_refused_body_reads_as_firecrawls_global_zod_handler(details: list, error: str) -> None:
    assert error_body(InvalidRequest(details)) == {"success": False, "error": error, "code": "BAD_REQUEST",
                                                   "details": details}
    assert error_body(InvalidRequest.check("no good", ["url", 0])) == {
        "success": False, "error": "no good", "code": "BAD_REQUEST",
        "details": [{"code": "custom", "path": ["url", 0], "message": "no good"}]}


def test_a_search_timeout_has_no_upper_bound_below_max_safe_integer() -> None:
    assert v2(query="q", timeout=MAX_SAFE_INTEGER).timeout_ms == MAX_SAFE_INTEGER
    with pytest.raises(InvalidRequestBody):
        v2(query="q", timeout=MAX_SAFE_INTEGER + 1)
