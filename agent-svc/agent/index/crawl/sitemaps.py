"""Sitemaps: the page URLs a site lists, from the sitemaps robots.txt names or the usual /sitemap.xml.

Read with a regular expression over `<loc>` rather than an XML parser: a sitemap only needs its URLs, and a
hostile one cannot expand entities, load a DTD or include a file. Only http(s) URLs are kept: a `file:` or
`javascript:` one is neither listed nor fetched as a sitemap. Bounded: at most MAX_SITEMAPS files (a sitemap
index is followed one level down, and further within the bound), each cut at the fetcher's size cap and
unpacked to at most MAX_SITEMAP_BYTES, at most `limit` URLs in all.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
import zlib
from urllib.parse import urljoin

from agent.pages.rendering import PageFetcher

MAX_SITEMAPS = 20
MAX_SITEMAP_BYTES = 20_000_000  # decompressed: a .xml.gz may not unpack past this
_LOC = re.compile(rb"<loc>\s*([^<\s]{1,2048})\s*</loc>", re.IGNORECASE)
_INDEX = re.compile(rb"<sitemapindex\b", re.IGNORECASE)
_WEB = re.compile(r"https?://", re.IGNORECASE)
XML_TYPES = ("application/xml", "text/xml", "application/gzip", "application/x-gzip", "application/octet-stream")


def sitemap_candidates(seed: str, named: list[str]) -> list[str]:
    """Where to look: the sitemaps robots.txt names, else /sitemap.xml at the site's root and in the seed's folder."""
    if named:
        return named[:MAX_SITEMAPS]
    return list(dict.fromkeys([urljoin(seed, "/sitemap.xml"), urljoin(seed, "sitemap.xml")]))


async def sitemap_urls(fetcher: PageFetcher, sitemaps: list[str], limit: int, timeout_s: float) -> list[str]:
    """The page URLs of these sitemaps (and of the sitemaps an index among them lists), at most `limit`."""
    pending, seen, pages = list(sitemaps), set(), []
    while pending and len(seen) < MAX_SITEMAPS and len(pages) < limit:
        url = pending.pop(0)
        if url in seen:
            continue
        seen.add(url)
        fetched = await fetcher.fetch_before(url, time.monotonic() + timeout_s, XML_TYPES)
        # in a thread: a sitemap of megabytes takes a good part of a second to unpack and read
        is_index, locs = await asyncio.to_thread(_read, fetched.body if fetched.ok else b"")
        if is_index:
            pending += locs
        else:
            pages += locs
    return list(dict.fromkeys(pages))[:limit]


def _read(body: bytes) -> tuple[bool, list[str]]:
    """Whether the sitemap is an index, and the URLs it lists. finditer, not findall: the match loop lets the
    event loop's thread take the GIL between matches."""
    body = _unpacked(body)
    locs = (html.unescape(m[1].decode("utf-8", "replace")) for m in _LOC.finditer(body))
    return bool(_INDEX.search(body[:2000])), [url for url in locs if _WEB.match(url)]


def _unpacked(body: bytes) -> bytes:
    if body[:2] != b"\x1f\x8b":
        return body
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body, MAX_SITEMAP_BYTES)
    except zlib.error:
        return b""
