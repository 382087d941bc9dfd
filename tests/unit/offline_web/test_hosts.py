"""A search engine that indexes some hosts only: a second source over sites the first one does not know."""

from __future__ import annotations

import httpx
import pytest

from offline_web.engine import SearchEngine
from offline_web.searx import engines
from offline_web.server import OfflineWeb


@pytest.fixture(scope="module")
def web(corpus):
    sites, cache, db = corpus
    with OfflineWeb(sites, cache, db) as running:
        yield running


def _hosts_of(urls: list[str]) -> set[str]:
    return {url.split("/")[0] for url in urls}


def test_the_engine_finds_pages_on_the_given_hosts_only(corpus) -> None:
    engine = SearchEngine(corpus[2])
    assert _hosts_of([r["url"] for r in engine.search("commit checkpoint")]) == {"www.alpha.org", "beta.dev"}
    assert _hosts_of([r["url"] for r in engine.search("commit checkpoint", hosts=("beta.dev",))]) == {"beta.dev"}
    assert engine.search("rebase", hosts=("www.alpha.org",)) == []
    assert engine.search("wal", category="images")
    assert engine.search("wal", category="images", hosts=("beta.dev",)) == []


def test_search_and_html_routes_take_hosts(web) -> None:
    body = httpx.get(f"{web.url}/search", params={"q": "commit checkpoint", "hosts": "www.alpha.org"}).json()
    prefix = f"http://127.0.0.1:{web.port}/www.alpha.org/"
    assert body["results"] and all(r["url"].startswith(prefix) for r in body["results"])
    assert "Beta guide" not in httpx.get(f"{web.url}/html", params={"q": "rebase", "hosts": "www.alpha.org"}).text
    assert "Beta guide" in httpx.get(f"{web.url}/html", params={"q": "rebase", "hosts": "beta.dev"}).text
    # the pages of every site are still served: only search is narrowed
    assert httpx.get(f"{web.url}/beta.dev/docs/1.0/index.html").status_code == 200


def test_searx_engines_ask_for_the_hosts_and_none_without_them() -> None:
    narrowed = engines("http://127.0.0.1:1", ("a.org", "b.dev"))
    assert all(e["search_url"].endswith("&hosts=a.org,b.dev") if "search_url" in e else e["hosts"] == "a.org,b.dev"
               for e in narrowed)
    assert not any("hosts" in e or "hosts=" in e.get("search_url", "") for e in engines("http://127.0.0.1:1"))
