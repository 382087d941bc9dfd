import pytest

from agent.core.pages import Fetched, Page
from agent.pages.failures import failure

URL = "https://a.test/x"


def failed_fetch(error: str, status: int | None = None) -> Page:
    return Page(Fetched(URL, URL, status, error=error), error=error)


@pytest.mark.parametrize(("page", "kind"), [
    (failed_fetch("still loading at the deadline"), "timeout"),
    (Page(Fetched(URL, URL, 200, "text/html", b"<p>"), error="still extracting at the deadline"), "timeout"),
    (Page(Fetched(URL, URL, 200, "text/html", b"<p>"), error="extraction took longer than 15 s"), "timeout"),
    (failed_fetch("ReadTimeout"), "timeout"),
    (failed_fetch("ConnectTimeout: timed out"), "timeout"),
    (failed_fetch("blocked: nowhere.test does not resolve ([Errno -2] Name or service not known)"), "dns"),
    (failed_fetch("blocked: a.test resolves to 127.0.0.1, a non-public address (FETCH_ALLOW_HOSTS can open it)"),
     "blocked"),
    (failed_fetch("blocked: only http and https URLs are fetched, not file"), "blocked"),
    (failed_fetch("HTTP 404", 404), "http"),
    (failed_fetch("HTTP 503", 503), "http"),
    (failed_fetch("unsupported content type image/png", 200), "unsupported"),
    (failed_fetch("PDF over 5000000 bytes", 200), "unsupported"),
    (failed_fetch("ConnectError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), "tls"),
    (failed_fetch("ConnectError: [Errno 111] Connection refused"), "unreachable"),
    (failed_fetch("more than 5 redirects"), "unreachable"),
    (Page(Fetched(URL, URL, 200, "text/html", b"<div>"), error="no text could be extracted"), "unextracted"),
    (Page(Fetched(URL, URL, 200, "text/html", b"<div>"), error="the extraction worker died"), "unextracted"),
])
def test_each_failure_is_named_by_its_cause(page: Page, kind: str) -> None:
    assert failure(page) == kind

