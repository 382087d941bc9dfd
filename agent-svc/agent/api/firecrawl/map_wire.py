"""POST /v2/map and /v1/map as Firecrawl sends and answers them: lenient like search's (unknown keys accepted and
ignored), strict on the types of known keys, with Firecrawl's limits (`limit` ≤ 100,000 on v2, ≤ 30,000 on
v1; default 5,000); each request becomes a MapJob."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)
from wisp_obs.requests import request_id

from agent.api.firecrawl.scrape_wire import MAX_TIMEOUT_MS
from agent.api.settings import RequestSettings
from agent.index.crawl.options import MAX_URL_CHARS, page_url
from agent.index.map.site_map import MapJob, SiteMap, Sitemap

DEFAULT_LIMIT = 5000
V2_MAX_LIMIT = 100_000
V1_MAX_LIMIT = 30_000


class _MapFields(BaseModel):
    """What /v1 and /v2 map requests share."""

    model_config = ConfigDict(extra="allow")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    search: StrictStr | None = None
    includeSubdomains: StrictBool | None = None  # noqa: N815 - Firecrawl's wire names
    ignoreQueryParameters: StrictBool | None = None  # noqa: N815
    timeout: StrictInt | StrictFloat | None = Field(None, gt=0, le=MAX_TIMEOUT_MS)
    location: dict[str, Any] | None = None
    origin: StrictStr | None = None
    integration: StrictStr | None = None

    @field_validator("search")
    @classmethod
    def _bounded_search(cls, search: str | None, info: ValidationInfo) -> str | None:
        limits = (info.context or {}).get("limits")
        if search is not None and limits and len(search) > limits.max_query_chars:
            raise ValueError(f"search has {len(search)} characters; at most {limits.max_query_chars} are accepted")
        return search

    def _job(self, limit: int | None, sitemap: Sitemap, settings: RequestSettings) -> MapJob:
        url = page_url(self.url)
        warnings = ("location is not supported and was ignored",) if self.location else ()
        return MapJob(url, limit or DEFAULT_LIMIT,
                      self.timeout / 1000 if self.timeout is not None else settings.map_timeout_s,
                      (self.search or "").strip() or None, sitemap, self.includeSubdomains is not False,
                      self.ignoreQueryParameters is not False, warnings)


class MapRequest(_MapFields):
    """Firecrawl's v2 map request."""

    sitemap: Literal["include", "skip", "only"] | None = None
    limit: StrictInt | None = Field(None, ge=1, le=V2_MAX_LIMIT)

    def to_job(self, settings: RequestSettings) -> MapJob:
        return self._job(self.limit, self.sitemap or "include", settings)


class V1MapRequest(_MapFields):
    """v1's map request: `ignoreSitemap` and `sitemapOnly` in place of `sitemap`."""

    ignoreSitemap: StrictBool | None = None  # noqa: N815
    sitemapOnly: StrictBool | None = None  # noqa: N815
    limit: StrictInt | None = Field(None, ge=1, le=V1_MAX_LIMIT)

    def to_job(self, settings: RequestSettings) -> MapJob:
        sitemap: Sitemap = "only" if self.sitemapOnly else "skip" if self.ignoreSitemap else "include"
        return self._job(self.limit, sitemap, settings)


def v2_body(site_map: SiteMap) -> dict[str, Any]:
    links = [{"url": link.url, **({"title": link.title} if link.title else {}),
              **({"description": link.description} if link.description else {})} for link in site_map.links]
    return _with_warning({"success": True, "id": request_id(), "links": links}, site_map)


def v1_body(site_map: SiteMap) -> dict[str, Any]:
    return _with_warning({"success": True, "links": [link.url for link in site_map.links]}, site_map)


def _with_warning(body: dict[str, Any], site_map: SiteMap) -> dict[str, Any]:
    if site_map.warnings:
        body["warning"] = "; ".join(site_map.warnings)
    return body
