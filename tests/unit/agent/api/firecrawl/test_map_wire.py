"""POST /v2/map and /v1/map's request models (Firecrawl's defaults and limits) and response shapes."""

import json
from typing import Any

import pytest

from agent.api.bodies import parsed
from agent.api.firecrawl.map_wire import MapRequest, V1MapRequest, v1_body, v2_body
from agent.api.gate.body_limits import RequestLimits
from agent.api.settings import RequestSettings
from agent.errors import BadRequest, InvalidRequest
from agent.index.map.site_map import MapJob, MapLink, SiteMap

SETTINGS = RequestSettings(map_timeout_s=7.0)
URL = "https://docs.test/guide/"


def job(body: dict[str, Any], model: type[MapRequest] | type[V1MapRequest] = MapRequest) -> MapJob:
    return parsed(json.dumps({"url": URL, **body}).encode(), model, RequestLimits(max_query_chars=50)).to_job(
        SETTINGS)


def test_defaults_are_firecrawls() -> None:
    assert job({}) == MapJob(URL, 5000, 7.0)  # subdomains and ignoring queries on, sitemap included
    assert job({"url": "docs.test"}).url == "http://docs.test"


def test_what_the_sdks_and_the_mcp_server_send() -> None:
    # firecrawl-mcp: {url, sitemap, search, includeSubdomains, ignoreQueryParameters, limit, origin}
    mcp = job({"sitemap": "only", "search": " api ", "includeSubdomains": False, "ignoreQueryParameters": False,
               "limit": 30, "origin": "mcp-server", "timeout": 2500, "integration": "langchain",
               "threatProtection": {}, "unknownKey": 1})
    assert mcp == MapJob(URL, 30, 2.5, "api", "only", False, False)
    assert job({"location": {"country": "de"}}).warnings == ("location is not supported and was ignored",)


def test_v1_names_the_sitemap_with_two_flags() -> None:
    assert job({}, V1MapRequest).sitemap == "include"
    assert job({"ignoreSitemap": True}, V1MapRequest).sitemap == "skip"
    assert job({"sitemapOnly": True, "ignoreSitemap": True, "useIndex": True}, V1MapRequest).sitemap == "only"


@pytest.mark.parametrize(("body", "model"), [
    ({"url": 7}, MapRequest), ({"url": ""}, MapRequest), ({"limit": 0}, MapRequest), ({"limit": 100_001}, MapRequest),
    ({"limit": 30_001}, V1MapRequest), ({"limit": "10"}, MapRequest), ({"sitemap": "all"}, MapRequest),
    ({"timeout": 0}, MapRequest), ({"timeout": 300_001}, MapRequest), ({"includeSubdomains": "yes"}, MapRequest),
    ({"search": "x" * 51}, MapRequest), ({"ignoreSitemap": 1}, V1MapRequest),
])
def test_out_of_range_or_mistyped_keys_are_invalid_bodies(body: dict, model: type) -> None:
    with pytest.raises(InvalidRequest):
        job(body, model)


@pytest.mark.parametrize("url", ["ftp://docs.test/", "http://", "http://docs.test:99999/"])
def test_urls_that_are_not_http_pages_are_400s(url: str) -> None:
    with pytest.raises(BadRequest, match="invalid url"):
        job({"url": url})


def test_v2_links_carry_titles_when_known_and_v1_links_are_strings() -> None:
    site_map = SiteMap([MapLink(URL, "Guide", "All of it"), MapLink(URL + "a.html")], ["cut short"])
    body = v2_body(site_map)
    assert body["success"] is True and body["id"] and body["warning"] == "cut short"
    assert body["links"] == [{"url": URL, "title": "Guide", "description": "All of it"}, {"url": URL + "a.html"}]
    assert v1_body(SiteMap([MapLink(URL)], [])) == {"success": True, "links": [URL]}
