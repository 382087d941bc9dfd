from __future__ import annotations

import asyncio
import time

import pytest

from agent.core.browsing import NO_BROWSER_WORK, BrowserWork, Rendered, Shot
from agent.core.pages import SERVICE_CACHE_USE, CacheUse, Fetched, PageError
from agent.pages.browser.chromium import NotRenderable
from agent.pages.rendering import PageFetcher, is_shell

ARTICLE = "<p>" + "A page with its text in its HTML, as most documentation pages have it. " * 8 + "</p>"


def html(body: str, content_type: str = "text/html") -> Fetched:
    return Fetched("https://site.test/", "https://site.test/", 200, content_type, body.encode())


@pytest.mark.parametrize("body", [
    '<html><head><title>App</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>',
    "<body><noscript>You need to enable JavaScript to run this app.</noscript><div id=app></div>"
    "<script>render()</script></body>",
    # a short page whose noscript notice asks for JavaScript, though it shows a little text
    "<body><h1>Docs</h1><p>" + "Loading the documentation. " * 12 + "</p><noscript>This site requires "
    "JavaScript.</noscript><script>boot()</script></body>",
])
def test_a_shell_is_a_page_with_scripts_and_next_to_no_text_outside_them(body: str) -> None:
    assert is_shell(html(body))


@pytest.mark.parametrize("fetched", [
    html("<body>" + ARTICLE + "<script>analytics()</script></body>"),
    html("<body>" + ARTICLE * 3 + "<noscript>Please enable JavaScript to view the comments.</noscript>"
         "<script>comments()</script></body>"),
    html("<body><p>short, and no script</p></body>"),
    html('<div id="root"></div><script></script>', "application/pdf"),
    Fetched("https://site.test/", "https://site.test/", 404, "text/html", b"<script></script>",
            error=PageError("http", "HTTP 404")),
])
def test_a_page_with_its_text_in_its_html_or_no_page_at_all_is_no_shell(fetched: Fetched) -> None:
    assert not is_shell(fetched)


def test_the_text_inside_scripts_and_styles_is_not_the_pages() -> None:
    hidden = "<script>var text = '" + "words " * 200 + "';</script><style>" + "p{} " * 200 + "</style>"
    assert is_shell(html(f"<body>{hidden}<div id=app></div></body>"))


class Web:
    def __init__(self, fetched: Fetched) -> None:
        self.fetched, self.asked = fetched, 0

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None) -> Fetched:
        self.asked += 1
        return self.fetched


class Chromium:
    """Renders every page as `outcome` (a NotRenderable raised for a PDF)."""

    def __init__(self, outcome: Fetched | Exception) -> None:
        self.outcome, self.asked = outcome, []

    async def render(self, url: str, work: BrowserWork, deadline: float) -> Fetched:
        self.asked.append(work)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


RENDERED = Fetched("https://site.test/", "https://site.test/", 200, "text/html", ARTICLE.encode(),
                   rendered=Rendered(120.0))
SHELL = html('<div id="root"></div><script src="/app.js"></script>')


def fetch(fetcher: PageFetcher, cache_use: CacheUse | None = SERVICE_CACHE_USE,
          work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
    return asyncio.run(fetcher.fetch_before("https://site.test/", time.monotonic() + 5, (), cache_use, work))


def test_auto_renders_a_shell_and_keeps_a_page_with_text() -> None:
    browser = Chromium(RENDERED)
    assert fetch(PageFetcher(Web(SHELL), browser, "auto")) is RENDERED  # type: ignore[arg-type]
    page = html(ARTICLE)
    assert fetch(PageFetcher(Web(page), browser, "auto")) is page  # type: ignore[arg-type]
    assert len(browser.asked) == 1


def test_auto_renders_without_fetching_first_what_only_a_browser_can_do() -> None:
    web, browser = Web(html(ARTICLE)), Chromium(RENDERED)
    work = BrowserWork(screenshot=Shot())
    assert fetch(PageFetcher(web, browser, "auto"), work=work) is RENDERED  # type: ignore[arg-type]
    assert browser.asked == [work] and web.asked == 0


def test_a_shell_not_rendered_in_time_keeps_its_http_page_and_says_why() -> None:
    late = Fetched("https://site.test/", "https://site.test/", error=PageError("timeout", "still rendering at the "
                                                                                 "deadline"), outcome="timeout")
    kept = fetch(PageFetcher(Web(SHELL), Chromium(late), "auto"))  # type: ignore[arg-type]
    assert kept.ok and kept.body == SHELL.body and kept.unrendered == "still rendering at the deadline"


def test_always_renders_every_page_and_fetches_what_a_browser_does_not_render() -> None:
    page, pdf = html(ARTICLE), html("%PDF-1.4", "application/pdf")
    assert fetch(PageFetcher(Web(page), Chromium(RENDERED), "always")) is RENDERED  # type: ignore[arg-type]
    assert fetch(PageFetcher(Web(pdf), Chromium(NotRenderable("a PDF")), "always")) is pdf  # type: ignore[arg-type]


def test_robots_txt_sitemaps_and_a_service_without_a_browser_fetch_over_http_only() -> None:
    browser = Chromium(RENDERED)
    assert fetch(PageFetcher(Web(SHELL), browser, "always"), cache_use=None) is SHELL  # type: ignore[arg-type]
    assert fetch(PageFetcher(Web(SHELL), None, "never")) is SHELL  # type: ignore[arg-type]
    assert browser.asked == [] and not PageFetcher(Web(SHELL), None, "never").renders  # type: ignore[arg-type]
