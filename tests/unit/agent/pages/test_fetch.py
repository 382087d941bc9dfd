"""Each fetch failure is named by its kind where it happens (PageError), not read back from its message."""

import ssl

import httpx
import pytest

from agent.core.pages import Fetched, Page, PageError
from agent.pages.fetch import _failed
from agent.pages.ssrf import Blocked, Unresolvable

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
