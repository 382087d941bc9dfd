"""The browser's settings: when pages are rendered, and the bounds of the Chromium that renders them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent.core.section import Section

RenderMode = Literal["auto", "always", "never"]


class BrowserSettings(Section):
    """Headless Chromium (Debian's `chromium`, driven by Playwright): when it renders, how many pages at once, and
    how much time and memory it may take."""

    render: RenderMode = Field("auto", description="auto: render a page when its HTTP fetch is an empty or "
                               "noscript shell, or when the request needs a browser (screenshot, actions, waitFor, "
                               "mobile); always: render every HTML page; never: no browser (those requests get a "
                               "400 or a warning)")
    browser_executable: str = Field("/usr/bin/chromium", description="The Chromium (or Chrome) binary")
    browser_max_pages: int = Field(2, ge=1, le=64, description="Pages rendered at once; others wait their turn "
                                   "within their own deadline. About one per core: each adds 45 to 90 MB, and past "
                                   "the cores more of them only share the CPU (bench/browser.py)")
    browser_page_timeout_s: float = Field(30.0, gt=0, le=300, description="The longest one page may hold the "
                                          "browser, actions included; a request's own deadline may be shorter")
    browser_max_rss_mb: float = Field(1536, ge=768, description="Chromium's memory (its processes and the driver, "
                                      "PSS: shared pages counted once; about 380 MB idle) above which it is "
                                      "restarted between pages, when none is open; under steady load "
                                      "BROWSER_MAX_PAGES is what bounds it")
    browser_idle_s: float = Field(300.0, ge=0, description="Chromium is stopped after this long without a page "
                                  "(0: kept running), and started again on the next one")
    browser_viewport: str = Field("1280x800", pattern=r"^\d{2,5}x\d{2,5}$",
                                  description="The desktop viewport, WIDTHxHEIGHT (mobile: 390x844)")
    browser_max_screenshot_px: int = Field(16_384, ge=1000, le=32_768, description="The tallest full-page "
                                           "screenshot, in pixels; a longer page is cut there")
