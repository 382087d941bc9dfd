"""Each fetch failure is named by its kind where it happens (PageError), not read back from its message; a page's
request goes through the page cache, robots.txt and sitemaps do not."""

import asyncio
import ssl
import time

import httpx
import pytest

from agent.core.pages import CacheUse, Extraction, Fetched, Page, PageError
from agent.pages.cache import PageCache
from agent.pages.fetch import Fetcher, FetchPolicy, _failed
from agent.pages.ssrf import Allowlist, Blocked, Unresolvable
from agent.state.page_cache.memory import MemoryStore

from ..test_metrics import Moved, Streamed

URL = "https://a.test/x"


@pytest.mark.parametrize(("error", "kind"), [
    (httpx.ReadTimeout("timed out"), "timeout"),
    (httpx.ConnectTimeout("timed out"), "timeout"),
    (httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), "tls"),
    (ssl.SSLError("SSL: WRONG_VERSION_NUMBER"), "tls"),
    (httpx.ConnectError("[Errno 111] Connection refused"), "unreachable"),
    (httpx.InvalidURL("Invalid URL"), "unreachable"),
])
def test_an_exception_while_fetching_is_named_by_its_cause(error: Exception, kind: str) -> None:
    failed = _failed(URL, URL, error)
    assert failed.error is not None and failed.error.kind == kind


def test_the_guard_says_whether_it_refused_or_could_not_resolve() -> None:
    assert Blocked("a.test resolves to 127.0.0.1").kind == "blocked"
    assert Unresolvable("nowhere.test does not resolve").kind == "dns"


def test_a_page_without_text_says_why_from_its_own_error_or_its_fetch() -> None:
    fetched = Fetched(URL, URL, 404, "text/html", error=PageError("http", "HTTP 404"))
    assert Page(fetched, error=fetched.error).failure == "http"
    assert Page(Fetched(URL, URL, 200), error=PageError("timeout", "still extracting at the deadline")).failure == \
        "timeout"
    assert Page(Fetched(URL, URL, 200)).failure == "unextracted"
    assert str(PageError("http", "HTTP 404")) == "HTTP 404"


class CountingSite:
    """A site whose every answer differs: a page served twice the same was served from the cache."""

    def __init__(self) -> None:
        self.requests: list[str] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request.url.path)
        if request.url.path == "/missing":
            return httpx.Response(404, stream=Streamed(b"gone"), headers={"content-type": "text/html"})
        body = f"<p>visit {len(self.requests)}</p>".encode()
        return httpx.Response(200, stream=Streamed(body), headers={"content-type": "text/html"})


def fetches(site: CountingSite, *asks: tuple[str, CacheUse | None]) -> list[Fetched]:
    async def run() -> list[Fetched]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(site.handle)) as http:
            fetcher = Fetcher(http, FetchPolicy(Allowlist.parse("127.0.0.1"), 10_000, 3, "test"),
                              PageCache(MemoryStore(10_000_000), 0))
            return [await fetcher.fetch_before(url, time.monotonic() + 5, cache_use=use) for url, use in asks]
    return asyncio.run(run())


def test_a_page_fetched_within_max_age_is_served_from_the_cache() -> None:
    site, page = CountingSite(), "http://127.0.0.1/guide.html"
    first, second = fetches(site, (page, CacheUse(60_000)), (page, CacheUse(60_000)))
    assert site.requests == ["/guide.html"] and first.body == second.body == b"<p>visit 1</p>"
    assert (first.cache_state, second.cache_state) == ("miss", "hit") and second.cached_at is not None


def test_robots_txt_sitemaps_and_error_pages_are_not_kept() -> None:
    site, robots, missing = CountingSite(), "http://127.0.0.1/robots.txt", "http://127.0.0.1/missing"
    fetched = fetches(site, (robots, None), (robots, CacheUse(60_000)), (missing, CacheUse(60_000)),
                      (missing, CacheUse(60_000)))
    assert len(site.requests) == 4 and fetched[0].cache_state is None and fetched[1].cache_state == "miss"
    assert fetched[3].status == 404 and fetched[3].cache_state == "miss"


def test_a_kept_copy_that_the_guard_refuses_now_is_fetched_again_through_it() -> None:
    """The disk cache outlives the process: a copy fetched while FETCH_ALLOW_HOSTS opened its host, or kept
    with a final URL the guard refuses, is not served."""
    site, cache, page = CountingSite(), PageCache(MemoryStore(10_000_000), 0), "http://127.0.0.1/guide.html"

    async def run() -> tuple[Fetched, Fetched]:
        async with httpx.AsyncClient(transport=httpx.MockTransport(site.handle)) as http:
            opened = Fetcher(http, FetchPolicy(Allowlist.parse("127.0.0.1"), 10_000, 3, "test"), cache)
            closed = Fetcher(http, FetchPolicy(Allowlist.parse(""), 10_000, 3, "test"), cache)
            await opened.fetch_before(page, time.monotonic() + 5, cache_use=CacheUse(60_000))
            await cache.drain()
            refused = await closed.fetch_before(page, time.monotonic() + 5, cache_use=CacheUse(60_000))
            await cache.put(Fetched(page, "http://10.0.0.1/guide.html", 200, "text/html", b"<p>internal</p>"))
            refetched = await opened.fetch_before(page, time.monotonic() + 5, cache_use=CacheUse(60_000))
            return refused, refetched

    with Moved("wisp_agent_page_cache_lookups_total", result="refused") as refusals:
        refused, refetched = asyncio.run(run())
    assert refusals.by == 2 and site.requests == ["/guide.html", "/guide.html"]
    assert refused.error is not None and refused.error.kind == "blocked" and refused.body == b""
    assert refetched.ok and refetched.body == b"<p>visit 2</p>" and refetched.cache_state == "miss"


def _site(request: httpx.Request) -> httpx.Response:
    pages = {"/gone": (410, "text/html; charset=utf-8", b"<html><body><h1>Gone</h1></body></html>"),
             "/api": (200, "application/json", b'{"id": 1}'),
             "/image": (404, "image/png", b"\x89PNG" + b"\0" * 100)}
    status, content_type, body = pages[request.url.path]
    return httpx.Response(status, headers={"content-type": content_type}, stream=Streamed(body))


def fetched(path: str) -> Fetched:
    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(_site)),
                      FetchPolicy(Allowlist.parse("127.0.0.1"), 10_000, 3, "test"))
    return asyncio.run(fetcher.fetch(f"http://127.0.0.1{path}"))


def test_an_error_status_keeps_its_body_for_a_scrape_and_stays_an_error_for_the_rest() -> None:
    gone = fetched("/gone")
    assert not gone.ok and gone.status == 410 and str(gone.error) == "HTTP 410" and b"<h1>Gone</h1>" in gone.body
    assert Extraction(error_pages=True).reads(gone) and not Extraction().reads(gone)
    image = fetched("/image")  # an error status of a type Wisp does not read: no body
    assert image.body == b"" and not Extraction(error_pages=True).reads(image)


def test_a_json_page_is_fetched() -> None:
    api = fetched("/api")
    assert api.ok and api.content_type == "application/json" and api.body == b'{"id": 1}'
