from __future__ import annotations

import pytest

from agent.api.firecrawl.browser_wire import actions_of, screenshot_of
from agent.core.browsing import (
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


def test_every_firecrawl_action_becomes_its_typed_value_in_order() -> None:
    actions = actions_of([
        {"type": "wait", "milliseconds": 500}, {"type": "wait", "selector": "#more"},
        {"type": "click", "selector": "#a", "all": True}, {"type": "write", "text": "hello"},
        {"type": "press", "key": "Enter"}, {"type": "scroll", "direction": "up", "selector": "main"},
        {"type": "scroll"},
        {"type": "screenshot", "fullPage": True, "quality": 70, "viewport": {"width": 400, "height": 300}},
        {"type": "scrape"}, {"type": "executeJavascript", "script": "1+1", "extra": "ignored"}], 0)
    assert actions == (Wait(500), Wait(selector="#more"), Click("#a", True), Write("hello"), Press("Enter"),
                       Scroll("up", "main"), Scroll(), ScreenshotAction(Shot(True, 70, Viewport(400, 300))),
                       ScrapeAction(), ExecuteJavascript("1+1"))


@pytest.mark.parametrize(("action", "path", "message"), [
    ({"type": "wait"}, ["actions", 0], "either milliseconds or selector"),
    ({"type": "wait", "milliseconds": 5, "selector": "a"}, ["actions", 0], "either milliseconds or selector"),
    ({"type": "click"}, ["actions", 0, "selector"], "Field required"),
    ({"type": "click", "selector": "a" * 1001}, ["actions", 0, "selector"], "at most 1000"),
    ({"type": "scroll", "direction": "left"}, ["actions", 0, "direction"], "'up' or 'down'"),
    ({"type": "screenshot", "quality": 0}, ["actions", 0, "quality"], "greater than or equal to 1"),
    ({"type": "screenshot", "viewport": {"width": 100_000, "height": 10}}, ["actions", 0, "viewport", "width"],
     "less than or equal"),
    ({"type": "executeJavascript", "script": ""}, ["actions", 0, "script"], "at least 1"),
    ({"type": "pdf"}, ["actions", 0], "unknown or unsupported action type 'pdf'"),
    ("click", ["actions", 0], "unknown or unsupported action type None"),
])
def test_a_malformed_action_is_a_400_naming_where(action: object, path: list, message: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        actions_of([action], 0)  # type: ignore[list-item]
    assert refused.value.details[0]["path"] == path and message in refused.value.message


def test_waits_and_wait_for_add_up_to_sixty_seconds_at_most() -> None:
    assert actions_of([{"type": "wait", "milliseconds": 30_000}], 30_000) == (Wait(30_000),)
    with pytest.raises(InvalidRequest, match="add up to 60001 ms"):
        actions_of([{"type": "wait", "milliseconds": 30_001}], 30_000)


def test_the_screenshot_format_in_its_three_spellings() -> None:
    assert screenshot_of([{"type": "markdown"}]) is None
    assert screenshot_of([{"type": "screenshot"}]) == Shot()
    assert screenshot_of([{"type": "screenshot@fullPage"}]) == Shot(full_page=True)
    assert screenshot_of([{"type": "screenshot", "fullPage": True, "quality": 50,
                           "viewport": {"width": 800, "height": 600}}]) == Shot(True, 50, Viewport(800, 600))
    with pytest.raises(InvalidRequest, match="one screenshot"):
        screenshot_of([{"type": "screenshot"}, {"type": "screenshot@fullPage"}])
    with pytest.raises(InvalidRequest):
        screenshot_of([{"type": "screenshot", "fullPage": "yes"}])
