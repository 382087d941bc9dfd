"""Which discovered links a crawl follows, and when two URLs are the same page.

Seed 001's lessons: stay on the seed's host and under its path by default, and drop site navigation (about,
blog, news, changelog, tag and search pages, wiki `Special:` pages), which otherwise fills an index with pages
that match every query a little. Firecrawl's options widen the scope (contract §4.1).
"""

from __future__ import annotations

import posixpath
from urllib.parse import urlsplit, urlunsplit

import re2

from agent.core.crawl_options import CrawlOptions
from agent.index.crawl.options import MAX_URL_CHARS, url_depth
from agent.index.crawl.settings import DEFAULT_JUNK_PATHS

_NOT_PAGES = re2.compile(
    r"(?i)\.(png|jpe?g|gif|webp|svg|ico|bmp|tiff?|mp[34]|m4a|ogg|wav|webm|avi|mov|zip|gz|tgz|bz2|xz|7z|rar|tar|"
    r"deb|rpm|exe|msi|dmg|iso|bin|woff2?|ttf|eot|css|js|mjs|map|json|xml|rss|atom)$"
)


def url_key(url: str, ignore_query: bool = False, dedupe_similar: bool = True) -> str:
    """One key per page: no fragment; with `dedupe_similar` (Firecrawl's default) the www., http/https,
    trailing-slash and index.html variants are one page."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
    path = parts.path or "/"
    scheme = parts.scheme.lower()
    if dedupe_similar:
        host = host.removeprefix("www.")
        scheme = "http"
        path = path.removesuffix("/index.html").removesuffix("/index.htm")  # a whole segment: not reindex.html
        path = path.rstrip("/") or "/"
    return urlunsplit((scheme, host + port, path, "" if ignore_query else parts.query, ""))


class Scope:
    """The links one crawl follows: its seed's site and path, Firecrawl's filters, and the junk-path filter."""

    def __init__(self, options: CrawlOptions, junk: str = DEFAULT_JUNK_PATHS) -> None:
        seed = urlsplit(options.seed)
        self.options = options
        self._host = (seed.hostname or "").lower().removeprefix("www.")
        self._port = _port(seed.scheme, seed.port)
        self._prefix = _folder(seed.path)
        self._include = [re2.compile(p) for p in options.include]
        self._exclude = [re2.compile(p) for p in options.exclude]
        self._junk = re2.compile(junk) if junk else None

    def follows(self, url: str) -> str | None:
        """None when the crawl follows this link, else why not."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return "malformed URL"
        if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > MAX_URL_CHARS:
            return "not an http(s) URL"
        if not self._on_site((parts.hostname or "").lower().removeprefix("www."), _port(parts.scheme, port)):
            return "another site"
        if not self.options.entire_domain and not self.options.external and not parts.path.startswith(self._prefix):
            return f"outside {self._prefix}"
        if _NOT_PAGES.search(parts.path):
            return "not a page"
        if self.options.max_path_depth is not None and url_depth(url) > self.options.max_path_depth:
            return "deeper than maxDepth"
        target = url if self.options.regex_on_full_url else parts.path
        if any(p.search(target) for p in self._exclude):
            return "excludePaths"
        if self._include:
            return None if any(p.search(target) for p in self._include) else "not in includePaths"
        # only below the seed's folder: a crawl of /blog/ follows its posts
        below = parts.path[len(self._prefix) - 1:] if parts.path.startswith(self._prefix) else parts.path
        if self._junk and self._junk.search(below + (f"?{parts.query}" if parts.query else "")):
            return "a navigation page (about, blog, news, changelog, tags, search)"
        return None

    def _on_site(self, host: str, port: int | None) -> bool:
        if self.options.external:
            return True
        if host == self._host:
            return port == self._port
        return self.options.subdomains and host.endswith("." + self._host)


def _port(scheme: str, port: int | None) -> int | None:
    """An explicit port, None for the scheme's default one: http and https on their default ports are one site."""
    return None if port == {"http": 80, "https": 443}.get(scheme) else port


def _folder(path: str) -> str:
    """The folder a seed's path names: itself when it ends in / or has no extension (/docs), else its parent."""
    if path.endswith("/"):
        return path
    last = path.rsplit("/", 1)[-1]
    return path + "/" if "." not in last else posixpath.dirname(path).rstrip("/") + "/"
