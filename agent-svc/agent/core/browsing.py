"""What a request asks of the browser (Firecrawl's waitFor, mobile, headers, screenshot formats and actions) and
what the browser gives back: the typed values between the wire formats and pages/browser/."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Literal

ScrollDirection = Literal["up", "down"]


@dataclass(frozen=True)
class Viewport:
    width: int
    height: int


@dataclass(frozen=True)
class Shot:
    """A screenshot: the viewport, or the whole page (`full_page`); JPEG at `quality` when given, else PNG."""

    full_page: bool = False
    quality: int | None = None
    viewport: Viewport | None = None


@dataclass(frozen=True)
class Wait:
    milliseconds: int | None = None
    selector: str | None = None  # until this element is visible


@dataclass(frozen=True)
class Click:
    selector: str
    all: bool = False  # every element that matches, not only the first


@dataclass(frozen=True)
class Write:
    text: str  # typed into the focused element (a click on it comes first)


@dataclass(frozen=True)
class Press:
    key: str  # Playwright's key names, as Firecrawl's: Enter, Tab, ArrowDown, ...


@dataclass(frozen=True)
class Scroll:
    direction: ScrollDirection = "down"
    selector: str | None = None  # scroll this element instead of the page


@dataclass(frozen=True)
class ScreenshotAction:
    shot: Shot


@dataclass(frozen=True)
class ScrapeAction:
    """The page's HTML at this point of the actions."""


@dataclass(frozen=True)
class ExecuteJavascript:
    script: str


Action = Wait | Click | Write | Press | Scroll | ScreenshotAction | ScrapeAction | ExecuteJavascript


@dataclass(frozen=True)
class BrowserWork:
    """What a request asks of the browser beyond loading the page: nothing by default."""

    wait_for_ms: int = 0
    mobile: bool = False
    headers: tuple[tuple[str, str], ...] = ()
    actions: tuple[Action, ...] = ()
    screenshot: Shot | None = None

    @property
    def needs_browser(self) -> bool:
        """Whether only a browser can do it (with RENDER=auto, such a page is always rendered)."""
        return bool(self.wait_for_ms or self.mobile or self.actions or self.screenshot)


NO_BROWSER_WORK = BrowserWork()


@dataclass(frozen=True)
class Image:
    data: bytes
    mime: str  # image/png or image/jpeg

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode()}"


@dataclass(frozen=True)
class ScrapedState:
    url: str
    html: str


@dataclass(frozen=True)
class ScriptReturn:
    type: str  # JavaScript's typeof the value
    value: object


@dataclass(frozen=True)
class Rendered:
    """What the browser made of one page besides its HTML: the screenshot format, and the actions' outputs in
    Firecrawl's `actions` object."""

    ms: float
    screenshot: Image | None = None
    screenshots: tuple[Image, ...] = ()
    scrapes: tuple[ScrapedState, ...] = ()
    javascript_returns: tuple[ScriptReturn, ...] = ()

    @property
    def has_actions_output(self) -> bool:
        return bool(self.screenshots or self.scrapes or self.javascript_returns)
