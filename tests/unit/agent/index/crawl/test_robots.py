"""robots.txt per site and crawl: both agents' rules, Crawl-delay, sitemaps, and a missing file blocking nothing."""

import asyncio
import time
from dataclasses import dataclass

import pytest

from agent.core.pages import CacheUse, Fetched, PageError
from agent.index.crawl.robots import MAX_ROBOTS_BYTES, Robots, RobotsCache

ROBOTS = """
User-agent: *
Disallow: /private/
Allow: /private/open.html
Crawl-delay: 1

User-agent: FirecrawlAgent
Disallow: /no-firecrawl/
Crawl-delay: 3

Sitemap: https://docs.test/maps/a.xml
Sitemap: https://docs.test/maps/b.xml
"""


@dataclass(frozen=True)
class Served:
    body: str | bytes
    content_type: str = "text/html"
    status: int = 200


class FakeSite:
    """The Fetcher's interface over a dict of URL → page (HTML text or a `Served`); any other URL is a 404, whose
    body is kept as the Fetcher keeps an error page's, and a URL in `errors` fails with that error. Every ask is
    recorded with the content types it accepts."""

    def __init__(self, pages: dict[str, str | Served], errors: dict[str, PageError] | None = None) -> None:
        self.pages, self.errors = pages, errors or {}
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.cache_uses: dict[str, CacheUse | None] = {}

    @property
    def asked(self) -> list[str]:
        return [url for url, _ in self.calls]

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None) -> Fetched:
        assert deadline > time.monotonic()
        self.calls.append((url, types))
        self.cache_uses[url] = cache_use
        if url in self.errors:
            return Fetched(url, url, error=self.errors[url])
        served = self.pages.get(url, Served("not found", "text/plain", 404))
        served = Served(served) if isinstance(served, str) else served
        body = served.body.encode() if isinstance(served.body, str) else served.body
        if served.status >= 400:
            return Fetched(url, url, served.status, served.content_type, body,
                           error=PageError("http", f"HTTP {served.status}"))
        return Fetched(url, url, served.status, served.content_type, body)


def robots_of(pages: dict[str, str | Served]) -> tuple[FakeSite, RobotsCache]:
    site = FakeSite(pages)
    return site, RobotsCache(site, timeout_s=5)


def read(pages: dict[str, str | Served], url: str = "https://docs.test/") -> Robots:
    return asyncio.run(robots_of(pages)[1].of(url))


def test_the_rules_of_both_wisp_and_firecrawl_apply() -> None:
    robots = read({"https://docs.test/robots.txt": Served(ROBOTS, "text/plain")})
    assert robots.allows("https://docs.test/guide/a.html")
    assert not robots.allows("https://docs.test/private/notes.html")  # Wisp falls under *
    assert robots.allows("https://docs.test/private/open.html")  # Allow's longer match wins
    assert not robots.allows("https://docs.test/no-firecrawl/page")  # sites that block Firecrawl mean Wisp too


def test_a_group_for_wisp_applies_to_wisp() -> None:
    robots = read({"https://docs.test/robots.txt": Served("User-agent: Wisp\nDisallow: /\n", "text/plain")})
    assert not robots.allows("https://docs.test/guide/a.html")


def test_the_crawl_delay_is_the_largest_either_agent_asks() -> None:
    assert read({"https://docs.test/robots.txt": Served(ROBOTS, "text/plain")}).crawl_delay_s() == 3.0
    assert read({"https://docs.test/robots.txt": Served("User-agent: *\nDisallow:\n", "text/plain")}
                ).crawl_delay_s() == 0.0


def test_the_sitemaps_it_names_are_listed() -> None:
    robots = read({"https://docs.test/robots.txt": Served(ROBOTS, "text/plain")})
    assert robots.sitemaps() == ["https://docs.test/maps/a.xml", "https://docs.test/maps/b.xml"]


def test_a_hostile_robots_txt_is_read_to_its_bound_and_its_patterns_match_without_backtracking() -> None:
    # Protego matches a wildcard rule piece by piece with str.find, not a regex: 2,000 rules of 100 stars against
    # a 2,000-character URL is a plain scan
    stars = "Disallow: /x" + "*a" * 100 + "*b\n"
    rules = "User-agent: *\n" + stars * ((MAX_ROBOTS_BYTES - 1000) // len(stars))
    text = rules + "# the bound falls in this comment " + "#" * 2000 + "\nDisallow: /past-the-bound\n"
    robots = read({"https://docs.test/robots.txt": Served(text, "text/plain")})
    assert robots.allows("https://docs.test/x" + "a" * 2000)
    assert not robots.allows("https://docs.test/x" + "a" * 120 + "b")
    assert robots.allows("https://docs.test/past-the-bound")  # past MAX_ROBOTS_BYTES: not read


@pytest.mark.parametrize("served", [
    Served("nothing here", "text/plain", 404),
    Served("<html><body>User-agent: *<br>Disallow: /</body></html>", "text/html"),  # a soft 404 page
    Served("   \n", "text/plain"),
])
def test_without_a_readable_robots_txt_nothing_is_blocked(served: Served) -> None:
    robots = read({"https://docs.test/robots.txt": served})
    assert robots.rules is None
    assert robots.allows("https://docs.test/private/notes.html")
    assert robots.crawl_delay_s() == 0.0 and robots.sitemaps() == []


def test_a_robots_txt_without_content_type_is_read() -> None:
    robots = read({"https://docs.test/robots.txt": Served("User-agent: *\nDisallow: /private/\n", "")})
    assert not robots.allows("https://docs.test/private/a")


def test_robots_txt_is_fetched_once_per_origin() -> None:
    pages: dict[str, str | Served] = {"https://docs.test/robots.txt": Served(ROBOTS, "text/plain")}
    site, cache = robots_of(pages)

    async def main() -> None:
        for url in ("https://docs.test/a", "https://docs.test/b/c?d=1", "https://docs.test:8443/a",
                    "http://docs.test/a", "https://docs.test/e"):
            await cache.of(url)

    asyncio.run(main())
    assert site.asked == ["https://docs.test/robots.txt", "https://docs.test:8443/robots.txt",
                          "http://docs.test/robots.txt"]


def test_pages_of_a_site_asking_at_once_share_one_read() -> None:
    class SlowSite(FakeSite):
        async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                               cache_use: CacheUse | None = None) -> Fetched:
            await asyncio.sleep(0.01)  # a real fetch yields to the other pages' visits
            return await super().fetch_before(url, deadline, types, cache_use)

    site = SlowSite({"https://docs.test/robots.txt": Served(ROBOTS, "text/plain")})
    cache = RobotsCache(site, timeout_s=5)

    async def main() -> list[Robots]:
        return await asyncio.gather(*(cache.of(f"https://docs.test/{n}") for n in range(8)))

    read_by_each = asyncio.run(main())
    assert site.asked == ["https://docs.test/robots.txt"]
    assert all(robots is read_by_each[0] for robots in read_by_each)
