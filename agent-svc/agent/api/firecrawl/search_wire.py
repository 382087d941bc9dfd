"""Firecrawl's /v2/search and /v1/search wire formats: request models, response shapes, error envelope (the
scrape options and integer bounds the other Firecrawl endpoints share).

Lenient where Firecrawl's clients need it (unknown keys, mixed string/object arrays, nulls), strict on
the types of known keys; see ../shared/reference/firecrawl-search-contract.md.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)
from wisp_obs.requests import request_id

from agent.answers.page_answers import page_ask
from agent.answers.schemas import checked_schema
from agent.api.bodies import DEFAULT_LIMITS, limits_of, parsed
from agent.api.gate.body_limits import RequestLimits
from agent.core.formats import PAGE_ASK_KINDS
from agent.core.hits import Hit
from agent.core.outcome import SearchOutcome
from agent.core.pages import SERVICE_CACHE_USE, CacheUse
from agent.core.query import PageAsk, SearchQuery, SourceRequest
from agent.core.sources import DEFAULT_SOURCE, source
from agent.errors import BadRequest, InvalidRequestBody
from agent.retrieval.translation import CATEGORY_ALIASES, category_label, normalize_domains
from agent.upstream.sources.settings import RESERVED

MAX_SAFE_INTEGER = 2**53 - 1  # zod's .int() on Firecrawl's side: larger numbers are not integers to its clients
SafeInt = Annotated[StrictInt, Field(le=MAX_SAFE_INTEGER)]


def _typed_items(value: Any) -> Any:
    """Firecrawl sends sources, categories and formats as strings, `{type}` objects, or (JS SDK) a mix."""
    if value is None or not isinstance(value, list):
        return value
    items = []
    for item in value:
        if isinstance(item, str):
            items.append({"type": item})
        elif isinstance(item, dict) and isinstance(item.get("type"), str):
            items.append(item)
        else:
            raise ValueError('each item must be a string or an object with a string "type"')
    return items


def _string_list(value: Any) -> Any:
    """`engines` may be a list or SearXNG's own comma-separated string."""
    return [e.strip() for e in value.split(",") if e.strip()] if isinstance(value, str) else value


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class SourceObject(_Lenient):
    type: StrictStr = Field(min_length=1)
    tbs: StrictStr | None = None
    filter: StrictStr | None = None
    lang: StrictStr | None = None
    country: StrictStr | None = None
    location: StrictStr | None = None


class CategoryObject(_Lenient):
    type: StrictStr = Field(min_length=1)


class CacheOptions(_Lenient):
    """Firecrawl's page cache keys, of a scrape and of scrapeOptions."""

    maxAge: SafeInt | None = Field(None, ge=0)  # noqa: N815 - Firecrawl's wire names
    storeInCache: StrictBool | None = None  # noqa: N815

    def cache_use(self) -> CacheUse:
        return CacheUse(self.maxAge, self.storeInCache is not False)


class ScrapeOptions(CacheOptions):
    """Accepted with every key the SDKs add; `formats` and `onlyMainContent` drive scraping (search/documents.py),
    `maxAge` and `storeInCache` the page cache."""

    formats: Annotated[list[dict[str, Any]] | None, BeforeValidator(_typed_items)] = None
    onlyMainContent: StrictBool | None = None  # noqa: N815 - Firecrawl's wire names
    removeBase64Images: StrictBool | None = None  # noqa: N815
    fastMode: StrictBool | None = None  # noqa: N815
    blockAds: StrictBool | None = None  # noqa: N815
    skipTlsVerification: StrictBool | None = None  # noqa: N815 - accepted, ignored: every certificate is verified
    mobile: StrictBool | None = None
    timeout: SafeInt | None = Field(None, gt=0)
    waitFor: SafeInt | None = Field(None, ge=0)  # noqa: N815

    def format_names(self) -> list[str]:
        return [str(f["type"]) for f in self.formats or []]

    def page_asks(self) -> tuple[PageAsk, ...]:
        asks = tuple(page_ask(f) for f in self.formats or [] if f["type"] in PAGE_ASK_KINDS)
        if len({a.kind for a in asks}) < len(asks):
            raise BadRequest("scrapeOptions.formats names summary, json and question at most once each")
        return asks


class _SearchRequestBase(_Lenient):
    query: StrictStr = Field(min_length=1)
    tbs: StrictStr | None = None
    filter: StrictStr | None = None
    lang: StrictStr | None = None
    country: StrictStr | None = None
    location: StrictStr | None = None
    timeout: SafeInt | None = Field(None, gt=0)
    ignoreInvalidURLs: StrictBool | None = None  # noqa: N815
    scrapeOptions: ScrapeOptions | None = None  # noqa: N815
    origin: StrictStr | None = None
    integration: StrictStr | None = None

    @field_validator("query")
    @classmethod
    def _bounded_query(cls, query: str, info: ValidationInfo) -> str:
        limits = limits_of(info)
        if limits and len(query) > limits.max_query_chars:
            raise ValueError(f"query has {len(query)} characters; at most {limits.max_query_chars} are accepted")
        return query

    def _base_query(self, limit: int, **extra: Any) -> SearchQuery:
        if not self.query.strip():
            raise BadRequest("query must not be blank")
        return SearchQuery(
            query=self.query,
            limit=limit,
            tbs=self.tbs,
            lang=self.lang or "en",
            # Firecrawl defaults country to "us" only when neither country nor location is given
            country=self.country or (None if self.location else "us"),
            timeout_ms=self.timeout or 60_000,
            ignore_invalid_urls=bool(self.ignoreInvalidURLs),
            scrape_formats=self.scrapeOptions.format_names() if self.scrapeOptions else [],
            page_asks=self.scrapeOptions.page_asks() if self.scrapeOptions else (),
            main_content_only=self.scrapeOptions.onlyMainContent is not False if self.scrapeOptions else True,
            cache_use=self.scrapeOptions.cache_use() if self.scrapeOptions else SERVICE_CACHE_USE,
            **extra,
        )


MAX_SYSTEM_PROMPT_CHARS = 4000


class LLMOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: StrictStr = Field(min_length=1, max_length=200)


class V2SearchRequest(_SearchRequestBase):
    limit: StrictInt | None = Field(None, ge=1, le=100)
    sources: Annotated[list[SourceObject] | None, BeforeValidator(_typed_items)] = None
    categories: Annotated[list[CategoryObject] | None, BeforeValidator(_typed_items)] = None
    includeDomains: list[StrictStr] | None = None  # noqa: N815
    excludeDomains: list[StrictStr] | None = None  # noqa: N815
    safe: StrictBool | None = None
    highlights: StrictBool | None = None
    enterprise: list[StrictStr] | None = None
    asyncScraping: StrictBool | None = None  # noqa: N815
    threatProtection: dict[str, Any] | None = None  # noqa: N815
    domainTools: StrictBool | None = None  # noqa: N815
    toolDetail: StrictStr | None = None  # noqa: N815
    # Wisp's extensions (seed 003, seed 000's per-request engine override)
    retrieval_mode: StrictStr | None = None  # checked against the registry of modes (ranking/modes)
    search_type: StrictStr | None = None
    engines: Annotated[list[StrictStr] | None, BeforeValidator(_string_list)] = None
    fetch_top: StrictInt | None = Field(None, ge=0, le=12)
    explain: StrictBool | None = None
    rerank: StrictBool | None = None
    output_schema: dict[str, Any] | None = None  # search_type "rich": checked by schemas.checked_schema
    system_prompt: StrictStr | None = Field(None, max_length=MAX_SYSTEM_PROMPT_CHARS)
    llm: LLMOptions | None = None
    stream: StrictBool | None = None

    @field_validator("includeDomains", "excludeDomains")
    @classmethod
    def _bounded_domains(cls, domains: list[str] | None, info: ValidationInfo) -> list[str] | None:
        limits = limits_of(info)
        if limits and domains and len(domains) > limits.max_domains:
            raise ValueError(f"{len(domains)} domains; at most {limits.max_domains} are accepted")
        return domains

    def to_query(self) -> SearchQuery:
        if self.includeDomains and self.excludeDomains:
            raise BadRequest("includeDomains and excludeDomains cannot be used together")
        sources = [SourceRequest(s.type, s.tbs, s.lang, s.country) for s in self.sources or []]
        categories = [CATEGORY_ALIASES.get(c.type, c.type) for c in self.categories or []]
        return self._base_query(
            self.limit or V2_DEFAULT_LIMIT,
            sources=_unique_sources(sources) or [SourceRequest(DEFAULT_SOURCE)],
            categories=list(dict.fromkeys(categories)),
            safe=self.safe,
            include_domains=normalize_domains(self.includeDomains or [], "includeDomains"),
            exclude_domains=normalize_domains(self.excludeDomains or [], "excludeDomains"),
            engines=list(dict.fromkeys(self.engines or [])),
            retrieval_mode=self.retrieval_mode or "",  # "": the service's DEFAULT_RETRIEVAL_MODE
            fetch_top=self.fetch_top,
            explain=bool(self.explain),
            rerank=self.rerank,
            search_type=self.search_type or "",  # "": the service's DEFAULT_SEARCH_TYPE
            output_schema=checked_schema(self.output_schema) if self.output_schema is not None else None,
            system_prompt=self.system_prompt,
            llm_model=self.llm.model if self.llm else None,
            stream=bool(self.stream),
        )


class V1SearchRequest(_SearchRequestBase):
    limit: StrictInt | None = Field(None, ge=1, le=100)

    def to_query(self) -> SearchQuery:
        return self._base_query(self.limit or V1_DEFAULT_LIMIT)


V2_DEFAULT_LIMIT = 10  # current upstream code (the docs still say 5); the sync Python SDK leaves it to us
V1_DEFAULT_LIMIT = 5


def parse_request(raw: bytes, model: type[V2SearchRequest] | type[V1SearchRequest],
                  limits: RequestLimits = DEFAULT_LIMITS) -> SearchQuery:
    """Raw body → SearchQuery; raises InvalidJson, InvalidRequestBody (with zod-like details) or BadRequest."""
    return parsed(raw, model, limits, InvalidRequestBody).to_query()


def v2_response(outcome: SearchOutcome, query: SearchQuery) -> dict[str, Any]:
    data = {
        source: [{**_item(source, hit, position, query.categories), **_ranking(outcome, hit),
                  **outcome.documents.get(hit.url, {})} for position, hit in enumerate(hits, 1)]
        for source, hits in outcome.buckets.items()
    }
    body: dict[str, Any] = {"success": True}
    if outcome.abstained:
        body["abstained"] = True
    if outcome.context is not None:
        # first: a reader (or an agent) that takes only the head of the response gets the best passages
        body["context"] = outcome.context
    body |= {"data": data, "creditsUsed": 0, "id": request_id()}
    if outcome.warnings:
        body["warning"] = "; ".join(outcome.warnings)
    if outcome.explain is not None:
        body["explain"] = [asdict(row) for row in outcome.explain]
    if outcome.answer is not None:
        body["answer"] = asdict(outcome.answer)
    body["timings_ms"] = dict(outcome.timings)
    return body


def v1_response(outcome: SearchOutcome) -> dict[str, Any]:
    hits = outcome.buckets.get(DEFAULT_SOURCE, [])
    warnings = list(outcome.warnings) if hits else ["No search results found", *outcome.warnings]
    body: dict[str, Any] = {
        "success": True,
        "data": [{"url": h.url, "title": h.title, "description": h.content, **outcome.documents.get(h.url, {})}
                 for h in hits],
        "id": request_id(),
    }
    if warnings:
        body["warning"] = "; ".join(warnings)
    return body


def _item(name: str, hit: Hit, position: int, categories: list[str]) -> dict[str, Any]:
    shape = source(name).shape
    if shape == "news":
        item: dict[str, Any] = {"title": hit.title, "url": hit.url, "snippet": hit.content}
        if hit.published:
            item["date"] = hit.published.isoformat()
        if image := hit.thumbnail or hit.img_src:
            # snake_case twin: firecrawl-py's async client does not map imageUrl (contract §4.1)
            item["imageUrl"] = item["image_url"] = image
    elif shape == "images":
        item = {"title": hit.title, "imageUrl": hit.img_src or hit.thumbnail or hit.url, "url": hit.url}
        item["image_url"] = item["imageUrl"]
        if hit.resolution:
            item["imageWidth"] = item["image_width"] = hit.resolution[0]
            item["imageHeight"] = item["image_height"] = hit.resolution[1]
    else:
        item = {"url": hit.url, "title": hit.title, "description": hit.content}
    item["position"] = position
    if shape != "images" and (label := category_label(hit.url, categories)):
        item["category"] = label
    if hit.found_by and hit.found_by[0] not in RESERVED:
        item["engine"] = hit.found_by[0]  # the extra source (SEARCH_SOURCES) that returned it
    return item


def _ranking(outcome: SearchOutcome, hit: Hit) -> dict[str, Any]:
    """Wisp's extension on a ranked result: its relevance (`score`, the model's; `probability`, calibrated), what
    orders the results (`rank_score`, when a fusion does), what was scored, and its ranked passages."""
    detail = outcome.details.get(hit.url)
    if detail is None or detail.score is None:
        return {}
    extension: dict[str, Any] = {"score": round(detail.score, 4), "evidence": detail.evidence}
    if detail.rank_score is not None:
        extension["rank_score"] = round(detail.rank_score, 4)
    if detail.probability is not None:
        extension["probability"] = detail.probability
    if detail.passages:
        extension["passages"] = detail.passages
    return extension


def _unique_sources(sources: list[SourceRequest]) -> list[SourceRequest]:
    """One bucket per source type; the first object of a type wins."""
    seen: dict[str, SourceRequest] = {}
    for request in sources:
        seen.setdefault(request.type, request)
    return list(seen.values())


