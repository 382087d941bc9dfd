"""A map of one site (index/map/site_map.py) from its sitemaps, its pages' links and SearXNG's site: results: the
scope, one entry per page, the order with and without `search`, the limit and the deadline. The offline web and
the real SDKs: tests/integration/test_map.py."""

import asyncio
import threading
import time
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from wisp_text.bm25 import bm25_scores

from agent.core.browsing import NO_BROWSER_WORK, BrowserWork
from agent.core.pages import CacheUse, Extracted, Fetched, Page, PageError
from agent.index.crawl import sitemaps
from agent.index.map import site_map as site_map_module
from agent.index.map.site_map import MapJob, MapLink, SiteMap, map_site, ranked, searched_text
from agent.upstream.searxng import SearxngClient

from ...fake_searxng import FakeSearxng, replaced

SEED = "https://docs.test/guide/"
ROBOTS = "User-agent: *\nDisallow: /guide/private.html\nSitemap: https://docs.test/maps/sitemap.xml\n"
SITEMAP = ("<?xml version='1.0'?><urlset>" + "".join(f"<url><loc>{u}</loc></url>" for u in [
    "https://docs.test/guide/install.html", "https://docs.test/guide/config.html?lang=en",
    "https://docs.test/elsewhere/page.html", "https://other.test/guide/x.html", "https://docs.test/guide/logo.png",
]) + "</urlset>")


def html(title: str, *links: str, description: str = "") -> str:
    meta = f"<meta name='description' content='{description}'>" if description else ""
    anchors = "".join(f"<a href='{link}'>{link}</a>" for link in links)
    return f"<html><head><title>{title}</title>{meta}</head><body><p>{title} text.</p>{anchors}</body></html>"


PAGES = {
    "https://docs.test/robots.txt": ("text/plain", ROBOTS),
    "https://docs.test/maps/sitemap.xml": ("application/xml", SITEMAP),
    SEED: ("text/html", html("The Guide", "checkpoint.html", "config.html?lang=de", "install.html#top",
                             "https://api.docs.test/guide/rest.html", "private.html", "/blog/news.html",
                             description="Everything about the tool")),
    "https://docs.test/guide/checkpoint.html": ("text/html", html("Checkpoints", "vacuum.html")),
    "https://docs.test/guide/private.html": ("text/html", html("Private", "secret.html")),
}
HITS = [("https://docs.test/guide/backup.html", "Online backup", "How to copy a live database"),
        ("https://docs.test/guide/install.html", "Installing", "Get the tool running"),
        ("https://docs.test/blog/launch.html", "Launch", "")]


class Site:
    """The Fetcher's interface over a dict of URL → (content type, body); every other URL is a 404."""

    def __init__(self, pages: dict[str, tuple[str, str]], delay_s: float = 0.0) -> None:
        self.pages, self.delay_s = pages, delay_s
        self.asked: list[str] = []

    renders = False

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None, work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
        self.asked.append(url)
        await asyncio.sleep(self.delay_s)
        if url not in self.pages:
            return Fetched(url, url, 404, "text/html", error=PageError("http", "HTTP 404"))
        content_type, body = self.pages[url]
        return Fetched(url, url, 200, content_type, body.encode())


class Searx:
    """SearXNG answering `hits` on page 1, after `delay_s`."""

    def __init__(self, hits: list[tuple[str, str, str]], delay_s: float = 0.0) -> None:
        self.hits, self.delay_s = hits, delay_s
        self.queries: list[str] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.queries.append(request.url.params["q"])
        await asyncio.sleep(self.delay_s)
        page = int(request.url.params.get("pageno", 1))
        results = [{"url": u, "title": t, "content": c} for u, t, c in self.hits] if page == 1 else []
        return httpx.Response(200, json={"results": results})


def mapped(site: Site | None = None, searx: Searx | None = None, **job: Any) -> SiteMap:
    searx = searx or Searx(HITS)
    services = FakeSearxng(total=0).services()
    client = SearxngClient("http://searx.test", httpx.AsyncClient(transport=httpx.MockTransport(searx.handle)), 5.0)
    services = replaced(services, fetcher=site or Site(PAGES), searxng=client)
    return asyncio.run(map_site(MapJob(**{"url": SEED, "limit": 5000, "timeout_s": 10.0, **job}), services.map_tools))


def urls(site_map: SiteMap) -> list[str]:
    return [link.url for link in site_map.links]


def test_the_seed_then_the_sitemap_then_the_pages_links_then_searxngs_each_page_once_within_the_scope() -> None:
    site = Site(PAGES)
    site_map = mapped(site)
    assert urls(site_map) == [
        SEED,  # the seed first, with its title
        "https://docs.test/guide/install.html", "https://docs.test/guide/config.html",  # the sitemap (robots.txt's)
        "https://docs.test/guide/checkpoint.html", "https://api.docs.test/guide/rest.html",  # the seed's links
        "https://docs.test/guide/private.html",
        "https://docs.test/guide/vacuum.html",  # one hop further
        "https://docs.test/guide/backup.html",  # SearXNG's
    ]
    assert site_map.links[0] == MapLink(SEED, "The Guide", "Everything about the tool")
    # a title from any source, the first one that gave it
    assert site_map.links[1] == MapLink("https://docs.test/guide/install.html", "Installing", "Get the tool running")
    assert site_map.links[-1].title == "Online backup" and site_map.warnings == []
    # robots.txt closes a page to fetching, not to the map; the other site, the image, another folder are out
    assert "https://docs.test/guide/private.html" not in site.asked


def test_a_large_maps_work_runs_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # reading a 100,000-URL sitemap and merging its links held the loop for seconds: each of those steps must run
    # in another thread than the loop's (asserted by thread, not by a timing that a busy machine would break)
    listed = 100_000
    sitemap = "<urlset>" + "".join(f"<url><loc>{SEED}p/{i}.html</loc></url>" for i in range(listed)) + "</urlset>"
    site = Site({**PAGES, "https://docs.test/maps/sitemap.xml": ("application/xml", sitemap)})
    threads: dict[str, set[int]] = {}

    def recorded(module: Any, name: str) -> None:
        work = getattr(module, name)

        def run_and_record(*args: Any) -> Any:
            threads.setdefault(name, set()).add(threading.get_ident())
            return work(*args)
        monkeypatch.setattr(module, name, run_and_record)

    for module, name in ((site_map_module, "_merged"), (site_map_module, "_bare_links"), (sitemaps, "_read")):
        recorded(module, name)
    services = replaced(FakeSearxng(total=0).services(), fetcher=site)
    site_map = asyncio.run(map_site(MapJob(SEED, listed, 30.0), services.map_tools))
    assert len(site_map.links) == listed
    assert set(threads) == {"_merged", "_bare_links", "_read"}
    assert threading.main_thread().ident not in set().union(*threads.values())


def test_maps_wait_their_turn_at_the_process_host_gate() -> None:
    class Counting(Site):
        """Records the most pages of one host fetched at once (robots.txt and sitemaps pass no gate)."""

        def __init__(self) -> None:
            super().__init__(PAGES, delay_s=0.05)
            self.now: Counter[str] = Counter()
            self.most = 0

        async def fetch_before(self, url: str, *args: Any, **kwargs: Any) -> Fetched:
            host = urlsplit(url).netloc if not url.endswith((".txt", ".xml")) else ""
            self.now[host] += 1
            self.most = max(self.most, self.now[host] if host else 0)
            try:
                return await super().fetch_before(url, *args, **kwargs)
            finally:
                self.now[host] -= 1

    site = Counting()
    services = replaced(FakeSearxng(total=0).services(crawl_host_concurrency=1), fetcher=site)
    assert services.crawl_tools.gate is services.gate  # the crawls' and batches' gate

    async def two_maps() -> list[SiteMap]:
        return await asyncio.gather(*(map_site(MapJob(SEED, 50, 10.0), services.map_tools) for _ in range(2)))

    assert all(SEED in urls(site_map) for site_map in asyncio.run(two_maps()))
    assert site.most == 1


def test_subdomains_and_query_parameters_when_asked() -> None:
    assert "https://api.docs.test/guide/rest.html" not in urls(mapped(subdomains=False))
    with_queries = urls(mapped(ignore_query=False))
    assert {"https://docs.test/guide/config.html?lang=en", "https://docs.test/guide/config.html?lang=de"} <= set(
        with_queries)


def test_external_links_when_asked() -> None:
    assert "https://other.test/guide/x.html" not in urls(mapped())
    assert "https://other.test/guide/x.html" in urls(mapped(external=True))


def test_a_reader_reads_the_pages_and_what_it_could_not_extract_is_outlined() -> None:
    fetcher, web, read = Site(PAGES), Site(PAGES), []

    async def reader(url: str, deadline: float) -> Page:
        read.append(url)
        fetched = await web.fetch_before(url, deadline)
        if url == SEED or not fetched.ok:  # fetched, no text came out of it
            return Page(fetched, error=fetched.error or PageError("unextracted", "no text could be extracted"))
        return Page(fetched, Extracted(url, "text", title="As read", links=["https://docs.test/guide/read.html"]))

    services = replaced(FakeSearxng(total=0).services(), fetcher=fetcher)
    client = SearxngClient("http://searx.test", httpx.AsyncClient(transport=httpx.MockTransport(Searx([]).handle)), 5.0)
    site_map = asyncio.run(map_site(MapJob(SEED, 5000, 10.0), replaced(services, searxng=client).map_tools, reader))
    assert SEED in read and "https://docs.test/guide/checkpoint.html" in read
    assert [u for u in fetcher.asked if u.endswith((".html", "/"))] == []  # the map itself read no page
    assert site_map.links[0] == MapLink(SEED, "The Guide", "Everything about the tool")  # the seed's outline
    assert MapLink("https://docs.test/guide/checkpoint.html", "As read") in site_map.links
    assert "https://docs.test/guide/read.html" in urls(site_map)


def test_sitemap_only_reads_no_page_and_skip_reads_no_sitemap() -> None:
    site, searx = Site(PAGES), Searx(HITS)
    only = mapped(site, searx, sitemap="only")
    assert urls(only) == ["https://docs.test/guide/install.html", "https://docs.test/guide/config.html"]
    assert SEED not in site.asked and searx.queries == []
    site = Site(PAGES)
    skipped = mapped(site, sitemap="skip")
    assert "https://docs.test/maps/sitemap.xml" not in site.asked and SEED in urls(skipped)
    assert "https://docs.test/guide/install.html" in urls(skipped)  # SearXNG and the seed's links list it too


def test_searxng_is_asked_for_the_site_and_folder_and_the_search() -> None:
    searx = Searx(HITS)
    mapped(searx=searx, search="backup")
    assert set(searx.queries) == {"backup site:docs.test/guide"}


def test_search_orders_by_bm25_over_url_title_and_description() -> None:
    site_map = mapped(search="copy a live database")
    assert urls(site_map)[0] == "https://docs.test/guide/backup.html"  # its description matches
    assert urls(mapped(search="vacuum"))[0] == "https://docs.test/guide/vacuum.html"  # its URL does
    links = [MapLink("https://a.test/1"), MapLink("https://a.test/2", "Backup"), MapLink("https://a.test/3")]
    scores = bm25_scores("backup", [searched_text(link) for link in links])
    assert [link.url for link in ranked(links, scores)] == ["https://a.test/2", "https://a.test/1",
                                                            "https://a.test/3"]  # the rest keep their order


def test_the_limit_cuts_after_ordering() -> None:
    assert urls(mapped(limit=2, search="vacuum")) == ["https://docs.test/guide/vacuum.html", SEED]


def test_the_deadline_returns_what_had_arrived_and_names_what_had_not() -> None:
    started = time.monotonic()
    site_map = mapped(searx=Searx(HITS, delay_s=60.0), timeout_s=1.0)
    assert time.monotonic() - started < 30  # long before SearXNG answered: the deadline, not SearXNG, ended it
    assert SEED in urls(site_map) and "https://docs.test/guide/backup.html" not in urls(site_map)
    [warning] = site_map.warnings
    assert warning.startswith("the map's timeout of 1 s ran out before SearXNG answered")


def test_a_failing_searxng_and_an_unreadable_seed_are_warnings() -> None:
    site = Site({k: v for k, v in PAGES.items() if k != SEED})
    site_map = mapped(site, Searx([], delay_s=0.0), sitemap="include")
    assert urls(site_map) == ["https://docs.test/guide/install.html", "https://docs.test/guide/config.html"]
    assert site_map.warnings == [f"{SEED} could not be read for its links: HTTP 404"]


def test_one_result_on_a_path_suggests_the_base_domain_as_firecrawl_does() -> None:
    site = Site({SEED: ("text/html", html("Lonely"))})
    site_map = mapped(site, Searx([]))
    assert urls(site_map) == [SEED]
    assert site_map.warnings == ["Only 1 result(s) found. For broader coverage, try mapping the base domain: "
                                 "https://docs.test"]


def test_map_max_pages_bounds_the_pages_read_for_links() -> None:
    site = Site(PAGES)
    services = replaced(FakeSearxng(total=0).services(map_max_pages=1), fetcher=site)
    client = SearxngClient("http://searx.test", httpx.AsyncClient(transport=httpx.MockTransport(Searx([]).handle)), 5.0)
    site_map = asyncio.run(map_site(MapJob(SEED, 5000, 10.0), replaced(services, searxng=client).map_tools))
    assert "https://docs.test/guide/checkpoint.html" in urls(site_map)  # listed by the seed, not read
    assert "https://docs.test/guide/vacuum.html" not in urls(site_map)
    assert [u for u in site.asked if u.endswith(".html")] == []


def test_a_search_the_timeout_cuts_short_keeps_the_sources_order() -> None:
    class SlowPool:
        async def run(self, fn: Any, *args: Any) -> Any:
            if fn is bm25_scores:
                await asyncio.sleep(5)
            return fn(*args)

    services = replaced(FakeSearxng(total=0).services(), fetcher=Site(PAGES), cpu_pool=SlowPool())
    client = SearxngClient("http://searx.test", httpx.AsyncClient(transport=httpx.MockTransport(Searx(HITS).handle)),
                           5.0)
    site_map = asyncio.run(map_site(MapJob(SEED, 5000, 1.0, "vacuum"), replaced(services, searxng=client).map_tools))
    assert urls(site_map)[0] == SEED and site_map.warnings == [
        "the links are in their sources' order, not ordered by the search (the timeout came first)"]
