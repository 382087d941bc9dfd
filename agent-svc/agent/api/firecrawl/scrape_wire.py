"""POST /v2/scrape and /v1/scrape as Firecrawl sends them: lenient like search's (unknown keys accepted and
ignored), strict on the types of known keys, with explicit limits; each becomes a ScrapeJob."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationInfo, field_validator

from agent.answers.page_answers import page_ask
from agent.api.firecrawl.browser_wire import SCREENSHOT_FORMATS, actions_of, screenshot_of
from agent.api.firecrawl.search_wire import CacheOptions, SafeInt, ScrapeOptions
from agent.core.browsing import BrowserWork
from agent.core.formats import DOCUMENT_FORMATS, FIRECRAWL_FORMATS, PAGE_ASK_KINDS
from agent.core.pages import CacheUse
from agent.core.query import PageAsk
from agent.errors import BadRequest, InvalidRequest
from agent.index.crawl.options import MAX_URL_CHARS, page_url
from agent.search.scrape import ScrapeJob

MAX_FORMATS = 20
MAX_TAGS = 100
MAX_HEADERS = 50
MAX_ACTIONS = 50  # Firecrawl's own bound
MAX_TIMEOUT_MS = 300_000  # a longer `timeout` is accepted (Firecrawl sets none) and cut to this, with a warning
MAX_WAIT_FOR_MS = 60_000


class _PageFields(BaseModel):
    """What /v1 and /v2 scrape requests share besides `formats`."""

    model_config = ConfigDict(extra="allow")

    url: StrictStr = Field(min_length=1, max_length=MAX_URL_CHARS)
    onlyMainContent: StrictBool | None = None  # noqa: N815 - Firecrawl's wire names
    timeout: SafeInt | None = Field(None, gt=0)
    waitFor: StrictInt | None = Field(None, ge=0, le=MAX_WAIT_FOR_MS)  # noqa: N815
    includeTags: list[StrictStr] | None = Field(None, max_length=MAX_TAGS)  # noqa: N815
    excludeTags: list[StrictStr] | None = Field(None, max_length=MAX_TAGS)  # noqa: N815
    headers: dict[str, StrictStr] | None = Field(None, max_length=MAX_HEADERS)
    actions: list[dict[str, Any]] | None = Field(None, max_length=MAX_ACTIONS)
    mobile: StrictBool | None = None
    location: dict[str, Any] | None = None
    zeroDataRetention: StrictBool | None = None  # noqa: N815 - a scrape keeps nothing anyway
    skipTlsVerification: StrictBool | None = None  # noqa: N815 - v1's; ignored with a warning: TLS is always verified
    origin: StrictStr | None = None
    integration: StrictStr | None = None

    @field_validator("waitFor")
    @classmethod
    def _half_of_timeout(cls, wait_for: int | None, info: ValidationInfo) -> int | None:
        """Firecrawl's refinement, checked only when both are given."""
        timeout = info.data.get("timeout")
        if wait_for and timeout and wait_for > timeout / 2:
            raise ValueError("waitFor must not exceed half of timeout")
        return wait_for

    def _job(self, items: list[dict[str, Any]], default_timeout_s: float, cache_use: CacheUse,
             json_key: str = "json") -> ScrapeJob:
        """The job these fields and format objects ask for; a 400 naming what is wrong."""
        url = page_url(self.url)
        if len(items) > MAX_FORMATS:
            raise InvalidRequest.check(f"formats may name at most {MAX_FORMATS} formats", ["formats"])
        names = [str(item["type"]) for item in items]
        if unknown := sorted(set(names) - FIRECRAWL_FORMATS):
            raise InvalidRequest.check(f"unknown formats {unknown}", ["formats"])
        timeout_ms = min(self.timeout or round(default_timeout_s * 1000), MAX_TIMEOUT_MS)
        return ScrapeJob(url, tuple(dict.fromkeys(n for n in names if n in DOCUMENT_FORMATS)), _asks(items),
                         self.onlyMainContent is not False, timeout_ms, self._warnings(names), json_key,
                         cache_use, self._browser_work(items))

    def _browser_work(self, items: list[dict[str, Any]]) -> BrowserWork:
        wait_for_ms = self.waitFor or 0
        return BrowserWork(wait_for_ms, bool(self.mobile), tuple((self.headers or {}).items()),
                           actions_of(self.actions or [], wait_for_ms), screenshot_of(items))

    def _warnings(self, names: list[str]) -> tuple[str, ...]:
        warnings = []
        if self.timeout and self.timeout > MAX_TIMEOUT_MS:
            warnings.append(f"timeout {self.timeout} ms is above Wisp's limit: the scrape had {MAX_TIMEOUT_MS} ms")
        if skipped := sorted(set(names) - set(DOCUMENT_FORMATS) - set(PAGE_ASK_KINDS) - SCREENSHOT_FORMATS):
            warnings.append(f"formats {skipped} are not supported and were skipped")
        ignored = [name for name, value in (("includeTags", self.includeTags), ("excludeTags", self.excludeTags),
                                            ("location", self.location)) if value]
        if ignored:
            warnings.append(f"{', '.join(ignored)} are not supported and were ignored")
        if self.skipTlsVerification:
            warnings.append("skipTlsVerification was ignored: Wisp verifies every page's TLS certificate")
        return tuple(warnings)


class ScrapeRequest(_PageFields, ScrapeOptions):
    """Firecrawl's v2 scrape request: its scrape options and the URL (contract §2.1)."""

    def to_job(self, default_timeout_s: float) -> ScrapeJob:
        return self._job(self.formats or [{"type": "markdown"}], default_timeout_s, self.cache_use())


class V1ScrapeRequest(_PageFields, CacheOptions):
    """v1's scrape request: `formats` are strings, and `json`/`extract` take their options beside them (§3)."""

    formats: list[StrictStr] | None = Field(None, max_length=MAX_FORMATS)
    jsonOptions: dict[str, Any] | None = None  # noqa: N815
    extract: dict[str, Any] | None = None

    def to_job(self, default_timeout_s: float) -> ScrapeJob:
        names = self.formats or ["markdown"]
        if {"json", "extract"} <= set(names):
            raise InvalidRequest.check("formats name json or extract, not both", ["formats"])
        items = [{**(self.jsonOptions or {}), "type": "json"} if name == "json" else
                 {**(self.extract or {}), "type": "json"} if name == "extract" else {"type": name} for name in names]
        return self._job(items, default_timeout_s, self.cache_use(), "extract" if "extract" in names else "json")


def _asks(items: list[dict[str, Any]]) -> tuple[PageAsk, ...]:
    """The formats the LLM answers, each checked; a 400 on `formats` when one is malformed or named twice."""
    try:
        asks = tuple(page_ask(item) for item in items if item["type"] in PAGE_ASK_KINDS)
    except BadRequest as e:
        raise InvalidRequest.check(e.message, ["formats"]) from None
    if len({a.kind for a in asks}) < len(asks):
        raise InvalidRequest.check("formats name summary, json and question at most once each", ["formats"])
    return asks
