"""Stage 3a, fetch: the top candidates' pages, concurrently, within the request's deadline (seed 001).

Every fetch is bounded (size cap, redirect limit, content types) and guarded against SSRF on each hop. A
page still loading at the deadline is abandoned; the caller then uses its SearXNG snippet instead.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from agent.ssrf import Allowlist, Blocked, check_address, check_url

TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
PDF_TYPE = "application/pdf"


@dataclass
class Fetched:
    """One fetch: the body on success, else `error` (and the HTTP status when there was one)."""

    url: str  # as asked
    final_url: str
    status: int | None = None
    content_type: str = ""
    body: bytes = b""
    charset: str | None = None
    error: str | None = None
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class FetchPolicy:
    allow: Allowlist
    max_bytes: int
    max_redirects: int
    user_agent: str


class Fetcher:
    def __init__(self, http: httpx.AsyncClient, policy: FetchPolicy) -> None:
        self._http, self._policy = http, policy

    async def fetch_all(self, urls: list[str], deadline: float) -> dict[str, Fetched]:
        """Fetch `urls` concurrently until `deadline` (time.monotonic()); unfinished ones come back as errors."""
        tasks = {url: asyncio.create_task(self.fetch(url)) for url in dict.fromkeys(urls)}
        if tasks:
            await asyncio.wait(tasks.values(), timeout=max(deadline - time.monotonic(), 0))
        results = {}
        for url, task in tasks.items():
            if task.done():
                results[url] = task.result()
            else:
                task.cancel()
                results[url] = Fetched(url, url, error="still loading at the deadline")
        return results

    async def fetch(self, url: str) -> Fetched:
        started = time.perf_counter()
        result = await self._follow(url)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    async def _follow(self, url: str) -> Fetched:
        current = url
        for _ in range(self._policy.max_redirects + 1):
            try:
                await check_url(current, self._policy.allow)
                response = await self._get(current)
            except Blocked as e:
                return Fetched(url, current, error=f"blocked: {e}")
            except httpx.HTTPError as e:
                return Fetched(url, current, error=f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
            if isinstance(response, httpx.Response):  # a redirect: check and follow its target
                current = urljoin(current, response.headers.get("location", ""))
                continue
            response.url, response.final_url = url, current
            return response
        return Fetched(url, current, error=f"more than {self._policy.max_redirects} redirects")

    async def _get(self, url: str) -> Fetched | httpx.Response:
        headers = {"User-Agent": self._policy.user_agent, "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,"
                   "application/pdf;q=0.8,*/*;q=0.1"}
        async with self._http.stream("GET", url, headers=headers) as response:
            self._check_peer(url, response)
            if response.is_redirect and response.headers.get("location"):
                return response
            content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            fetched = Fetched(url, url, response.status_code, content_type, charset=response.charset_encoding)
            if response.status_code >= 400:
                fetched.error = f"HTTP {response.status_code}"
            elif content_type and not content_type.startswith(TEXT_TYPES) and content_type != PDF_TYPE:
                fetched.error = f"unsupported content type {content_type}"
            else:
                fetched.body = await self._read_capped(response)
                if len(fetched.body) > self._policy.max_bytes:
                    fetched.body = fetched.body[: self._policy.max_bytes]
                    fetched.error = None if content_type != PDF_TYPE else f"PDF over {self._policy.max_bytes} bytes"
            return fetched

    async def _read_capped(self, response: httpx.Response) -> bytes:
        chunks, size = [], 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > self._policy.max_bytes:
                break  # an HTML page cut at the cap still extracts; the rest is not worth the wait
        return b"".join(chunks)

    def _check_peer(self, url: str, response: httpx.Response) -> None:
        stream = response.extensions.get("network_stream")
        peer = stream.get_extra_info("server_addr") if stream is not None else None
        if peer:
            check_address((urlsplit(url).hostname or "").lower(), ipaddress.ip_address(peer[0]), self._policy.allow)
