"""Sitemaps: where to look, the URLs they list (an index followed, gzip unpacked), and their bounds."""

import asyncio
import gzip

from agent.index.crawl.sitemaps import MAX_SITEMAPS, XML_TYPES, sitemap_candidates, sitemap_urls

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
