"""Firecrawl's crawl request into CrawlOptions: defaults, limits, the v1 names, and what is refused."""

import json

import pytest
from pydantic import ValidationError

from agent.core.crawl_options import CrawlOptions
from agent.core.pages import CacheUse
from agent.errors import BadRequest, InvalidRequest
from agent.index.crawl.options import (
    MAX_PATTERN_CHARS,
    MAX_PATTERNS,
    MAX_URL_CHARS,
    CrawlRequest,
    V1CrawlRequest,
    split_urls,
    url_depth,
)

SEED = "https://docs.test/guide/"


def options(max_pages: int = 50, **fields: object) -> CrawlOptions:
    return CrawlRequest.model_validate({"url": SEED, **fields}).to_options(max_pages)


def test_a_bare_request_crawls_the_seed_with_firecrawls_defaults() -> None:
    got = options()
    assert got == CrawlOptions(seeds=(SEED,), limit=50)
    assert got.seed == SEED and got.sitemap == "include" and got.formats == ("markdown",)
    assert got.dedupe_similar and got.main_only and not got.entire_domain and got.warnings == ()


def test_every_option_maps_to_its_field() -> None:
    got = options(limit=7, includePaths=["^/guide/a"], excludePaths=["secret"], regexOnFullURL=True,
                  maxDiscoveryDepth=2, crawlEntireDomain=True, allowSubdomains=True, allowExternalLinks=True,
                  ignoreRobotsTxt=True, sitemap="only", ignoreQueryParameters=True, deduplicateSimilarURLs=False,
                  delay=0.5, maxConcurrency=3,
                  scrapeOptions={"formats": ["html", {"type": "links"}], "onlyMainContent": False})
    assert got == CrawlOptions(
        seeds=(SEED,), limit=7, include=("^/guide/a",), exclude=("secret",), regex_on_full_url=True, max_depth=2,
        entire_domain=True, subdomains=True, external=True, ignore_robots=True, sitemap="only", ignore_query=True,
        dedupe_similar=False, delay_s=0.5, max_concurrency=3, formats=("html", "links"), main_only=False)


def test_scrape_options_max_age_and_store_in_cache_reach_the_crawls_pages() -> None:
    got = options(scrapeOptions={"maxAge": 3_600_000, "storeInCache": False})
    assert got.cache_use == CacheUse(3_600_000, store=False)
    assert options().cache_use == CacheUse()  # the service's DEFAULT_MAX_AGE_MS
    assert CrawlOptions.from_json(json.loads(json.dumps(got.as_json()))) == got
    older = {k: v for k, v in got.as_json().items() if k not in ("max_age_ms", "store_in_cache")}
    assert CrawlOptions.from_json(older).cache_use == CacheUse()  # a job stored before the page cache
    for bad in ({"maxAge": -1}, {"maxAge": "1h"}, {"storeInCache": "yes"}):
        with pytest.raises(ValidationError):
            options(scrapeOptions=bad)


def test_wisps_urls_are_more_seeds_after_the_url_each_once() -> None:
    got = options(urls=["https://docs.test/b", SEED, "https://docs.test/a", "https://docs.test/b"])
    assert got.seeds == (SEED, "https://docs.test/b", "https://docs.test/a")


def test_a_limit_above_crawl_max_pages_is_cut_with_a_warning() -> None:
    got = options(max_pages=10, limit=500)
    assert got.limit == 10
    assert got.warnings == ("limit 500 is above CRAWL_MAX_PAGES: crawling at most 10 pages",)
    assert options(max_pages=10, limit=10).warnings == ()


def test_a_webhook_is_accepted_and_warned_about_and_a_prompt_is_left_to_the_route() -> None:
    got = options(webhook={"url": "https://hooks.test/"}, prompt="only the API docs")
    assert len(got.warnings) == 1 and got.warnings[0].startswith("webhook is not supported")


def test_v1_names_still_work_and_v2_names_win() -> None:
    assert options(allowBackwardLinks=True).entire_domain
    assert options(ignoreSitemap=True).sitemap == "skip"
    assert options(ignoreSitemap=True, sitemap="only").sitemap == "only"
    assert options(ignoreSitemap=False).sitemap == "include"


def test_only_an_explicit_false_turns_off_dedupe_and_main_content() -> None:
    assert options(deduplicateSimilarURLs=None).dedupe_similar
    assert not options(deduplicateSimilarURLs=False).dedupe_similar
    assert options(scrapeOptions={}).main_only and options(scrapeOptions={"onlyMainContent": True}).main_only


def test_unknown_keys_are_accepted() -> None:
    assert options(origin="sdk", someFutureOption={"x": 1}).limit == 50


@pytest.mark.parametrize("fields", [
    {"limit": 0}, {"limit": "5"}, {"limit": 2.5}, {"maxDiscoveryDepth": -1}, {"maxConcurrency": 101},
    {"delay": 0}, {"delay": 61}, {"sitemap": "sometimes"}, {"crawlEntireDomain": "yes"},
    {"includePaths": ["(unclosed"]}, {"excludePaths": ["a" * (MAX_PATTERN_CHARS + 1)]},
    {"includePaths": ["a"] * (MAX_PATTERNS + 1)}, {"includePaths": [r"(a)\1"]},  # RE2: no backreferences
    {"url": ""}, {"url": 5}, {"urls": ["https://docs.test/", 3]},
])
def test_bad_values_of_known_keys_are_refused(fields: dict) -> None:
    with pytest.raises(ValidationError):
        CrawlRequest.model_validate({"url": SEED, **fields})


def test_an_invalid_pattern_is_named_in_the_error() -> None:
    with pytest.raises(ValidationError, match=r"invalid regular expression '\(unclosed'"):
        CrawlRequest.model_validate({"url": SEED, "excludePaths": ["ok", "(unclosed"]})


@pytest.mark.parametrize("url", ["ftp://docs.test/", "https:///path", "https://docs.test:99999/",
                                 "javascript:alert(1)", "mailto:a@docs.test", "docs.test:99999/"])
def test_a_seed_must_be_an_absolute_http_url(url: str) -> None:
    with pytest.raises(InvalidRequest, match="invalid url") as refused:
        CrawlRequest.model_validate({"url": url}).to_options(10)
    assert refused.value.details[0]["path"] == ["url"] and refused.value.code == "BAD_REQUEST"


@pytest.mark.parametrize(("url", "seed"), [("docs.test/guide", "http://docs.test/guide"),
                                           ("docs.test:8080/guide/", "http://docs.test:8080/guide/"),
                                           (" https://docs.test/ ", "https://docs.test/")])
def test_a_seed_without_a_scheme_gets_http_as_in_a_scrape(url: str, seed: str) -> None:
    assert CrawlRequest.model_validate({"url": url}).to_options(10).seeds == (seed,)
    assert CrawlRequest.model_validate({"url": "https://a.test/", "urls": [url]}).to_options(10).seeds[1] == seed


@pytest.mark.parametrize(("url", "depth"), [("https://docs.test", 0), ("https://docs.test/", 0),
                                            ("https://docs.test/a", 1), ("https://docs.test/a/b/", 2),
                                            ("https://docs.test/a/b/c/d?x=1/2", 4)])
def test_url_depth_counts_path_segments_as_firecrawl(url: str, depth: int) -> None:
    assert url_depth(url) == depth


def test_v1s_max_depth_refuses_a_deeper_start_url_and_bounds_the_crawl() -> None:
    with pytest.raises(InvalidRequest) as refused:
        V1CrawlRequest.model_validate({"url": "https://docs.test/a/b/c/d", "maxDepth": 2}).to_options(10)
    assert refused.value.details == [{"code": "custom", "path": ["url"],
                                      "message": "URL depth exceeds the specified maxDepth"}]
    at_depth = V1CrawlRequest.model_validate({"url": "https://docs.test/a/b", "maxDepth": 2}).to_options(10)
    assert at_depth.max_path_depth == 4  # upstream adds the start URL's depth
    assert V1CrawlRequest.model_validate({"url": "https://docs.test/"}).to_options(10).max_path_depth == 10
    with pytest.raises(InvalidRequest):  # v1's default maxDepth is 10
        V1CrawlRequest.model_validate({"url": "https://docs.test/" + "a/" * 11}).to_options(10)
    # v2 has maxDiscoveryDepth (link hops) and no such check
    deep = CrawlRequest.model_validate({"url": "https://docs.test/a/b/c/d", "maxDiscoveryDepth": 2})
    assert deep.to_options(10).max_path_depth is None


def test_every_seed_of_urls_is_checked() -> None:
    with pytest.raises(InvalidRequest, match=r"invalid url 'mailto:a@docs\.test'"):
        options(urls=["https://docs.test/a", "mailto:a@docs.test"])
    with pytest.raises(BadRequest, match=f"at most {MAX_URL_CHARS} characters"):
        options(urls=["https://docs.test/" + "a" * MAX_URL_CHARS])


def test_options_survive_a_json_round_trip() -> None:
    got = options(limit=7, includePaths=["^/guide/"], maxDiscoveryDepth=1, delay=1.5, webhook="https://hooks.test/",
                  scrapeOptions={"formats": ["markdown", "links"]}, urls=["https://docs.test/other"])
    stored = json.loads(json.dumps(got.as_json()))
    assert CrawlOptions.from_json(stored) == got
    assert stored["seeds"] == [SEED, "https://docs.test/other"] and stored["include"] == ["^/guide/"]


def test_zero_data_retention_is_refused() -> None:
    with pytest.raises(BadRequest, match="zeroDataRetention is not supported"):
        options(zeroDataRetention=True)
    assert options(zeroDataRetention=False).limit == 50


def test_an_unknown_format_is_refused_and_a_known_one_crawls_lack_is_warned_about() -> None:
    with pytest.raises(BadRequest, match=r"unknown scrapeOptions.formats \['markdwon'\]"):
        options(scrapeOptions={"formats": ["markdwon"]})
    got = options(scrapeOptions={"formats": ["markdown", "summary", {"type": "json", "schema": {}}]})
    assert got.formats == ("markdown", "summary", "json")
    assert got.warnings == ("scrapeOptions.formats ['json', 'summary'] are not supported by crawls and were skipped",)


@pytest.mark.parametrize("delay", [True, "1.5", [1]])
def test_delay_is_a_number(delay: object) -> None:
    with pytest.raises(ValidationError):
        CrawlRequest.model_validate({"url": SEED, "delay": delay})
    assert options(delay=2).delay_s == 2


def test_stored_options_with_keys_this_version_lacks_still_load() -> None:
    stored = {**options(limit=3).as_json(), "written_by_a_later_version": 1}
    assert CrawlOptions.from_json(stored) == options(limit=3)
    with pytest.raises(TypeError):
        CrawlOptions.from_json({"limit": 3})  # no seeds: the store fails that job


def test_split_urls_reads_each_url_once_and_lists_the_invalid_ones_cut() -> None:
    long = "ftp://docs.test/" + "x" * 5000
    valid, invalid = split_urls(["docs.test/a", "http://docs.test/a", "not a url", long], skip_invalid=True)
    assert valid == ["http://docs.test/a"] and invalid == ["not a url", long[:MAX_URL_CHARS]]


def test_split_urls_refuses_the_first_invalid_url_naming_its_place() -> None:
    with pytest.raises(InvalidRequest, match=r"invalid url 'http://a b/'") as refused:
        split_urls(["https://docs.test/", "a b/", "ftp://docs.test/"], skip_invalid=False)
    assert refused.value.details[0]["path"] == ["urls", 1]
