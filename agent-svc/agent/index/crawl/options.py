"""Firecrawl's crawl request (contract §4.1), and how it becomes the options a crawl runs with
(core/crawl_options.py).

Lenient like the search request (unknown keys accepted and ignored), strict on the types of known keys, with
explicit limits: path patterns are RE2 (as upstream's, so a pattern cannot backtrack for minutes), at most
MAX_PATTERNS of at most MAX_PATTERN_CHARS each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal
from urllib.parse import urlsplit

import re2
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator

from agent.core.crawl_options import CrawlOptions
from agent.core.formats import DOCUMENT_FORMATS, FIRECRAWL_FORMATS
from agent.errors import InvalidRequest

MAX_PATTERNS = 100
MAX_PATTERN_CHARS = 1000
MAX_SEED_URLS = 10_000  # Wisp's `urls`: a list of pages to index without following links
MAX_URL_CHARS = 2048
_NOT_IN_HOSTS = set('<>#?@[]\\^|"{}`%')  # WHATWG's forbidden host code points (and spaces): `new URL` refuses them
V1_DEFAULT_MAX_DEPTH = 10  # v1's maxDepth when a crawl names none
_SCHEME = re2.compile(r"(?i)^[a-z][a-z0-9+.-]*:(?:$|[^0-9])")  # a scheme, not a host's port


class _ScrapeOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    formats: list[StrictStr | dict[str, Any]] | None = Field(None, max_length=20)
    onlyMainContent: StrictBool | None = None  # noqa: N815 - Firecrawl's wire names
    maxAge: StrictInt | None = Field(None, ge=0)  # noqa: N815
    storeInCache: StrictBool | None = None  # noqa: N815
    skipTlsVerification: StrictBool | None = None  # noqa: N815 - accepted, ignored: every certificate is verified


class CrawlRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    limit: StrictInt | None = Field(None, ge=1)
    includePaths: list[StrictStr] | None = Field(None, max_length=MAX_PATTERNS)  # noqa: N815
    excludePaths: list[StrictStr] | None = Field(None, max_length=MAX_PATTERNS)  # noqa: N815
    regexOnFullURL: StrictBool | None = None  # noqa: N815
    maxDiscoveryDepth: StrictInt | None = Field(None, ge=0, le=1000)  # noqa: N815
    crawlEntireDomain: StrictBool | None = None  # noqa: N815
    allowBackwardLinks: StrictBool | None = None  # noqa: N815 - v1's name of crawlEntireDomain
    allowSubdomains: StrictBool | None = None  # noqa: N815
    allowExternalLinks: StrictBool | None = None  # noqa: N815
    ignoreRobotsTxt: StrictBool | None = None  # noqa: N815
    sitemap: Literal["include", "skip", "only"] | None = None
    ignoreSitemap: StrictBool | None = None  # noqa: N815 - v1
    ignoreQueryParameters: StrictBool | None = None  # noqa: N815
    deduplicateSimilarURLs: StrictBool | None = None  # noqa: N815
    delay: StrictFloat | StrictInt | None = Field(None, gt=0, le=60)
    maxConcurrency: StrictInt | None = Field(None, ge=1, le=100)  # noqa: N815
    scrapeOptions: _ScrapeOptions | None = None  # noqa: N815
    webhook: StrictStr | dict[str, Any] | None = None
    prompt: StrictStr | None = Field(None, max_length=10_000)
    zeroDataRetention: StrictBool | None = None  # noqa: N815
    # Wisp's extension: more pages to index as seeds (the CLI's `urls FILE`)
    urls: list[StrictStr] | None = Field(None, max_length=MAX_SEED_URLS)

    @field_validator("includePaths", "excludePaths")
    @classmethod
    def _compiles(cls, patterns: list[str] | None) -> list[str] | None:
        for pattern in patterns or []:
            if len(pattern) > MAX_PATTERN_CHARS:
                raise ValueError(f"a path pattern may have at most {MAX_PATTERN_CHARS} characters")
            try:
                re2.compile(pattern)
            except re2.error as e:
                raise ValueError(f"invalid regular expression {pattern[:100]!r}: {e}") from None
        return patterns

    def to_options(self, max_pages: int) -> CrawlOptions:
        seeds = tuple(dict.fromkeys([page_url(self.url), *(page_url(u, ["urls", n]) for n, u in
                                                            enumerate(self.urls or []))]))
        if self.zeroDataRetention:
            raise InvalidRequest.check("zeroDataRetention is not supported: a crawl's Documents are kept for "
                                       "CRAWL_TTL_S", ["zeroDataRetention"])
        warnings = []
        if self.webhook is not None:
            warnings.append("webhook is not supported: poll GET /v2/crawl/{id}")
        limit = self.limit or max_pages
        if limit > max_pages:
            warnings.append(f"limit {limit} is above CRAWL_MAX_PAGES: crawling at most {max_pages} pages")
            limit = max_pages
        scrape = self.scrapeOptions or _ScrapeOptions()
        formats = tuple(f if isinstance(f, str) else str(f.get("type")) for f in scrape.formats or ["markdown"])
        if unknown := sorted(set(formats) - FIRECRAWL_FORMATS):
            raise InvalidRequest.check(f"unknown scrapeOptions.formats {unknown}", ["scrapeOptions", "formats"])
        if unsupported := sorted(set(formats) - set(DOCUMENT_FORMATS)):
            warnings.append(f"scrapeOptions.formats {unsupported} are not supported by crawls and were skipped")
        sitemap = self.sitemap or ("skip" if self.ignoreSitemap else "include")
        return CrawlOptions(
            seeds=seeds, limit=limit,
            include=tuple(self.includePaths or ()), exclude=tuple(self.excludePaths or ()),
            regex_on_full_url=bool(self.regexOnFullURL), max_depth=self.maxDiscoveryDepth,
            entire_domain=bool(self.crawlEntireDomain or self.allowBackwardLinks),
            subdomains=bool(self.allowSubdomains), external=bool(self.allowExternalLinks),
            ignore_robots=bool(self.ignoreRobotsTxt), sitemap=sitemap,
            ignore_query=bool(self.ignoreQueryParameters), dedupe_similar=self.deduplicateSimilarURLs is not False,
            delay_s=self.delay, max_concurrency=self.maxConcurrency, formats=formats,
            main_only=scrape.onlyMainContent is not False, warnings=tuple(warnings),
            max_age_ms=scrape.maxAge, store_in_cache=scrape.storeInCache is not False,
        )


class V1CrawlRequest(CrawlRequest):
    """v1's crawl request: `maxDepth` bounds how many path segments a crawled URL has beyond the start URL's,
    and a start URL already deeper than maxDepth is refused (Firecrawl's v1 schema; v2's maxDiscoveryDepth
    counts link hops and has no such check)."""

    maxDepth: StrictInt = Field(V1_DEFAULT_MAX_DEPTH, ge=0, le=1000)  # noqa: N815

    def to_options(self, max_pages: int) -> CrawlOptions:
        options = super().to_options(max_pages)
        depth = url_depth(options.seed)
        if depth > self.maxDepth:
            raise InvalidRequest.check("URL depth exceeds the specified maxDepth", ["url"])
        return replace(options, max_path_depth=depth + self.maxDepth)


def url_depth(url: str) -> int:
    """How many path segments `url` has, as Firecrawl counts them: / is 0, /a/b and /a/b/ are 2."""
    segments = urlsplit(url).path.split("/")
    return len(segments) - 1 - (1 if len(segments) > 1 and segments[0] == segments[-1] == "" else 0)


class ParamsPreviewRequest(BaseModel):
    """POST /v2/crawl/params-preview: the options a crawl's prompt would give."""

    model_config = ConfigDict(extra="allow")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    prompt: StrictStr = Field(min_length=1, max_length=10_000)

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, prompt: str) -> str:
        if not prompt.strip():
            raise ValueError("prompt must not be blank")
        return prompt


def page_url(url: str, path: list[str | int] | None = None) -> str:
    """`url` as a page to fetch: `http://` put before one without a scheme, as Firecrawl does; a 400 (naming
    the field at `path`, `url` by default) unless it then passes check_page_url. Unlike Firecrawl, which
    prefixes anything without `://`, a `scheme:` such as mailto: keeps its scheme (and is refused), while
    `host:port` is a host."""
    url = url.strip()
    url = url if _SCHEME.match(url) else f"http://{url}"
    check_page_url(url, path)
    return url


def split_urls(urls: list[str], skip_invalid: bool, read: Callable[[str, list[str | int]], str] = page_url
               ) -> tuple[list[str], list[str]]:
    """A request's `urls`, each read by `read` (page_url by default): the valid ones once each, in order, and
    the invalid ones as given (cut to MAX_URL_CHARS). Unless `skip_invalid`, the first invalid one is a 400
    naming it at ["urls", n]."""
    valid, invalid = [], []
    for n, given in enumerate(urls):
        try:
            valid.append(read(given, ["urls", n]))
        except InvalidRequest:
            if not skip_invalid:
                raise
            invalid.append(given[:MAX_URL_CHARS])
    return list(dict.fromkeys(valid)), invalid


def check_page_url(url: str, path: list[str | int] | None = None) -> None:
    """A 400 unless `url` is an absolute http(s) URL of at most MAX_URL_CHARS with a valid host and port."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError as e:
        raise InvalidRequest.check(f"invalid url {url[:200]!r}: {e}", path or ["url"]) from None
    host = parts.hostname or ""
    if (len(url) > MAX_URL_CHARS or parts.scheme not in ("http", "https") or not host
            or any(c.isspace() or c in _NOT_IN_HOSTS for c in host)):
        raise InvalidRequest.check(f"invalid url {url[:200]!r}: an absolute http(s) URL of at most "
                                   f"{MAX_URL_CHARS} characters is required", path or ["url"])
