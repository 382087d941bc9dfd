"""What every kind of source shares: the question asked of it, one bounded HTTP call, and the failures that decide
its tier's routing.

A source is trusted no more than a web page: its body is read up to SOURCE_MAX_BYTES, its JSON must hold a list
of results (an error written inside a 200, as out-of-credit APIs answer, is a failure, not results), at most
`max_results` of them are read, and every field is cut to its length. Redirects are not followed: a configured
URL is the only address a source is asked at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import httpx

from agent.core.dates import parse_iso
from agent.core.hits import Hit
from agent.upstream.searxng import usable_url

# credit: out of credit (402), parks the tier; rate (429), server (5xx, no connection) and garbage (a body that is
# no answer) back it off; refused (401, 403: the key) backs it off too; slow (no answer within the bound) backs it
# off when the call before failed too; rejected (another 4xx: this query) costs this search alone
Failure = Literal["credit", "rate", "server", "garbage", "refused", "slow", "rejected"]
TITLE_CHARS = 500
SNIPPET_CHARS = 2_000
URL_CHARS = 2_048
_IN_BAND_CREDIT = re.compile(r"\b402\b|credit|quota|payment", re.IGNORECASE)


@dataclass(frozen=True)
class Ask:
    """What a search asks every source."""

    query: str
    max_results: int
    text: bool  # ask for each result's page text, where the API offers it
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class Endpoint:
    """One tier as its source's kind sees it: where to ask, with which key, and how much to read."""

    url: str
    key: str
    max_bytes: int
    text_chars: int


class SourceFailure(Exception):
    """A source did not answer with results; `failure` says what that means for its tier."""

    def __init__(self, failure: Failure, message: str) -> None:
        super().__init__(message)
        self.failure = failure


async def post_json(http: httpx.AsyncClient, endpoint: Endpoint, path: str, body: dict[str, Any],
                    headers: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """POST `body` to the endpoint's `path`; its JSON object, or SourceFailure."""
    request = http.build_request("POST", endpoint.url + path, json=body, headers=headers, timeout=timeout_s)
    return await _answer(http, request, endpoint)


async def get_json(http: httpx.AsyncClient, endpoint: Endpoint, path: str, params: dict[str, str],
                   headers: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """GET the endpoint's `path` with `params`; its JSON object, or SourceFailure."""
    request = http.build_request("GET", endpoint.url + path, params=params, headers=headers, timeout=timeout_s)
    return await _answer(http, request, endpoint)


async def _answer(http: httpx.AsyncClient, request: httpx.Request, endpoint: Endpoint) -> dict[str, Any]:
    try:
        response = await http.send(request, stream=True, follow_redirects=False)
    except httpx.TimeoutException:
        raise SourceFailure("slow", "did not answer in time") from None
    except httpx.HTTPError as e:
        raise SourceFailure("server", f"unreachable ({type(e).__name__})") from None
    try:
        body = await _bounded_body(response, endpoint.max_bytes)
    finally:
        await response.aclose()
    if endpoint.key:  # an API that echoes the key it refused must not put it in a warning
        body = body.replace(endpoint.key.encode(), b"***")
    _check_status(response.status_code, body)
    return _json_object(body)


async def _bounded_body(response: httpx.Response, max_bytes: int) -> bytes:
    read = bytearray()
    try:
        async for piece in response.aiter_bytes():
            read += piece
            if len(read) > max_bytes:
                raise SourceFailure("garbage", f"answered more than {max_bytes} bytes")
    except httpx.TimeoutException:
        raise SourceFailure("slow", "stopped answering mid-body") from None
    except httpx.HTTPError as e:
        raise SourceFailure("server", f"broke off its answer ({type(e).__name__})") from None
    return bytes(read)


def _check_status(status: int, body: bytes) -> None:
    if 200 <= status < 300:
        return
    said = _said(body)
    if status == 402:
        raise SourceFailure("credit", f"HTTP 402, out of credit{said}")
    if status == 429:
        raise SourceFailure("rate", f"HTTP 429, rate-limited{said}")
    if status in (401, 403):
        raise SourceFailure("refused", f"HTTP {status}, the key was refused{said}")
    if 400 <= status < 500:
        raise SourceFailure("rejected", f"HTTP {status}{said}")
    raise SourceFailure("server", f"HTTP {status}{said}")


def _said(body: bytes) -> str:
    """What an error body says, short and on one line (never the request, so never its key)."""
    text = " ".join(body[:300].decode("utf-8", "replace").split())
    return f": {text[:160]}" if text else ""


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested past the stack
        raise SourceFailure("garbage", f"answered no JSON{_said(body)}") from None
    if not isinstance(found, dict):
        raise SourceFailure("garbage", f"answered JSON of type {type(found).__name__}, not an object")
    return found


def results_of(body: dict[str, Any], listed: Any) -> list[Any]:
    """The answer's list of results; an error written in a 200 (`error`, no list) is the failure it names."""
    if isinstance(listed, list):
        return listed
    error = body.get("error") or body.get("detail") or body.get("message")
    if error:
        said = " ".join(str(error).split())[:160]
        raise SourceFailure("credit" if _IN_BAND_CREDIT.search(said) else "garbage", f"answered an error: {said}")
    raise SourceFailure("garbage", f"answered JSON without a list of results (keys: {sorted(body)[:8]})")


def hits_of(items: Iterable[Any], limit: int, read: Callable[[dict[str, Any]], Hit | None]) -> list[Hit]:
    """At most `limit` hits read from the first results that are objects with a usable URL."""
    hits = []
    for item in items:
        if len(hits) >= limit:
            break
        url = item.get("url") if isinstance(item, dict) else None
        hit = read(item) if isinstance(url, str) and len(url) <= URL_CHARS else None
        if hit is not None and usable_url(hit.url):
            hits.append(hit)
    return hits


def text_of(value: Any, max_chars: int) -> str:
    """A string field cut to `max_chars`; "" for anything else."""
    return value[:max_chars] if isinstance(value, str) else ""


def page_text(value: Any, max_chars: int) -> str | None:
    """A result's page text cut to `max_chars`; None when there is none."""
    text = text_of(value, max_chars)
    return text if text.strip() else None


def date_of(value: Any) -> datetime | None:
    return parse_iso(value) if isinstance(value, str) else None


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}
