"""Firecrawl's browser keys of a scrape as the SDKs send them: the `screenshot` format (a string, the v1 string
`screenshot@fullPage`, or `{type: "screenshot", fullPage, quality, viewport}`) and `actions`, each checked into
the typed values of core/browsing.py; a 400 naming what is wrong."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from agent.core.browsing import (
    Action,
    Click,
    ExecuteJavascript,
    Press,
    ScrapeAction,
    ScreenshotAction,
    Scroll,
    Shot,
    Viewport,
    Wait,
    Write,
)
from agent.errors import InvalidRequest

SCREENSHOT_FORMATS = frozenset({"screenshot", "screenshot@fullPage"})
MAX_TOTAL_WAIT_MS = 60_000  # Firecrawl's: waitFor and every wait action together
MAX_SELECTOR_CHARS = 1_000
MAX_TEXT_CHARS = 10_000
MAX_SCRIPT_CHARS = 100_000
Wire = TypeVar("Wire", bound=BaseModel)


class _Action(BaseModel):
    model_config = ConfigDict(extra="allow")  # the SDKs' extra keys are accepted and ignored, as Firecrawl does


class _ViewportWire(_Action):
    width: StrictInt = Field(ge=1, le=7680)
    height: StrictInt = Field(ge=1, le=4320)


class _ShotWire(_Action):
    fullPage: StrictBool = False  # noqa: N815 - Firecrawl's wire names
    quality: StrictInt | None = Field(None, ge=1, le=100)
    viewport: _ViewportWire | None = None

    def shot(self, full_page: bool = False) -> Shot:
        viewport = Viewport(self.viewport.width, self.viewport.height) if self.viewport else None
        return Shot(self.fullPage or full_page, self.quality, viewport)


class _WaitWire(_Action):
    milliseconds: StrictInt | None = Field(None, ge=1, le=MAX_TOTAL_WAIT_MS)
    selector: StrictStr | None = Field(None, min_length=1, max_length=MAX_SELECTOR_CHARS)


class _ClickWire(_Action):
    selector: StrictStr = Field(min_length=1, max_length=MAX_SELECTOR_CHARS)
    all: StrictBool = False


class _WriteWire(_Action):
    text: StrictStr = Field(max_length=MAX_TEXT_CHARS)


class _PressWire(_Action):
    key: StrictStr = Field(min_length=1, max_length=50)


class _ScrollWire(_Action):
    direction: Literal["up", "down"] = "down"
    selector: StrictStr | None = Field(None, min_length=1, max_length=MAX_SELECTOR_CHARS)


class _ScriptWire(_Action):
    script: StrictStr = Field(min_length=1, max_length=MAX_SCRIPT_CHARS)


def screenshot_of(items: list[dict[str, Any]]) -> Shot | None:
    """The screenshot the formats ask for (None: none); a 400 for two, or for bad options."""
    shots = [item for item in items if item["type"] in SCREENSHOT_FORMATS]
    if len(shots) > 1:
        raise InvalidRequest.check("formats may name one screenshot", ["formats"])
    if not shots:
        return None
    options = {k: v for k, v in shots[0].items() if k != "type"}
    return _parsed(_ShotWire, options, ["formats"]).shot(full_page=shots[0]["type"] == "screenshot@fullPage")


def actions_of(actions: list[dict[str, Any]], wait_for_ms: int) -> tuple[Action, ...]:
    """`actions` as typed values, in order; a 400 naming the first that is malformed, or a total wait over 60 s."""
    parsed = tuple(_action(item, ["actions", index]) for index, item in enumerate(actions))
    waited = wait_for_ms + sum(a.milliseconds or 0 for a in parsed if isinstance(a, Wait))
    if waited > MAX_TOTAL_WAIT_MS:
        raise InvalidRequest.check(f"waitFor and the wait actions add up to {waited} ms, over "
                                   f"{MAX_TOTAL_WAIT_MS} ms", ["actions"])
    return parsed


def _action(item: Any, path: list[str | int]) -> Action:
    kind = item.get("type") if isinstance(item, dict) else None
    match kind:
        case "wait":
            wait = _parsed(_WaitWire, item, path)
            if (wait.milliseconds is None) == (wait.selector is None):
                raise InvalidRequest.check("a wait action takes either milliseconds or selector", path)
            return Wait(wait.milliseconds, wait.selector)
        case "click":
            click = _parsed(_ClickWire, item, path)
            return Click(click.selector, click.all)
        case "write":
            return Write(_parsed(_WriteWire, item, path).text)
        case "press":
            return Press(_parsed(_PressWire, item, path).key)
        case "scroll":
            scroll = _parsed(_ScrollWire, item, path)
            return Scroll(scroll.direction, scroll.selector)
        case "screenshot":
            return ScreenshotAction(_parsed(_ShotWire, item, path).shot())
        case "scrape":
            return ScrapeAction()
        case "executeJavascript":
            return ExecuteJavascript(_parsed(_ScriptWire, item, path).script)
    raise InvalidRequest.check(f"unknown or unsupported action type {kind!r}: Wisp does wait, click, write, press, "
                               "scroll, screenshot, scrape and executeJavascript", path)


def _parsed(wire: type[Wire], item: dict[str, Any], path: list[str | int]) -> Wire:
    try:
        return wire.model_validate(item)
    except ValidationError as e:
        error = e.errors()[0]
        where = [*path, *error["loc"]]
        raise InvalidRequest.check(f"{'.'.join(map(str, where))}: {error['msg']}", where) from None
