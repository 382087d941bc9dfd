"""Which pages the browser renders (RENDER): every page that is fetched as a page (a scrape, a crawl, a batch, a
ranked search's results; not robots.txt or sitemaps) goes through here.

- `never`: HTTP only, as before the browser.
- `auto` (the default): HTTP first; the browser renders the page instead when its HTML is a shell (almost no text
  outside its scripts, or a noscript notice that asks for JavaScript), or when the request needs a browser
  (a screenshot, actions, waitFor, mobile).
- `always`: the browser renders every page; what is not HTML (a PDF) is fetched over HTTP.

Rendering shares the fetch's deadline, so in a ranked search it is part of the fetch stage's budget: a shell not
rendered in time keeps its HTTP body, and says why in `Fetched.unrendered`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agent.core.browsing import NO_BROWSER_WORK, BrowserWork
from agent.core.pages import CacheUse, Fetched
from agent.pages.browser.chromium import Browser, NotRenderable
from agent.pages.browser.settings import RenderMode
from agent.pages.fetch import Fetcher

MIN_TEXT_CHARS = 200  # a page with less text than this outside its scripts is a shell
MAX_NOSCRIPT_PAGE_CHARS = 1000  # a noscript notice marks a shell only on a page this short: blogs have one too
_HIDDEN = re.compile(rb"<(script|style|noscript|template)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(rb"<[^>]*>")
_SPACE = re.compile(rb"\s+")
_NOSCRIPT_NOTICE = re.compile(rb"<noscript\b[^>]*>(?:(?!</noscript).)*?(enable|requires?|need|turn on)\w*\s+"
                              rb"(?:\w+\s+){0,3}javascript", re.IGNORECASE | re.DOTALL)


class PageFetcher:
    """The page stage's fetch: HTTP, and the browser when RENDER and the request call for it (`browser` None:
    none is installed, or RENDER=never)."""

    def __init__(self, fetcher: Fetcher, browser: Browser | None, mode: RenderMode) -> None:
        self._fetcher, self._browser, self._mode = fetcher, browser, mode

    @property
    def renders(self) -> bool:
        """Whether a browser can do what a request asks of it (screenshot, actions, waitFor, mobile)."""
        return self._browser is not None

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None, work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
        """As Fetcher.fetch_before; a page (`cache_use` given) is rendered when RENDER and `work` say so."""
        if cache_use is None or self._browser is None:
            return await self._fetcher.fetch_before(url, deadline, types, cache_use)
        if work.needs_browser or self._mode == "always":
            try:
                return await self._browser.render(url, work, deadline)
            except NotRenderable:
                return await self._fetcher.fetch_before(url, deadline, types, cache_use)
        fetched = await self._fetcher.fetch_before(url, deadline, types, cache_use)
        if self._mode == "auto" and is_shell(fetched):
            return await self._rendered_instead(fetched, deadline)
        return fetched

    async def _rendered_instead(self, fetched: Fetched, deadline: float) -> Fetched:
        assert self._browser is not None
        try:
            rendered = await self._browser.render(fetched.url, NO_BROWSER_WORK, deadline)
        except NotRenderable:
            return fetched
        if rendered.ok:
            return rendered
        return replace(fetched, unrendered=str(rendered.error))


def is_shell(fetched: Fetched) -> bool:
    """Whether a fetched HTML page needs its scripts run to show its content."""
    if not fetched.ok or (fetched.content_type and "html" not in fetched.content_type):
        return False
    body = fetched.body
    if b"<script" not in body.lower():
        return False
    text = _SPACE.sub(b" ", _TAG.sub(b" ", _HIDDEN.sub(b" ", body))).strip()
    return len(text) < MIN_TEXT_CHARS or (len(text) < MAX_NOSCRIPT_PAGE_CHARS
                                          and _NOSCRIPT_NOTICE.search(body) is not None)
