"""The fetch and extract stages against the offline web's misbehaving routes and real pages."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest

from agent.core.pages import Fetched
from agent.pages.extract import extract
from agent.pages.fetch import Fetcher, FetchPolicy
from agent.pages.ssrf import Allowlist
from offline_web.stack import OfflineStack


def fetch_all(urls: list[str], allow: str = "127.0.0.1", deadline_s: float = 5.0, max_bytes: int = 5_000_000,
              redirects: int = 5) -> dict[str, Fetched]:
    async def run() -> dict[str, Fetched]:
        async with httpx.AsyncClient(timeout=10, follow_redirects=False, trust_env=False) as http:
            fetcher = Fetcher(http, FetchPolicy(Allowlist.parse(allow), max_bytes, redirects, "wisp-test"))
            deadline = time.monotonic() + deadline_s
            fetched = await asyncio.gather(*(fetcher.fetch_before(url, deadline) for url in urls))
            return dict(zip(urls, fetched, strict=True))

    return asyncio.run(run())


def test_pages_fetch_concurrently_and_slow_ones_are_cut_at_the_deadline(stack: OfflineStack) -> None:
    # three pages that answer only once all three are being fetched: fetched one after another, none would
    group = uuid.uuid4().hex
    together = [f"{stack.web.url}/_test/together?n=3&group={group}&page={n}" for n in range(3)]
    slow, hanging = f"{stack.web.url}/www.sqlite.org/wal.html?delay_ms=60000", f"{stack.web.url}/_test/hang?seconds=60"
    started = time.monotonic()
    results = fetch_all([*together, slow, hanging], deadline_s=5)
    assert time.monotonic() - started < 30  # the deadline ended the wait, not the 60 s pages
    assert all(results[u].ok and results[u].status == 200 for u in together)
    assert str(results[slow].error) == str(results[hanging].error) == "still loading at the deadline"


def test_http_errors_types_and_sizes(stack: OfflineStack) -> None:
    web = stack.web.url
    results = fetch_all([f"{web}/_test/status/500", f"{web}/www.sqlite.org/images/ac/commit-0.gif",
                         f"{web}/_test/long?kb=300"], max_bytes=100_000)
    assert str(results[f"{web}/_test/status/500"].error) == "HTTP 500"
    assert str(results[f"{web}/www.sqlite.org/images/ac/commit-0.gif"].error) == "unsupported content type image/gif"
    long_page = results[f"{web}/_test/long?kb=300"]
    assert long_page.ok and len(long_page.body) == 100_000  # cut at the cap, still usable


def test_gzip_and_pdf(stack: OfflineStack) -> None:
    web = stack.web.url
    gzipped, pdf = f"{web}/www.sqlite.org/wal.html?gzip=1", f"{web}/www.sqlite.org/copyright-release.pdf"
    results = fetch_all([gzipped, pdf])
    assert "Write-Ahead Logging" in extract(results[gzipped]).title
    assert results[pdf].content_type == "application/pdf"
    assert "copyright" in extract(results[pdf]).markdown.lower()


def test_redirects_are_followed_and_each_hop_is_guarded(stack: OfflineStack) -> None:
    web = stack.web.url
    target = f"{web}/www.sqlite.org/wal.html"
    to_page, to_private = f"{web}/_test/redirect?to={target}", f"{web}/_test/redirect?to=http://10.0.0.1/secret"
    loop_url = f"{web}/_test/redirect?to={web}/_test/redirect%3Fto%3D{target}"
    malformed = f"{web}/_test/redirect?to=http://%5B::1"
    results = fetch_all([to_page, to_private, loop_url, malformed], redirects=1)
    assert "Invalid URL" in str(results[malformed].error)  # this page's error, not an exception for the request
    assert results[to_page].ok and results[to_page].final_url == target
    assert str(results[to_private].error).startswith("blocked: 10.0.0.1 resolves to 10.0.0.1, a non-public address")
    assert str(results[loop_url].error) == "more than 1 redirects"


@pytest.mark.parametrize("allow", ["", "10.0.0.0/8"])
def test_loopback_is_closed_unless_allowed(stack: OfflineStack, allow: str) -> None:
    url = f"{stack.web.url}/www.sqlite.org/wal.html"
    before = len(stack.web.requests_to("/www.sqlite.org/wal.html"))
    assert str(fetch_all([url], allow=allow)[url].error).startswith("blocked: 127.0.0.1 resolves to 127.0.0.1")
    assert len(stack.web.requests_to("/www.sqlite.org/wal.html")) == before  # not a byte was sent
