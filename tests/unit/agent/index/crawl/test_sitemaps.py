"""Sitemaps: where to look, the URLs they list (an index followed, gzip unpacked), and their bounds."""

import asyncio
import gzip
import zlib
from pathlib import Path

import httpx

from agent.core.pages import CacheUse, Fetched
from agent.index.crawl.robots import RobotsCache
from agent.index.crawl.sitemaps import MAX_SITEMAP_BYTES, MAX_SITEMAPS, XML_TYPES, sitemap_candidates, sitemap_urls
from agent.pages.fetch import Fetcher, FetchPolicy
from agent.pages.ssrf import Allowlist

from .test_robots import FakeSite, Served


def urlset(*urls: str) -> str:
    locs = "".join(f"<url>\n  <loc> {u} </loc>\n  <lastmod>2026-01-01</lastmod></url>" for u in urls)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'


def index(*sitemaps: str) -> str:
    locs = "".join(f"<sitemap><LOC>{u}</LOC></sitemap>" for u in sitemaps)
    return f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</sitemapindex>'


def xml(text: str | bytes, content_type: str = "application/xml") -> Served:
    return Served(text, content_type)


def listed(pages: dict[str, str | Served], sitemaps: list[str], limit: int = 100) -> tuple[FakeSite, list[str]]:
    site = FakeSite(pages)
    return site, asyncio.run(sitemap_urls(site, sitemaps, limit, timeout_s=5))


def test_the_sitemaps_robots_txt_names_come_first_and_are_bounded() -> None:
    named = [f"https://docs.test/map{n}.xml" for n in range(MAX_SITEMAPS + 5)]
    assert sitemap_candidates("https://docs.test/guide/", named) == named[:MAX_SITEMAPS]


def test_without_named_sitemaps_the_root_and_the_seeds_folder_are_tried() -> None:
    assert sitemap_candidates("https://docs.test/guide/intro.html", []) == [
        "https://docs.test/sitemap.xml", "https://docs.test/guide/sitemap.xml"]
    assert sitemap_candidates("https://docs.test/", []) == ["https://docs.test/sitemap.xml"]


def test_a_sitemaps_urls_are_read_unescaped_each_once() -> None:
    site, urls = listed({"https://docs.test/sitemap.xml": xml(urlset(
        "https://docs.test/a", "https://docs.test/b?x=1&amp;y=2", "https://docs.test/a"))}, ["https://docs.test/sitemap.xml"])
    assert urls == ["https://docs.test/a", "https://docs.test/b?x=1&y=2"]
    assert site.calls == [("https://docs.test/sitemap.xml", XML_TYPES)]  # XML is accepted besides pages


def test_an_index_is_followed_to_its_sitemaps() -> None:
    pages: dict[str, str | Served] = {
        "https://docs.test/sitemap.xml": xml(index("https://docs.test/s1.xml", "https://docs.test/s2.xml.gz")),
        "https://docs.test/s1.xml": xml(urlset("https://docs.test/a"), "text/xml"),
        "https://docs.test/s2.xml.gz": xml(gzip.compress(urlset("https://docs.test/b").encode()), "application/gzip"),
    }
    _, urls = listed(pages, ["https://docs.test/sitemap.xml"])
    assert urls == ["https://docs.test/a", "https://docs.test/b"]


def test_missing_and_broken_sitemaps_list_nothing() -> None:
    pages: dict[str, str | Served] = {"https://docs.test/broken.xml.gz": xml(b"\x1f\x8b" + b"not gzip at all")}
    _, urls = listed(pages, ["https://docs.test/sitemap.xml", "https://docs.test/broken.xml.gz"])
    assert urls == []


def test_at_most_limit_urls_come_back_and_no_more_sitemaps_are_read_once_there() -> None:
    pages: dict[str, str | Served] = {
        "https://docs.test/s1.xml": xml(urlset(*(f"https://docs.test/{n}" for n in range(10)))),
        "https://docs.test/s2.xml": xml(urlset("https://docs.test/late")),
    }
    site, urls = listed(pages, ["https://docs.test/s1.xml", "https://docs.test/s2.xml"], limit=3)
    assert urls == ["https://docs.test/0", "https://docs.test/1", "https://docs.test/2"]
    assert site.asked == ["https://docs.test/s1.xml"]


def test_indexes_that_loop_or_fan_out_read_at_most_max_sitemaps() -> None:
    many = [f"https://docs.test/s{n}.xml" for n in range(MAX_SITEMAPS * 2)]
    root = "https://docs.test/sitemap.xml"
    pages: dict[str, str | Served] = {root: xml(index(root, *many))}
    pages.update({url: xml(index(root, url)) for url in many})  # every one loops back
    site, urls = listed(pages, ["https://docs.test/sitemap.xml"])
    assert urls == []
    assert len(site.asked) == MAX_SITEMAPS and len(set(site.asked)) == MAX_SITEMAPS


class GuardedSite(FakeSite):
    """A FakeSite for its own pages; every other URL goes to a real Fetcher, with the SSRF guard's default
    allow-list (nothing local)."""

    def __init__(self, pages: dict[str, str | Served], fetcher: Fetcher) -> None:
        super().__init__(pages)
        self.fetcher = fetcher

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None) -> Fetched:
        if url in self.pages:
            return await super().fetch_before(url, deadline, types, cache_use)
        self.calls.append((url, types))
        return await self.fetcher.fetch_before(url, deadline, types)


def guarded(pages: dict[str, str | Served], sitemaps: list[str]) -> tuple[GuardedSite, list[str]]:
    async def read() -> tuple[GuardedSite, list[str]]:
        async with httpx.AsyncClient() as http:
            site = GuardedSite(pages, Fetcher(http, FetchPolicy(Allowlist.parse(""), 1_000_000, 3, "test")))
            return site, await sitemap_urls(site, sitemaps, 100, timeout_s=30)

    return asyncio.run(read())


def test_a_hostile_sitemap_reads_no_file_and_reaches_no_local_address(loopback_listener, secret_file: Path) -> None:
    local, file = loopback_listener.url, f"file://{secret_file}"
    hostile = f"""<?xml version="1.0"?>
<!DOCTYPE urlset SYSTEM "{local}/sitemap.dtd" [
  <!ENTITY file SYSTEM "{file}"> <!ENTITY net SYSTEM "{local}/entity"> <!ENTITY % p SYSTEM "{local}/p.dtd"> %p;
  <!ENTITY a "&b;&b;&b;&b;&b;&b;&b;&b;"> <!ENTITY b "https://docs.test/laugh">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xi="http://www.w3.org/2001/XInclude">
<xi:include href="{file}" parse="text"/><xi:include href="{local}/include.xml"/>
<url><loc>&file;</loc></url><url><loc>&net;</loc></url><url><loc>&a;</loc></url>
<url><loc>{file}</loc></url><url><loc>javascript:fetch('{local}')</loc></url><url><loc>data:text/xml,x</loc></url>
<url><loc>https://docs.test/page</loc></url><url><loc>{local}/listed-not-fetched</loc></url>
</urlset>"""
    root = "https://docs.test/sitemap.xml"
    pages: dict[str, str | Served] = {
        root: xml(index("https://docs.test/pages.xml", f"{local}/nested.xml", file, f"gopher://{local[7:]}/x")),
        "https://docs.test/pages.xml": xml(hostile)}
    site, urls = guarded(pages, [root])
    # a local page is listed (the crawl's scope turns it away as another site), never fetched from a sitemap
    assert urls == ["https://docs.test/page", f"{local}/listed-not-fetched"]
    # the local sitemap was asked for, and the SSRF guard refused it; the file: and gopher: ones were not asked for
    assert site.asked == [root, "https://docs.test/pages.xml", f"{local}/nested.xml"]
    assert loopback_listener.connections == 0 and secret_file.read_text() not in repr(urls)


def test_a_gzip_bomb_unpacks_to_the_bound_and_no_further() -> None:
    entry = b"<url><loc>https://docs.test/a</loc></url>\n"
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip, packed as it goes: no 21 MB held
    block = entry * 25_000
    bomb = b"".join(packer.compress(block) for _ in range(MAX_SITEMAP_BYTES // len(block) + 1))
    bomb += packer.compress(b"<url><loc>https://docs.test/past-the-bound</loc></url></urlset>") + packer.flush()
    assert len(bomb) < 200_000
    _, urls = listed({"https://docs.test/sitemap.xml.gz": xml(bomb, "application/gzip")},
                     ["https://docs.test/sitemap.xml.gz"])
    assert urls == ["https://docs.test/a"]


def test_the_sitemaps_a_hostile_robots_txt_names_read_no_file_and_reach_no_local_address(
        loopback_listener, secret_file: Path) -> None:
    local = loopback_listener.url
    text = f"User-agent: *\nSitemap: file://{secret_file}\nSitemap: {local}/sitemap.xml\nSitemap: https://docs.test/s.xml\n"

    async def read() -> tuple[GuardedSite, list[str]]:
        async with httpx.AsyncClient() as http:
            site = GuardedSite({"https://docs.test/robots.txt": Served(text, "text/plain"),
                                "https://docs.test/s.xml": xml(urlset("https://docs.test/a"))},
                               Fetcher(http, FetchPolicy(Allowlist.parse(""), 1_000_000, 3, "test")))
            named = (await RobotsCache(site, timeout_s=30).of("https://docs.test/")).sitemaps()
            return site, await sitemap_urls(site, sitemap_candidates("https://docs.test/", named), 100, timeout_s=30)

    site, urls = asyncio.run(read())
    assert urls == ["https://docs.test/a"]
    assert loopback_listener.connections == 0 and secret_file.read_text() not in repr(urls)
    # robots.txt's names are asked for through the fetcher, whose SSRF guard refuses file: and local addresses
    assert set(site.asked) == {"https://docs.test/robots.txt", f"file://{secret_file}", f"{local}/sitemap.xml",
                               "https://docs.test/s.xml"}
