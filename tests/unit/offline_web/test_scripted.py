"""The pages only a browser reads: their served bytes (no browser runs here)."""

import json
import re

import httpx
import pytest

from offline_web import scripted
from offline_web.server import OfflineWeb

_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_STRING = r'"(?:[^"\\]|\\.)*"'  # a JSON string literal


@pytest.fixture(scope="module")
def web(corpus):
    sites, cache, db = corpus
    with OfflineWeb(sites, cache, db, scripted_hosts=("www.alpha.org",)) as running:
        yield running


def _split(page: str) -> tuple[str, str]:
    """(the page without its scripts, its scripts)."""
    return _SCRIPT.sub("", page), "".join(_SCRIPT.findall(page))


def _shows_only_by_script(page: str, text: str) -> None:
    outside, script = _split(page)
    assert text not in outside and text in script
    assert '<div id="app"></div>' in outside and f"<noscript>{scripted.NOSCRIPT}</noscript>" in outside


@pytest.mark.parametrize(("path", "sentence"), [
    ("inserted", "The quokka sentence was inserted by a script after the page loaded."),
    ("delayed", "The delayed pangolin sentence was inserted by a timer 1500 milliseconds after the page loaded."),
])
def test_inserted_and_delayed_content_is_only_in_the_script(web, path, sentence) -> None:
    response = httpx.get(f"{web.url}/_test/js/{path}")
    assert response.status_code == 200 and response.headers["content-type"] == "text/html; charset=utf-8"
    _shows_only_by_script(response.text, sentence)
    assert "DOMContentLoaded" in response.text


def test_delay_is_capped_and_defaults_on_nonsense(web) -> None:
    capped = httpx.get(f"{web.url}/_test/js/delayed", params={"ms": "999999"}).text
    assert "setTimeout(" in capped and f"}}, {scripted.MAX_DELAY_MS});" in capped
    assert "}, 1500);" in httpx.get(f"{web.url}/_test/js/delayed", params={"ms": "soon"}).text
    assert "}, 250);" in httpx.get(f"{web.url}/_test/js/delayed", params={"ms": "250"}).text


def test_click_page_hides_its_paragraph_until_clicked(web) -> None:
    page = httpx.get(f"{web.url}/_test/js/click").text
    outside, script = _split(page)
    assert '<button id="reveal">Show more</button>' in outside and '<input id="q" name="q"' in outside
    assert 'id="echo"' in outside and "height: 5000px" in outside
    hidden = "The hidden axolotl paragraph appears only after a click."
    assert hidden not in outside and hidden in script and '"You searched for: "' in script


def test_query_values_are_escaped_in_the_page_and_in_the_script(web) -> None:
    to = 'http://10.0.0.1/x?a=1&b="</script><script>alert(1)</script>'
    for path in ("fetches", "navigate"):
        page = httpx.get(f"{web.url}/_test/js/{path}", params={"to": to}).text
        assert page.count("<script>") == 1 and page.count("</script>") == 1
        outside, script = _split(page)
        assert "http://10.0.0.1/x?a=1&amp;b=&quot;&lt;/script&gt;" in outside
        assert any(json.loads(literal) == to for literal in re.findall(_STRING, script))
    fetches = httpx.get(f"{web.url}/_test/js/fetches", params={"to": "http://127.0.0.1:9/p"}).text
    assert all(f'id="{kind}-result"' in fetches for kind in ("fetch", "websocket", "image"))
    assert "new WebSocket(" in fetches and "location.href = " in httpx.get(
        f"{web.url}/_test/js/navigate", params={"to": "/www.alpha.org/wal.html"}).text


def test_pages_that_need_a_target_are_404_without_one(web) -> None:
    assert httpx.get(f"{web.url}/_test/js/fetches").status_code == 404
    assert httpx.get(f"{web.url}/_test/js/navigate").status_code == 404
    assert httpx.get(f"{web.url}/_test/js/nothing").status_code == 404


def test_download_is_an_attachment(web) -> None:
    response = httpx.get(f"{web.url}/_test/js/download")
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["content-disposition"] == "attachment; filename=x.bin"
    assert response.content == scripted.DOWNLOAD


def test_js_routes_are_delayed_and_logged(web) -> None:
    response = httpx.get(f"{web.url}/_test/js/inserted", params={"delay_ms": "300"})
    assert response.elapsed.total_seconds() >= 0.3
    assert web.requests_to("/_test/js/inserted")[-1]["qs"] == {"delay_ms": "300"}


def test_scripted_hosts_serve_html_as_a_shell_and_the_rest_unchanged(web) -> None:
    page = httpx.get(f"{web.url}/www.alpha.org/wal.html").text
    assert "<title>Write-Ahead Logging</title>" in page
    _shows_only_by_script(page, "A checkpoint moves the WAL content back into the database file.")
    script = _split(page)[1]
    assert "<h1>" not in script and "\\u003ch1\\u003eWAL mode" in script and "img/wal.gif" in script
    gzipped = httpx.get(f"{web.url}/www.alpha.org/wal.html", params={"gzip": "1"}).text
    assert gzipped == page
    changelog = httpx.get(f"{web.url}/www.alpha.org/changelog.html")
    assert changelog.headers["content-encoding"] == "gzip"
    _shows_only_by_script(changelog.text, "Changelog")
    assert httpx.get(f"{web.url}/www.alpha.org/manual.pdf").content.startswith(b"%PDF")
    assert "Beta explains git rebase" in _split(httpx.get(f"{web.url}/beta.dev/docs/1.0/index.html").text)[0]


def test_scripted_pages_are_still_found_by_the_engine(web) -> None:
    results = httpx.get(f"{web.url}/search", params={"q": "checkpoint wal", "format": "json"}).json()["results"]
    assert any(r["url"].endswith("/www.alpha.org/wal.html") for r in results)


@pytest.mark.parametrize(("original", "title", "content"), [
    (b"<html><head><title>T &amp; U</title></head><BODY class=x><p>one</p></BODY></html>", "T &amp; U", "<p>one</p>"),
    (b"<title>Bare</title><p>no body tag</p>", "Bare", "<title>Bare</title><p>no body tag</p>"),
    (b"<head><title>Head</title></head><p>after the head</p>", "Head", "<p>after the head</p>"),
    (b"<p>\xff broken</p><script>x()</script>", "", "<p>\ufffd broken</p><script>x()</script>"),
])
def test_shell_of_any_page(original, title, content) -> None:
    page = scripted.scripted(original).decode()
    assert f"<title>{title}</title>" in page and page.count("</script>") == 1
    literal = re.search(f"innerHTML = ({_STRING});", page).group(1)
    assert json.loads(literal) == content

