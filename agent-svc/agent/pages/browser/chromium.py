"""Headless Chromium, as one bounded pool of pages: Debian's binary driven by Playwright (no browser download),
started on the first page that needs it and stopped when idle.

Each page gets a fresh browser context (no cookies, storage or cache shared between requests), skips media and
fonts, refuses downloads, blocks service workers, and is closed at its deadline. Every connection Chromium makes
goes through the guard proxy (guard.py). A Chromium that crashed is started again on the next page; the pages it
had fail with a PageError. Chromium is the Playwright driver's child, which ends it when agent-svc ends, however
it ends (the driver sees its pipe close).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import BrowserContext, Playwright, Route, async_playwright
from playwright.async_api import Error as PlaywrightError

from agent import metrics
from agent.core.browsing import BrowserWork, Rendered, Viewport
from agent.core.pages import Fetched, PageError
from agent.pages.browser.actions import ActionFailed, perform, screenshot
from agent.pages.browser.guard import GuardProxy
from agent.pages.browser.processes import argv0, descendants, pss_mb
from agent.pages.browser.settings import BrowserSettings
from agent.pages.ssrf import Allowlist, Blocked, check_url

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_SKIPPED = frozenset({"media", "font"})  # heavy, and never text
MOBILE = Viewport(390, 844)
_MOBILE_AGENT = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.0 Mobile/15E148 Safari/604.1")
_ARGS = ("--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-breakpad", "--mute-audio", "--force-webrtc-ip-handling-policy=disable_non_proxied_udp")

log = logging.getLogger("agent.browser")


class NotRenderable(Exception):
    """The URL is not a page a browser renders (a PDF, a download): the HTTP fetch serves it."""


class Browser:
    """At most `browser_max_pages` pages rendered at once; `render` never raises but NotRenderable."""

    def __init__(self, settings: BrowserSettings, allow: Allowlist, user_agent: str) -> None:
        self._settings, self._allow, self._user_agent = settings, allow, user_agent
        self._slots = asyncio.Semaphore(settings.browser_max_pages)
        self._starting = asyncio.Lock()
        self._guard = GuardProxy(allow, metrics.browser_request)
        self._proxy_port: int | None = None
        self._playwright: Playwright | None = None
        self._browser: PlaywrightBrowser | None = None
        self._open = 0
        self._last_used = time.monotonic()
        self._idle_task: asyncio.Task[None] | None = None
        width, height = settings.browser_viewport.split("x")
        self._viewport = Viewport(int(width), int(height))

    async def render(self, url: str, work: BrowserWork, deadline: float) -> Fetched:
        """`url` rendered and `work` done by `deadline` (time.monotonic()): the page's HTML as a Fetched, with the
        screenshot and the actions' outputs in `rendered`; what failed is the page's error."""
        started = time.perf_counter()
        deadline = min(deadline, time.monotonic() + self._settings.browser_page_timeout_s)
        try:
            await check_url(url, self._allow)
            async with asyncio.timeout_at(deadline):
                async with self._slots:
                    fetched = await self._render_once_more_after_a_crash(url, work, started)
        except Blocked as e:
            fetched = Fetched(url, url, error=PageError(e.kind, f"blocked: {e}"), outcome="blocked")
        except TimeoutError:
            fetched = Fetched(url, url, error=PageError("timeout", "still rendering at the deadline"),
                              outcome="timeout")
        except ActionFailed as e:
            fetched = Fetched(url, url, error=PageError("action", str(e)), outcome="error")
        except PlaywrightError as e:
            fetched = Fetched(url, url, error=PageError("unreachable", _browser_failure(e)), outcome="error")
        metrics.rendered(fetched.outcome, time.perf_counter() - started)
        return fetched

    async def _render_once_more_after_a_crash(self, url: str, work: BrowserWork, started: float) -> Fetched:
        """A page whose Chromium ended under it is rendered again, once, in a new one (within the deadline)."""
        browser = await self._running()
        try:
            return await self._render(browser, url, work, started)
        except PlaywrightError:
            if browser.is_connected():
                raise
            log.warning("chromium ended while rendering %s: rendering it again", url)
            return await self._render(await self._running(), url, work, started)

    async def _render(self, browser: PlaywrightBrowser, url: str, work: BrowserWork, started: float) -> Fetched:
        context = await browser.new_context(**self._context_options(work))
        self._open += 1
        metrics.BROWSER_PAGES.set(self._open)
        try:
            await context.route("**/*", _skip_heavy)
            page = await context.new_page()
            page.set_default_timeout(self._settings.browser_page_timeout_s * 1000)
            navigations: list[str] = []
            page.on("request", lambda r: navigations.append(r.url) if r.is_navigation_request() else None)
            try:
                response = await page.goto(url, wait_until="load")
            except PlaywrightError as e:
                if "Download is starting" in str(e):
                    raise NotRenderable("a download") from None
                await self._raise_if_blocked(navigations)  # a redirect to a closed address: the guard's doing
                raise
            content_type = (response.headers.get("content-type", "") if response else "").split(";")[0].strip()
            if content_type and not content_type.lower().startswith(_HTML_TYPES):
                raise NotRenderable(content_type)
            if work.wait_for_ms:
                await page.wait_for_timeout(work.wait_for_ms)
            outputs = await perform(page, work.actions, self._settings.browser_max_screenshot_px)
            shot = (await screenshot(page, work.screenshot, self._settings.browser_max_screenshot_px)
                    if work.screenshot else None)
            html = await page.content()
            rendered = Rendered((time.perf_counter() - started) * 1000, shot, tuple(outputs.screenshots),
                                tuple(outputs.scrapes), tuple(outputs.javascript_returns))
            status = response.status if response else 200
            return Fetched(url, page.url, status, "text/html", html.encode(), "utf-8",
                           error=PageError("http", f"HTTP {status}") if status >= 400 else None,
                           outcome="http_error" if status >= 400 else "ok", rendered=rendered)
        finally:
            await _closed(context)
            self._open -= 1
            metrics.BROWSER_PAGES.set(self._open)
            self._last_used = time.monotonic()
            await self._restart_if_too_large()

    async def _raise_if_blocked(self, navigations: list[str]) -> None:
        for url in reversed(navigations):
            await check_url(url, self._allow)

    def _context_options(self, work: BrowserWork) -> dict[str, Any]:
        viewport = MOBILE if work.mobile else self._viewport
        options: dict[str, Any] = {
            "viewport": {"width": viewport.width, "height": viewport.height}, "accept_downloads": False,
            "service_workers": "block", "user_agent": _MOBILE_AGENT if work.mobile else self._user_agent,
            "extra_http_headers": dict(work.headers)}
        if work.mobile:
            options.update(is_mobile=True, has_touch=True)
        return options

    async def _running(self) -> PlaywrightBrowser:
        async with self._starting:
            if self._browser is None or not self._browser.is_connected():
                self._browser = await self._launch()
                if self._idle_task is None and self._settings.browser_idle_s:
                    self._idle_task = asyncio.create_task(self._stop_when_idle())
            return self._browser

    async def _launch(self) -> PlaywrightBrowser:
        if self._proxy_port is None:
            self._proxy_port = await self._guard.start()
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        browser = await self._playwright.chromium.launch(
            executable_path=self._settings.browser_executable, args=[*_ARGS, *_sandbox_args()],
            proxy={"server": f"http://127.0.0.1:{self._proxy_port}", "bypass": "<-loopback>"},
            handle_sigint=False, handle_sigterm=False, handle_sighup=False)
        browser.on("disconnected", self._disconnected)
        metrics.BROWSER_STARTS.inc()
        log.info("chromium %s started", browser.version)
        return browser

    def _disconnected(self, browser: PlaywrightBrowser) -> None:
        if self._browser is browser:
            self._browser = None
            log.warning("chromium ended: the next page starts it again")

    async def _restart_if_too_large(self) -> None:
        """Between pages, a Chromium grown past BROWSER_MAX_RSS_MB is closed: the next page starts a new one."""
        if self._open or self._browser is None:
            return
        if (size := self.memory_mb()) > self._settings.browser_max_rss_mb:
            async with self._starting:  # not while a page is being given the browser
                if self._open:
                    return
                log.info("chromium uses %.0f MB, over BROWSER_MAX_RSS_MB: restarting it", size)
                await self._close_browser()

    async def _stop_when_idle(self) -> None:
        idle_s = self._settings.browser_idle_s
        while True:
            await asyncio.sleep(max(idle_s - (time.monotonic() - self._last_used), 1.0))
            if self._browser is not None and not self._open and time.monotonic() - self._last_used >= idle_s:
                async with self._starting:
                    await self._close_browser()

    async def _close_browser(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.close()

    def memory_mb(self) -> float:
        """The memory of Chromium's processes and of the Playwright driver that runs it, each page they share
        counted once (PSS: a sum of their RSS counts an idle Chromium's 380 MB as 660)."""
        name = Path(self._settings.browser_executable).name
        return sum(pss_mb(pid) for pid in descendants(os.getpid())
                   if name in (argv := argv0(pid)) or "/playwright/driver/" in argv)

    async def close(self) -> None:
        if self._idle_task is not None:
            self._idle_task.cancel()
        await self._close_browser()
        if self._playwright is not None:
            await self._playwright.stop()
        await self._guard.close()


def browser_of(settings: BrowserSettings, allow: Allowlist, user_agent: str) -> Browser | None:
    """The pool that renders pages, or None when RENDER=never or BROWSER_EXECUTABLE is not there (a warning: pages
    are then fetched over HTTP only)."""
    if settings.render == "never":
        return None
    if not os.access(settings.browser_executable, os.X_OK):
        log.warning("no browser at BROWSER_EXECUTABLE=%s: pages are fetched without rendering (RENDER=%s)",
                    settings.browser_executable, settings.render)
        return None
    return Browser(settings, allow, user_agent)


async def _skip_heavy(route: Route) -> None:
    if route.request.resource_type in _SKIPPED:
        metrics.browser_request("skipped")
        await route.abort("blockedbyclient")
    else:
        await route.continue_()


async def _closed(context: BrowserContext) -> None:
    with contextlib.suppress(PlaywrightError):  # the browser went first: nothing left to close
        await context.close()


def _browser_failure(error: PlaywrightError) -> str:
    message = str(error).split("\n", 1)[0]
    if "closed" in message.lower():
        return f"the browser ended while rendering the page ({message})"
    return f"the browser could not render the page: {message}"


def _sandbox_args() -> tuple[str, ...]:
    """Chromium's sandbox needs an unprivileged user; as root (a bare container) it refuses to start with it."""
    return ("--no-sandbox",) if os.geteuid() == 0 else ()
