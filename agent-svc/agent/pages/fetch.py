"""Stage 3a, fetch: the top candidates' pages, concurrently, within the request's deadline (seed 001).

Every fetch is bounded (size cap, redirect limit, content types) and guarded against SSRF on each hop: the
host is resolved and checked first, then the connection goes to the checked address, with the host name in the
Host header and in TLS's SNI. A page still loading at the deadline is abandoned; the caller then uses its
SearXNG snippet instead.
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass
from ipaddress import IPv6Address
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from agent import metrics
from agent.core.pages import CacheUse, FailureKind, Fetched, FetchOutcome, PageError
from agent.pages.cache import PageCache
from agent.pages.settings import PagesSettings
from agent.pages.ssrf import Allowlist, Blocked, IPAddress, check_url

JSON_TYPE = "application/json"
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", JSON_TYPE)
PDF_TYPE = "application/pdf"
# Content-Encoding → zlib's wbits (0: not compressed); fetches ask for no other, and decode these themselves
ENCODINGS = {"": 0, "identity": 0, "gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS,
             "deflate": zlib.MAX_WBITS}
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/pdf;q=0.8,*/*;q=0.1"


@dataclass(frozen=True)
class FetchPolicy:
    allow: Allowlist
    max_bytes: int
    max_redirects: int
    user_agent: str

    @classmethod
    def of(cls, settings: PagesSettings) -> FetchPolicy:
        return cls(Allowlist.parse(settings.fetch_allow_hosts), settings.fetch_max_bytes,
                   settings.fetch_max_redirects, settings.fetch_user_agent)


@dataclass(frozen=True)
class Pinned:
    """A request to the address the guard checked, not to a second lookup of the host: the URL with that
    address, the Host header, and TLS's SNI."""

    url: str
    host: str
    extensions: dict[str, str]

    @classmethod
    def of(cls, url: str, address: IPAddress) -> Pinned:
        parts = urlsplit(url)
        host = f"[{address}]" if isinstance(address, IPv6Address) else str(address)
        pinned = urlunsplit((parts.scheme, f"{host}:{parts.port}" if parts.port else host, parts.path or "/",
                             parts.query, ""))
        return cls(pinned, parts.netloc.split("@")[-1],
                   {"sni_hostname": parts.hostname or ""} if parts.scheme == "https" else {})


class Fetcher:
    def __init__(self, http: httpx.AsyncClient, policy: FetchPolicy, cache: PageCache | None = None) -> None:
        self._http, self._policy, self._cache = http, policy, cache

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None) -> Fetched:
        """Fetch `url` unless `deadline` (time.monotonic()) comes first; never raises. Cancelling the caller
        cancels the download, so none outlives its request. `types`: content types accepted besides pages.
        `cache_use`: how a page's request uses the page cache (None: not at all, as robots.txt and sitemaps)."""
        if self._cache is None or cache_use is None:
            return await self._fetch_before(url, deadline, types)
        return await self._cache.through(url, cache_use, lambda: self._fetch_before(url, deadline, types),
                                         lambda kept: self._allowed_now(kept, deadline))

    async def _allowed_now(self, kept: Fetched, deadline: float) -> bool:
        """Whether the SSRF guard would let a kept copy's URL and final URL be fetched now: FETCH_ALLOW_HOSTS may
        have changed since (the disk cache outlives the process, and maxAge has no bound), or the host's
        address. A copy not cleared by `deadline` is not served either."""
        try:
            async with asyncio.timeout_at(deadline):
                for url in dict.fromkeys((kept.url, kept.final_url)):
                    await check_url(url, self._policy.allow)
        except (Blocked, TimeoutError):
            return False
        return True

    async def _fetch_before(self, url: str, deadline: float, types: tuple[str, ...]) -> Fetched:
        try:
            async with asyncio.timeout_at(deadline):  # asyncio's clock is time.monotonic()
                return await self.fetch(url, types)
        except TimeoutError:
            metrics.fetched("timeout")
            return Fetched(url, url, error=PageError("timeout", "still loading at the deadline"), outcome="timeout")

    async def fetch(self, url: str, types: tuple[str, ...] = ()) -> Fetched:
        """Never raises: whatever goes wrong with one page is that page's error."""
        fetched = await self._fetch(url, types)
        metrics.fetched(fetched.outcome)
        return fetched

    async def _fetch(self, url: str, types: tuple[str, ...]) -> Fetched:
        current = url
        try:
            for _ in range(self._policy.max_redirects + 1):
                address = await check_url(current, self._policy.allow)
                outcome = await self._get(current, address, types)
                if isinstance(outcome, Fetched):
                    outcome.url, outcome.final_url = url, current
                    return outcome
                current = urljoin(current, outcome)  # a redirect: check and follow its target
            return Fetched(url, current, error=PageError("unreachable", f"more than {self._policy.max_redirects} "
                                                         "redirects"), outcome="too_many_redirects")
        except Blocked as e:
            return Fetched(url, current, error=PageError(e.kind, f"blocked: {e}"), outcome="blocked")
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a malformed URL or Location, a TLS or protocol failure: this page's problem
            return _failed(url, current, e)

    async def _get(self, url: str, address: IPAddress, types: tuple[str, ...]) -> Fetched | str:
        """The page, or the Location of a redirect."""
        target = Pinned.of(url, address)
        headers = {"User-Agent": self._policy.user_agent, "Accept": _ACCEPT, "Accept-Encoding": "gzip, deflate",
                   "Host": target.host}
        async with self._http.stream("GET", target.url, headers=headers, extensions=target.extensions) as response:
            if response.is_redirect and response.headers.get("location"):
                return response.headers["location"]
            content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            fetched = Fetched(url, url, response.status_code, content_type, charset=response.charset_encoding)
            readable = not content_type or content_type.startswith(TEXT_TYPES + types) or content_type == PDF_TYPE
            if response.status_code >= 400:
                fetched.error, fetched.outcome = PageError("http", f"HTTP {response.status_code}"), "http_error"
            elif not readable:
                fetched.error = PageError("unsupported", f"unsupported content type {content_type}")
                fetched.outcome = "unsupported_type"
            if readable:  # an error page's body too: a scrape returns it (Extraction.error_pages)
                fetched.body = await self._read_capped(response)
                if fetched.ok and content_type == PDF_TYPE and len(fetched.body) > self._policy.max_bytes:
                    # a cut PDF does not parse
                    fetched.error = PageError("unsupported", f"PDF over {self._policy.max_bytes} bytes")
                    fetched.outcome = "too_large"
                fetched.body = fetched.body[: self._policy.max_bytes]
            return fetched

    async def _read_capped(self, response: httpx.Response) -> bytes:
        """The body decoded, up to one byte past the cap: decoding stops there, so a compression bomb (200 MB
        from 200 KB of gzip) costs no more memory or time than a page at the cap."""
        decoder = _Decoder(response.headers.get("content-encoding", ""))
        chunks, size, limit = [], 0, self._policy.max_bytes + 1
        async for raw in response.aiter_raw():
            chunk = decoder.decode(raw, limit - size)
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break  # an HTML page cut at the cap still extracts; the rest is not worth the wait
        return b"".join(chunks)


class _Decoder:
    """Content-Encoding gzip or deflate (all that fetches accept), decoded at most `limit` bytes at a time."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        if encoding not in ENCODINGS:
            raise ValueError(f"unsupported content encoding {encoding!r}")
        self._zlib = zlib.decompressobj(ENCODINGS[encoding]) if ENCODINGS[encoding] else None

    def decode(self, data: bytes, limit: int) -> bytes:
        if self._zlib is None:
            return data[:limit]
        try:
            return self._zlib.decompress(data, limit)
        except zlib.error:
            if self._zlib.unused_data or self._zlib.eof:
                raise
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # "deflate" sent raw, without zlib's header
            return self._zlib.decompress(data, limit)


def _failed(url: str, current: str, error: Exception) -> Fetched:
    """The fetch that `error` ended: the page's failure kind, and the fetch metric's finer label."""
    detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    kind: FailureKind
    outcome: FetchOutcome
    if isinstance(error, httpx.TimeoutException):
        kind, outcome = "timeout", "timeout"
    else:
        kind = "tls" if "SSL" in detail or "CERTIFICATE" in detail else "unreachable"
        outcome = "connect_error" if isinstance(error, httpx.ConnectError) else "error"
    return Fetched(url, current, error=PageError(kind, detail), outcome=outcome)
