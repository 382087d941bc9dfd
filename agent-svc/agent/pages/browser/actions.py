"""Firecrawl's actions on a rendered page, in order: wait, click, write, press, scroll, screenshot, scrape and
executeJavascript. Their outputs fill Firecrawl's `actions` object (screenshots, scrapes, javascriptReturns); an
action that fails (a selector that matches nothing, a script that throws) stops them with ActionFailed, which a
scrape answers as Firecrawl does: 400 SCRAPE_ACTION_ERROR."""

from __future__ import annotations

from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from agent.core.browsing import (
    Action,
    Click,
    ExecuteJavascript,
    Image,
    Press,
    ScrapeAction,
    ScrapedState,
    ScreenshotAction,
    ScriptReturn,
    Scroll,
    Shot,
    Wait,
    Write,
)

ACTION_TIMEOUT_MS = 5_000  # an element that is not there after 5 s will not come; a `wait` may ask for longer
MAX_SCRIPT_RETURN_CHARS = 100_000  # a script's value, as JSON, kept at most (a page's whole DOM is not an answer)


class ActionFailed(Exception):
    """An action could not be done; the message names it and says why."""


@dataclass
class ActionOutputs:
    screenshots: list[Image] = field(default_factory=list)
    scrapes: list[ScrapedState] = field(default_factory=list)
    javascript_returns: list[ScriptReturn] = field(default_factory=list)


async def perform(page: Page, actions: tuple[Action, ...], max_screenshot_px: int) -> ActionOutputs:
    """Do `actions` on `page` in order; raises ActionFailed at the first that fails."""
    outputs = ActionOutputs()
    for number, action in enumerate(actions, 1):
        try:
            await _do(page, action, outputs, max_screenshot_px)
        except PlaywrightError as e:
            message = str(e).split("\n", 1)[0]
            raise ActionFailed(f"action {number} ({_described(action)}) failed: {message}") from None
    return outputs


async def _do(page: Page, action: Action, outputs: ActionOutputs, max_screenshot_px: int) -> None:
    match action:
        case Wait(milliseconds=ms, selector=None):
            await page.wait_for_timeout(ms or 0)
        case Wait(selector=str(selector)):
            await page.wait_for_selector(selector, state="visible")
        case Click(selector=selector, all=True):
            for element in await page.locator(selector).all():
                await element.click(timeout=ACTION_TIMEOUT_MS)
        case Click(selector=selector):
            await page.locator(selector).first.click(timeout=ACTION_TIMEOUT_MS)
        case Write(text=text):
            await page.keyboard.type(text)
        case Press(key=key):
            await page.keyboard.press(key)
        case Scroll(direction=direction, selector=selector):
            await _scroll(page, direction, selector)
        case ScreenshotAction(shot=shot):
            outputs.screenshots.append(await screenshot(page, shot, max_screenshot_px))
        case ScrapeAction():
            outputs.scrapes.append(ScrapedState(page.url, await page.content()))
        case ExecuteJavascript(script=script):
            outputs.javascript_returns.append(await _run_script(page, script))


async def _scroll(page: Page, direction: str, selector: str | None) -> None:
    sign = -1 if direction == "up" else 1
    if selector is None:
        await page.mouse.wheel(0, sign * 10_000)
        await page.evaluate("(dy) => window.scrollBy(0, dy)", sign * 10_000)
    else:
        await page.locator(selector).first.evaluate("(el, dy) => el.scrollBy(0, dy)", sign * 10_000,
                                                   timeout=ACTION_TIMEOUT_MS)


async def _run_script(page: Page, script: str) -> ScriptReturn:
    """A script's value, as Firecrawl's javascriptReturns give it: its `typeof` and the value (JSON-safe)."""
    kind, value = await page.evaluate(
        """async (source) => {
            const value = await (0, eval)(source);
            let safe;
            try { safe = JSON.parse(JSON.stringify(value ?? null)); } catch (e) { safe = String(value); }
            return [typeof value, safe];
        }""", script)
    if len(repr(value)) > MAX_SCRIPT_RETURN_CHARS:
        value = repr(value)[:MAX_SCRIPT_RETURN_CHARS]
    return ScriptReturn(kind, value)


async def screenshot(page: Page, shot: Shot, max_px: int) -> Image:
    """The viewport or the whole page (cut at `max_px` tall), at the shot's viewport size when it names one."""
    if shot.viewport is not None:
        await page.set_viewport_size({"width": shot.viewport.width, "height": shot.viewport.height})
    options: dict[str, object] = {"type": "jpeg", "quality": shot.quality} if shot.quality else {"type": "png"}
    if shot.full_page:
        size = page.viewport_size or {"width": 1280, "height": 800}
        height = await page.evaluate("() => document.documentElement.scrollHeight")
        if height > max_px:
            options["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": max_px}
        options["full_page"] = True
    data = await page.screenshot(**options)  # type: ignore[arg-type]
    return Image(data, "image/jpeg" if shot.quality else "image/png")


def _described(action: Action) -> str:
    """The action's Firecrawl type, and its selector when it has one."""
    selector = getattr(action, "selector", None)
    return f"{_name(action)} {selector!r}" if selector else _name(action)


def _name(action: Action) -> str:
    return {Wait: "wait", Click: "click", Write: "write", Press: "press", Scroll: "scroll",
            ScreenshotAction: "screenshot", ScrapeAction: "scrape", ExecuteJavascript: "executeJavascript"}[
        type(action)]
