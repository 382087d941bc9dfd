"""Webhook deliveries through the SSRF guard: pinned to the checked address, refused for a private one whatever
the request said, retried only for failures that may pass."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agent.pages import webhooks
from agent.pages.ssrf import Allowlist, Blocked
from agent.pages.webhooks import WebhookSender


def sender(handle, allow: str = "127.0.0.1") -> WebhookSender:
    return WebhookSender(httpx.AsyncClient(transport=httpx.MockTransport(handle)), Allowlist.parse(allow), "", 1.0)


@pytest.fixture(autouse=True)
def no_retry_delays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webhooks, "RETRY_DELAYS_S", (0.0, 0.0))


def test_a_delivery_goes_to_the_checked_address_with_the_host_header() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    assert asyncio.run(sender(handle).send("http://127.0.0.1:8/hook?x=1", {"X-A": "b"}, {"type": "agent.started"}))
    assert [str(r.url) for r in seen] == ["http://127.0.0.1:8/hook?x=1"] and seen[0].headers["x-a"] == "b"


def test_a_private_address_is_refused_at_the_check_and_at_delivery_without_a_request() -> None:
    seen: list[httpx.Request] = []
    guarded = sender(lambda r: seen.append(r) or httpx.Response(200), allow="")
    with pytest.raises(Blocked):
        asyncio.run(guarded.check("http://10.1.2.3/hook"))
    assert asyncio.run(guarded.send("http://127.0.0.1:8/hook", {}, {"type": "agent.started"})) is False
    assert seen == []


@pytest.mark.parametrize(("status", "attempts"), [(500, 3), (429, 3), (404, 1), (400, 1)])
def test_only_failures_that_may_pass_are_retried(status: int, attempts: int) -> None:
    seen: list[httpx.Request] = []
    guarded = sender(lambda r: seen.append(r) or httpx.Response(status))
    assert asyncio.run(guarded.send("http://127.0.0.1:8/hook", {}, {"type": "agent.completed"})) is False
    assert len(seen) == attempts


def test_a_receiver_that_cannot_be_reached_is_retried_then_given_up() -> None:
    tries: list[int] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        tries.append(1)
        raise httpx.ConnectError("refused", request=request)

    assert asyncio.run(sender(refuse).send("http://127.0.0.1:8/hook", {}, {"type": "agent.failed"})) is False
    assert len(tries) == 3
