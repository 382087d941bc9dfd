import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from offline_web.server import OfflineWeb
from offline_web.sites import match_site


@pytest.fixture(scope="module")
def web(corpus):
    sites, cache, db = corpus
    with OfflineWeb(sites, cache, db) as running:
        yield running


def test_pages_are_served_under_host_and_path(web) -> None:
    response = httpx.get(f"{web.url}/www.alpha.org/wal.html")
    assert response.status_code == 200 and "Write-Ahead Logging" in response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert httpx.get(f"{web.url}/beta.dev/docs/1.0/index.html").status_code == 200


def test_directories_redirect_then_serve_their_index(web) -> None:
    response = httpx.get(f"{web.url}/beta.dev/docs/1.0")
    assert response.status_code == 301 and response.headers["location"] == "/beta.dev/docs/1.0/"
    assert httpx.get(f"{web.url}/beta.dev/docs/1.0/").status_code == 200


@pytest.mark.parametrize("path", ["/www.alpha.orgx/wal.html", "/nowhere.org/a.html", "/www.alpha.org/missing.html",
                                  "/www.alpha.org/../../etc/passwd", "/www.alpha.org/%2e%2e/%2e%2e/etc/passwd",
                                  "/www.alpha.org/releases/../../../../../etc/passwd", "/unknown"])
def test_unknown_hosts_missing_pages_and_traversal_are_404(web, path) -> None:
    assert httpx.get(web.url + path).status_code == 404


def test_search_answers_in_searxng_shape_with_absolute_urls(web) -> None:
    body = httpx.get(f"{web.url}/search", params={"q": "vacuum", "format": "json"}).json()
    assert body["query"] == "vacuum" and body["results"]
    assert body["results"][0]["url"].startswith(f"http://127.0.0.1:{web.port}/www.alpha.org/")


def test_html_results_for_xpath_engines(web) -> None:
    html = httpx.get(f"{web.url}/html", params={"q": "rebase"}).text
    assert '<div class="r"><a href="http://127.0.0.1:' in html and "Beta guide" in html


def test_test_routes(web) -> None:
    assert httpx.get(f"{web.url}/_test/status/503").status_code == 503
    response = httpx.get(f"{web.url}/www.alpha.org/wal.html", params={"delay_ms": "300"})
    assert response.elapsed.total_seconds() >= 0.3
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(f"{web.url}/_test/hang", params={"seconds": "5"}, timeout=0.3)


def test_gzip_on_demand_and_precompressed_files(web) -> None:
    page = f"{web.url}/www.alpha.org/wal.html"
    raw = httpx.get(page, headers={"Accept-Encoding": "identity"})
    compressed = httpx.get(page, params={"gzip": "1"})
    assert compressed.headers["content-encoding"] == "gzip" and compressed.text == raw.text
    changelog = httpx.get(f"{web.url}/www.alpha.org/changelog.html")
    assert changelog.headers["content-encoding"] == "gzip" and "Changelog" in changelog.text


def test_together_answers_once_its_whole_group_is_waiting(web) -> None:
    url = f"{web.url}/_test/together"
    with ThreadPoolExecutor(2) as pool:
        pair = [pool.submit(httpx.get, url, params={"n": "2", "group": "pair", "i": str(i)}, timeout=30)
                for i in range(2)]
        assert [answer.result().status_code for answer in pair] == [200, 200]
    with pytest.raises(httpx.ReadTimeout):  # one of a group of two never gets its page alone
        httpx.get(url, params={"n": "2", "group": "alone"}, timeout=0.5)


def test_redirect_route(web) -> None:
    response = httpx.get(f"{web.url}/_test/redirect", params={"to": "http://10.0.0.1/x"})
    assert response.status_code == 302 and response.headers["location"] == "http://10.0.0.1/x"


def test_pdf_and_long_pages(web) -> None:
    pdf = httpx.get(f"{web.url}/www.alpha.org/manual.pdf")
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    long_page = httpx.get(f"{web.url}/_test/long", params={"kb": "64"})
    assert 64 * 1024 <= len(long_page.content) < 66 * 1024 and "Paragraph 500 " in long_page.text


def test_requests_are_logged_with_their_parameters(web) -> None:
    httpx.get(f"{web.url}/search", params={"q": "logged query", "time_range": "day"})
    assert web.requests_to("/search")[-1]["qs"] == {"q": "logged query", "time_range": "day"}
    log = httpx.get(f"{web.url}/_test/log").json()
    assert any(r["qs"].get("q") == "logged query" for r in log) and json.dumps(log)


def test_longest_prefix_wins(corpus) -> None:
    sites = corpus[0]
    assert match_site(sites, "/www.alpha.org/a/b.html")[1] == "a/b.html"
    assert match_site(sites, "www.alpha.org") is not None and match_site(sites, "www.alpha.orgx/a") is None
