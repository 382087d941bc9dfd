"""Tavily's /search and /extract wire formats, as tavily-python, langchain-tavily and Open WebUI send them: request
models that map onto Wisp's own search and scrape, the answers they parse, and Tavily's error shape
(`{"detail": {"error": ...}}`). What each field maps to is in docs/api.md."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from wisp_obs.requests import request_id
from wisp_text.markdown import unescaped

from agent.core.hits import Hit
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery, SourceRequest
from agent.core.sources import DEFAULT_SOURCE
from agent.errors import WispError
from agent.index.crawl.options import MAX_URL_CHARS
from agent.retrieval.translation import normalize_domains
from agent.search.scrape import ScrapeJob

SEARCH_PATH, EXTRACT_PATH, RESEARCH_PATH = "/search", "/extract", "/research"
PATHS = frozenset({SEARCH_PATH, EXTRACT_PATH, RESEARCH_PATH})
MAX_EXTRACT_URLS = 20  # Tavily's own bound
ADVANCED_FETCH_TOP = 12  # `advanced`: every candidate the runner may fetch is read and passed on
IMAGES_SOURCE = "images"
# Tavily's time_range (and its one-letter forms) → the tbs window SearXNG's translation knows
_TIME_RANGES = {"day": "qdr:d", "d": "qdr:d", "week": "qdr:w", "w": "qdr:w", "month": "qdr:m", "m": "qdr:m",
                "year": "qdr:y", "y": "qdr:y"}
# search_depth → Wisp's retrieval mode; the two quick depths skip the model as Tavily's skip its reranking
_DEPTH_MODES = {"basic": "hybrid", "advanced": "hybrid", "fast": "keyword", "ultra-fast": "keyword"}


def _url_list(value: Any) -> Any:
    """`urls` may be one URL or a list of them."""
    return [value] if isinstance(value, str) else value


class TavilySearchRequest(BaseModel):
    """Tavily's search body; keys Wisp has no use for are accepted and ignored (docs/api.md lists them)."""

    model_config = ConfigDict(extra="allow")

    query: StrictStr = Field(min_length=1)
    api_key: StrictStr | None = None  # older clients' key; the gate reads it (api/gate/auth.py)
    search_depth: Literal["basic", "advanced", "fast", "ultra-fast"] | None = None
    topic: Literal["general", "news", "finance"] | None = None
    max_results: StrictInt | None = Field(None, ge=0, le=20)
    time_range: Literal["day", "week", "month", "year", "d", "w", "m", "y"] | None = None
    days: StrictInt | None = Field(None, ge=1)
    include_answer: StrictBool | Literal["basic", "advanced"] | None = None
    include_raw_content: StrictBool | Literal["markdown", "text"] | None = None
    include_images: StrictBool | None = None
    include_image_descriptions: StrictBool | None = None
    include_domains: list[StrictStr] | None = None
    exclude_domains: list[StrictStr] | None = None
    country: StrictStr | None = None
    chunks_per_source: StrictInt | None = Field(None, ge=1, le=3)
    auto_parameters: StrictBool | None = None

    def to_query(self) -> SearchQuery:
        depth = self.search_depth or "basic"
        sources = [SourceRequest("news" if self.topic == "news" else DEFAULT_SOURCE)]
        if self.include_images:
            sources.append(SourceRequest(IMAGES_SOURCE))
        return SearchQuery(
            query=self.query,
            limit=self.max_results or 5,  # Tavily's default
            sources=sources,
            tbs=self._tbs(),
            include_domains=normalize_domains(self.include_domains or [], "include_domains"),
            exclude_domains=normalize_domains(self.exclude_domains or [], "exclude_domains"),
            retrieval_mode=_DEPTH_MODES[depth],
            fetch_top=ADVANCED_FETCH_TOP if depth == "advanced" else None,
            search_type="rich" if self.include_answer else "fast",
            scrape_formats=["markdown"] if self.include_raw_content else [],
        )

    def _tbs(self) -> str | None:
        if self.time_range:
            return _TIME_RANGES[self.time_range]
        if self.days:  # news' window in days, older clients'
            return f"qdr:d{self.days}"
        return None


class TavilyExtractRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    urls: Annotated[list[Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS)]],
                    BeforeValidator(_url_list)] = Field(min_length=1, max_length=MAX_EXTRACT_URLS)
    api_key: StrictStr | None = None
    extract_depth: Literal["basic", "advanced"] | None = None
    format: Literal["markdown", "text"] | None = None
    include_images: StrictBool | None = None
    timeout: float | None = Field(None, gt=0, le=60)  # seconds

    def jobs(self, default_timeout_s: float) -> list[ScrapeJob]:
        """One scrape per URL, in the order given, each URL at most once."""
        timeout_ms = round((self.timeout or default_timeout_s) * 1000)
        return [ScrapeJob(url, ("markdown",), (), True, timeout_ms) for url in dict.fromkeys(self.urls)]


def search_response(outcome: SearchOutcome, body: TavilySearchRequest, elapsed_s: float) -> dict[str, Any]:
    """Tavily's search answer from Wisp's outcome."""
    hits = next((hits for name, hits in outcome.buckets.items() if name != IMAGES_SOURCE), [])
    results = [_result(outcome, hit, position, len(hits), body.include_raw_content)
               for position, hit in enumerate(hits)]
    pictures = outcome.buckets.get(IMAGES_SOURCE, [])
    # Tavily's descriptions are written by a model; an image's title is what SearXNG knows of it
    images: list[Any] = [{"url": _image_url(hit), "description": hit.title} if body.include_image_descriptions
                         else _image_url(hit) for hit in pictures]
    return {
        "query": body.query,
        "answer": outcome.answer.text if outcome.answer is not None else None,
        "images": images,
        "results": results,
        "follow_up_questions": None,
        "response_time": round(elapsed_s, 2),
        "request_id": request_id(),
    }


def _image_url(hit: Hit) -> str:
    return hit.img_src or hit.thumbnail or hit.url


def _result(outcome: SearchOutcome, hit: Hit, position: int, count: int, raw: bool | str | None) -> dict[str, Any]:
    detail = outcome.details.get(hit.url)
    # Tavily's score is a relevance in [0, 1]: the calibrated probability where a model gave one; unranked results
    # (keyword mode) get a score from their place, so that a client sorting by it keeps Wisp's order
    score = (detail.probability if detail is not None and detail.probability is not None else
             detail.score if detail is not None and detail.score is not None else 1 - position / max(count, 1))
    markdown = outcome.documents.get(hit.url, {}).get("markdown")
    item: dict[str, Any] = {"url": hit.url, "title": hit.title, "content": hit.content, "score": round(score, 4),
                            "raw_content": _as(raw, markdown) if raw and markdown is not None else None}
    if hit.published:
        item["published_date"] = hit.published.isoformat()
    return item


def extract_result(url: str, document: dict[str, Any], form: str | None) -> dict[str, Any]:
    """One page Tavily's extract returns, from the scrape's Document; Wisp's extraction keeps no images."""
    return {"url": url, "raw_content": _as(form, document.get("markdown") or ""), "images": []}


def _as(form: bool | str | None, markdown: str) -> str:
    """The page's content in the form asked: "text" is the markdown without its backslash escapes."""
    return unescaped(markdown) if form == "text" else markdown


def error_body(error: WispError) -> dict[str, Any]:
    """The one mapping from an exception to Tavily's error shape: one message, which names each refused field
    (Tavily's clients show `detail.error` alone)."""
    issues = [f"{'.'.join(map(str, issue['path'])) or 'body'}: {issue['message']}" for issue in error.details or []]
    return {"detail": {"error": "; ".join(issues) or error.message}}
