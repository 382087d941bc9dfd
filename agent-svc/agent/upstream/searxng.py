"""The SearXNG client: one shared httpx.AsyncClient, both JSON dialects, in-band failures made explicit.

Tolerates old searx (1.1.0: human `publishedDate`, string answers, `pretty_url`) and current SearXNG
(ISO dates, empty-string defaults); both send `pubdate`, which is parsed first.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from agent import metrics
from agent.core.dates import parse_iso
from agent.core.hits import EngineCatalog, Hit
from agent.errors import BadRequest, UpstreamError
from agent.upstream.engine_health import EngineHealth

_RESOLUTION = re.compile(r"(\d+)\s*[x×]\s*(\d+)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # one scan in C instead of a generator step per character
RETRY_MIN_S = 1.0  # the least budget worth a second try at a search SearXNG failed with a 5xx


@dataclass(frozen=True)
class PagePolicy:
    """How many SearXNG pages a source may ask for, and how many results one is expected to hold."""

    page_size: int = 10
    max_pages: int = 5


@dataclass
class SearxngPage:
    hits: list[Hit]
    unresponsive: list[tuple[str, str]] = field(default_factory=list)
    malformed: int = 0  # results dropped for a URL no client could open


class SearxngClient:
    def __init__(self, base_url: str, http: httpx.AsyncClient, timeout_s: float, config_ttl_s: float = 300.0,
                 health_window_s: float = 600.0, pages: PagePolicy = PagePolicy()) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http
        self.timeout_s = timeout_s
        self.pages = pages
        self._config_ttl_s = config_ttl_s
        self._catalog: tuple[float, EngineCatalog] | None = None
        self.health = EngineHealth(health_window_s)

    async def search(self, params: dict[str, str], budget_s: float | None = None) -> SearxngPage:
        """GET /search with `params` within the caller's `budget_s`.

        Raises UpstreamError, or BadRequest when SearXNG rejects a parameter.
        """
        budget = min(budget_s, self.timeout_s) if budget_s is not None else self.timeout_s
        deadline = time.monotonic() + budget
        response = await self._search_within(params, budget)
        # searx 1.1.0 now and then answers 500 when an engine times out while the answer is being written
        # ("Set changed size during iteration" over its unresponsive engines): such a fault passes, so one more
        # try while the budget allows
        left = deadline - time.monotonic()
        if response.status_code >= 500 and left >= RETRY_MIN_S:
            metrics.searxng_retried(response.status_code)
            response = await self._search_within(params, left)
        body = _json_body(response)
        if not isinstance(body.get("results"), list):
            raise UpstreamError(f"SearXNG answered JSON without a results list (keys: {sorted(body)[:10]})")
        hits = [hit for r in body["results"] if (hit := parse_hit(r)) is not None]
        usable = [hit for hit in hits if usable_url(hit.url)]
        page = SearxngPage(usable, _unresponsive(body.get("unresponsive_engines")), len(hits) - len(usable))
        answering = {engine for hit in page.hits for engine in hit.engines}
        self.health.record(answering, page.unresponsive)
        metrics.searxng_answered(answering, page.unresponsive)
        return page

    async def _search_within(self, params: dict[str, str], budget: float) -> httpx.Response:
        # timeout_limit lets SearXNG cut its slow engines and answer within the budget; the HTTP timeout
        # leaves slack past the budget so that the caller's own deadline, not this call, reports a timeout
        query = {**params, "timeout_limit": f"{max(budget - 0.25, 0.1):.2f}"}
        return await self._get("/search", query, min(self.timeout_s, budget + 0.5))

    async def catalog(self) -> EngineCatalog:
        """The instance's engines and categories from GET /config, cached for the configured TTL."""
        if self._catalog and time.monotonic() - self._catalog[0] < self._config_ttl_s:
            return self._catalog[1]
        body = _json_body(await self._get("/config", {}, self.timeout_s))
        engines = {
            e["name"]: frozenset(e.get("categories") or [])
            for e in body.get("engines", []) if isinstance(e, dict) and e.get("name")
        }
        catalog = EngineCatalog(engines, frozenset(body.get("categories") or []))
        self._catalog = (time.monotonic(), catalog)
        return catalog

    async def ping(self) -> None:
        """Raise UpstreamError unless SearXNG answers its health check."""
        response = await self._get("/healthz", {}, min(self.timeout_s, 5.0))
        if response.status_code != 200:
            raise UpstreamError(f"SearXNG health check at {self.base_url}/healthz answered HTTP {response.status_code}")

    async def _get(self, path: str, params: dict[str, str], timeout_s: float) -> httpx.Response:
        url = self.base_url + path
        try:
            response = await self._http.get(url, params=params, timeout=timeout_s, headers=SEARXNG_HEADERS)
        except httpx.TimeoutException as e:
            raise UpstreamError(f"SearXNG at {self.base_url} did not answer within {timeout_s:.1f} s") from e
        except httpx.HTTPError as e:
            raise UpstreamError(f"SearXNG is unreachable at {self.base_url}: {_describe(e)}") from e
        return response


# SearXNG's bot detection wants to know the client address even on loopback
SEARXNG_HEADERS = {"Accept": "application/json", "X-Forwarded-For": "127.0.0.1", "X-Real-IP": "127.0.0.1"}


def _raise_for_status(response: httpx.Response) -> None:
    status = response.status_code
    if status == 200:
        return
    if status == 403:
        raise UpstreamError(
            "SearXNG refused format=json (HTTP 403): the JSON format is disabled in its settings.yml; "
            "add json to search.formats"
        )
    if status == 429:
        raise UpstreamError(
            "SearXNG rate-limited the request (HTTP 429): its bot limiter is on; "
            "set server.limiter: false in its settings.yml"
        )
    error = _error_field(response)
    if status == 400 and error:
        raise BadRequest(f"SearXNG rejected the request: {error}")
    raise UpstreamError(f"SearXNG answered HTTP {status}: {error or _snippet(response.text)}")


def _json_body(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of an answer, or the UpstreamError (or BadRequest) its status or body makes it."""
    _raise_for_status(response)
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON, a number past 4,300 digits, or nested past the stack
        content_type = response.headers.get("content-type", "no content-type")
        raise UpstreamError(
            f"SearXNG answered a non-JSON body ({content_type}): {_snippet(response.text)!r}; "
            "is SEARXNG_URL the SearXNG base URL?"
        ) from None
    if not isinstance(body, dict):
        raise UpstreamError(f"SearXNG answered JSON of type {type(body).__name__}, not an object")
    return body


def parse_hit(raw: Any) -> Hit | None:
    """One result of either dialect → Hit, or None when it has no URL."""
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str) or not raw["url"]:
        return None
    engines = raw.get("engines") or ([raw["engine"]] if raw.get("engine") else [])
    return Hit(
        url=raw["url"],
        title=_text(raw.get("title")),
        content=_text(raw.get("content")),
        published=parse_published(raw),
        engines=tuple(str(e) for e in engines),
        category=_text(raw.get("category")) or None,
        img_src=_text(raw.get("img_src")) or None,
        thumbnail=_text(raw.get("thumbnail_src")) or _text(raw.get("thumbnail")) or None,
        resolution=_resolution(raw.get("resolution")),
    )


def usable_url(url: str) -> bool:
    """An absolute URL with a host name and a valid port, without control characters: what a result must link
    to (an engine's `http://[::1`, `not a url`, `http://a b.com/` or port 99999 would fail every later stage that
    parses it). A space in the path is common in engines' URLs, and fetching encodes it."""
    if _CONTROL.search(url):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        return False
    return bool(parts.scheme) and bool(parts.hostname) and not any(c.isspace() for c in parts.netloc)


def parse_published(raw: dict[str, Any]) -> datetime | None:
    """`pubdate` (both dialects; searx 1.1.0 omits the zone), else an ISO `publishedDate` (1.1.0's is human text)."""
    return parse_iso(raw.get("pubdate")) or parse_iso(raw.get("publishedDate"))


def _resolution(value: Any) -> tuple[int, int] | None:
    match = _RESOLUTION.search(value) if isinstance(value, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def _unresponsive(value: Any) -> list[tuple[str, str]]:
    pairs = []
    for item in value or []:
        if isinstance(item, (list, tuple)) and item:
            pairs.append((str(item[0]), str(item[1]) if len(item) > 1 else "unknown error"))
    return sorted(pairs)


def _error_field(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except (ValueError, RecursionError):
        return None
    return str(body["error"]) if isinstance(body, dict) and body.get("error") else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _snippet(text: str) -> str:
    return " ".join(text.split())[:200]


def _describe(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.ConnectError):
        return f"connection failed ({error})" if str(error) else "connection refused"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
