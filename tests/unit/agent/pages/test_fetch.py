"""Each fetch failure is named by its kind where it happens (PageError), not read back from its message."""

import asyncio
import ssl

import httpx
import pytest

from agent.core.pages import Extraction, Fetched, Page, PageError
from agent.pages.fetch import Fetcher, FetchPolicy, _failed
from agent.pages.ssrf import Allowlist, Blocked, Unresolvable

from ..test_metrics import _Streamed

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


def _site(request: httpx.Request) -> httpx.Response:
    pages = {"/gone": (410, "text/html; charset=utf-8", b"<html><body><h1>Gone</h1></body></html>"),
             "/api": (200, "application/json", b'{"id": 1}'),
             "/image": (404, "image/png", b"\x89PNG" + b"\0" * 100)}
    status, content_type, body = pages[request.url.path]
    return httpx.Response(status, headers={"content-type": content_type}, stream=_Streamed(body))


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
