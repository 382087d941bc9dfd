"""robots.txt, once per site and crawl: what it blocks, its Crawl-delay, and the sitemaps it names.

Read with Protego (wildcards, Allow precedence and the other modern rules); the rules for Wisp's own token
and for Firecrawl's both apply, since sites that block Firecrawl's crawler mean Wisp too. A site without a
readable robots.txt (404, an error, an HTML page) blocks nothing, as for Firecrawl.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from protego import Protego

from agent.pages.rendering import PageFetcher

USER_AGENTS = ("Wisp", "FirecrawlAgent")
MAX_ROBOTS_BYTES = 500_000


@dataclass(frozen=True)
class Robots:
    rules: Protego | None  # None: no robots.txt, nothing blocked

    def allows(self, url: str) -> bool:
        return self.rules is None or all(self.rules.can_fetch(url, agent) for agent in USER_AGENTS)

    def crawl_delay_s(self) -> float:
        if self.rules is None:
            return 0.0
        return max((self.rules.crawl_delay(agent) or 0.0 for agent in USER_AGENTS), default=0.0)

    def sitemaps(self) -> list[str]:
        return list(self.rules.sitemaps) if self.rules is not None else []


class RobotsCache:
    """robots.txt per origin for one crawl, fetched through the crawl's fetcher (the SSRF guard applies)."""

    def __init__(self, fetcher: PageFetcher, timeout_s: float) -> None:
        self._fetcher, self._timeout_s = fetcher, timeout_s
        self._by_origin: dict[str, Robots] = {}
        self._reading: dict[str, asyncio.Lock] = {}  # the first page of a site reads it, the others wait

    async def of(self, url: str) -> Robots:
        parts = urlsplit(url)
        origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        async with self._reading.setdefault(origin, asyncio.Lock()):
            if origin not in self._by_origin:
                fetched = await self._fetcher.fetch_before(origin + "/robots.txt", time.monotonic() + self._timeout_s)
                readable = fetched.ok and fetched.content_type in ("", "text/plain")
                text = fetched.body[:MAX_ROBOTS_BYTES].decode("utf-8", "replace") if readable else ""
                self._by_origin[origin] = Robots(Protego.parse(text) if text.strip() else None)
        return self._by_origin[origin]
