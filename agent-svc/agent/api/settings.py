"""The API's settings: what a request gets when it names nothing, and the most it may ask, per endpoint."""

from __future__ import annotations

from fastapi import Request
from pydantic import Field

from agent.core.section import Section


class RequestSettings(Section):
    """What a request gets when it names nothing, and the most it may ask, per endpoint."""

    scrape_timeout_s: float = Field(30.0, gt=0, le=300, description="Deadline of a scrape that names no `timeout` "
                                    "(fetch, extraction and the LLM formats together; /v1 clients send 30 s)")
    batch_max_urls: int = Field(1000, ge=1, le=10_000, description="Most URLs of one batch scrape, appendToId's "
                                "included (Firecrawl sets no bound but its body size; its SDKs send 100 at a time)")
    crawl_max_pages: int = Field(10_000, ge=1, le=1_000_000, description="Most pages of one crawl (Firecrawl's "
                                 "default limit)")
    extract_max_urls: int = Field(10, ge=1, le=1000, description="Most `urls` of one extraction (Firecrawl's bound)")
    extract_site_pages: int = Field(10, ge=1, le=1000, description="Pages read of a site named with a trailing /* "
                                    "(the first its map lists; `limit` may ask for fewer)")
    extract_timeout_s: float = Field(180.0, gt=0, le=3600, description="Deadline of one extraction: pages and LLM "
                                     "together (a request's `timeout` may ask for less)")
    map_timeout_s: float = Field(10.0, gt=0, le=300, description="Deadline of a map that names no `timeout`: "
                                 "what the sources gave by then is the map")


def request_settings(request: Request) -> RequestSettings:
    """The API's settings, which the app was made with."""
    settings: RequestSettings = request.app.state.request_settings
    return settings
