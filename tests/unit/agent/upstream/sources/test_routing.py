"""The extra sources' routing with an injected clock and a real httpx client over a mock transport: a 402 parks a
tier until its reset, a 429 or a 5xx backs it off on the documented schedule (15 minutes, doubling, at most 6
hours), an answer forgets the failures, a daily cap holds, a held tier is never called and the next one is, and a
source that hangs, drips, floods or answers garbage is bounded and backed off (a timeout after one forgiven)."""

import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from agent.state.tiers.memory import ProcessTiers
from agent.upstream.settings import SourcesSettings
from agent.upstream.sources.calls import Ask
from agent.upstream.sources.routing import BACKOFF_FIRST_S, BACKOFF_MAX_S, CandidateSources, backoff_s, next_reset

from ...test_metrics import Moved, value

NOW = datetime(2026, 12, 6, 21, 0, tzinfo=UTC).timestamp()
ASK = Ask("sqlite locking", 10, True)
KEY = "exa-secret-key-123"


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


class Api:
    """A transport that answers each tier (by its host) as told, and records the calls."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.calls: list[httpx.Request] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(request)
        answer = self.answers[request.url.host]
        if callable(answer):
            return await answer(request)
        status, body = answer
        return httpx.Response(status, content=body if isinstance(body, bytes) else json.dumps(body).encode())

    def hosts(self) -> list[str]:
        return [r.url.host for r in self.calls]


def results(*urls: str) -> tuple[int, dict]:
    return 200, {"results": [{"url": u, "title": f"about {u}", "text": f"the text of {u}"} for u in urls]}


def router(api: Api, clock: Clock, tiers: list[dict] | None = None, timeout_s: float = 5.0,
           store: ProcessTiers | None = None, max_bytes: int = 100_000) -> CandidateSources:
    tiers = tiers or [{"name": "keyed", "url": "https://keyed.test", "key": KEY},
                      {"name": "free", "url": "https://free.test"}]
    settings = SourcesSettings(search_sources=[{"name": "exa", "kind": "exa", "tiers": tiers}],
                               sources_timeout_s=timeout_s, source_max_bytes=max_bytes)
    http = httpx.AsyncClient(transport=httpx.MockTransport(api))
    return CandidateSources.of(settings, http, store or ProcessTiers(), clock)


def search(sources: CandidateSources, bound_s: float = 5.0) -> Any:
    return asyncio.run(sources.search(ASK, bound_s))[0]


def test_the_backoff_schedule() -> None:
    assert [backoff_s(n) / 60 for n in range(1, 8)] == [15, 30, 60, 120, 240, 360, 360]
    assert backoff_s(10_000) == BACKOFF_MAX_S


def test_the_reset_is_the_next_reset_day_at_midnight_utc() -> None:
    assert next_reset(NOW, 1) == datetime(2027, 1, 1, tzinfo=UTC).timestamp()
    assert next_reset(datetime(2026, 3, 1, 0, 0, tzinfo=UTC).timestamp(), 1) == \
        datetime(2026, 4, 1, tzinfo=UTC).timestamp()
    assert next_reset(NOW, 15) == datetime(2026, 12, 15, tzinfo=UTC).timestamp()


def test_a_402_parks_the_tier_until_the_first_and_the_next_tier_answers() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (402, {"error": "out of credits"}), "free.test": results("https://a.test/1")}
    sources = router(api, clock)
    answered = search(sources)
    assert answered.tier == "free" and [h.url for h in answered.hits] == ["https://a.test/1"]
    assert answered.hits[0].found_by == ("exa",) and answered.hits[0].text == "the text of https://a.test/1"
    clock.now = datetime(2026, 12, 31, 23, 59, tzinfo=UTC).timestamp()
    search(sources)
    assert api.hosts() == ["keyed.test", "free.test", "free.test"]  # parked: not called again this month
    report = asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]
    assert report["state"] == "parked" and report["until"] == "2027-01-01T00:00:00+00:00"
    clock.now = datetime(2027, 1, 1, 0, 0, 1, tzinfo=UTC).timestamp()
    api.answers["keyed.test"] = results("https://a.test/2")
    assert search(sources).tier == "keyed"


def test_an_out_of_credit_error_inside_a_200_parks_too() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (200, {"error": "web_search_exa error (402): You have exceeded your credits limit"}),
                   "free.test": results("https://a.test/1")}
    sources = router(api, clock)
    assert search(sources).tier == "free"
    assert asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]["state"] == "parked"


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_429_or_5xx_backs_off_15_minutes_doubling_to_6_hours(status: int) -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (status, b"slow down"), "free.test": (status, b"slow down")}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}])
    waits = []
    for _ in range(7):
        answered = search(sources)
        assert answered.hits == () and "backed off until" in answered.skipped
        state = asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]
        until = datetime.fromisoformat(state["until"]).timestamp()
        waits.append((until - clock.now) / 60)
        clock.now = until - 1
        assert search(sources).skipped.startswith("keyed backed off until")  # held: not called
        clock.now = until
    assert waits == [15, 30, 60, 120, 240, 360, 360]
    assert len(api.calls) == 7


def test_an_answer_forgets_the_failures() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (429, b"")}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}])
    search(sources)
    clock.now += BACKOFF_FIRST_S
    search(sources)
    clock.now += 2 * BACKOFF_FIRST_S
    api.answers["keyed.test"] = results("https://a.test/1")
    assert search(sources).tier == "keyed"
    api.answers["keyed.test"] = (429, b"")
    search(sources)
    state = asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]
    assert state["failures"] == 1 and datetime.fromisoformat(state["until"]).timestamp() == clock.now + 15 * 60


def test_the_daily_cap_holds_until_the_next_utc_day() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": results("https://a.test/1")}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY, "daily_cap": 2}])
    assert [search(sources).tier for _ in range(3)] == ["keyed", "keyed", None]
    assert len(api.calls) == 2
    assert asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]["state"] == "capped"
    clock.now = datetime(2026, 12, 7, 0, 0, 1, tzinfo=UTC).timestamp()
    assert search(sources).tier == "keyed"


def test_a_rejected_query_costs_that_search_alone() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (400, {"error": "query too long"})}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}])
    search(sources)
    search(sources)
    assert len(api.calls) == 2
    assert asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]["state"] == "usable"


def test_the_key_goes_in_its_header_and_never_into_a_warning() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (401, {"error": f"bad key {KEY}"}), "free.test": (500, b"")}
    answered = search(router(api, clock))
    assert api.calls[0].headers["x-api-key"] == KEY and "x-api-key" not in api.calls[1].headers
    assert KEY not in answered.skipped and "key was refused: {\"error\": \"bad key ***\"}" in answered.skipped
    assert KEY not in repr(SourcesSettings(search_sources=[{"name": "exa", "kind": "exa", "tiers": [
        {"name": "keyed", "url": "https://keyed.test", "key": KEY}]}]))


async def _hang(request: httpx.Request) -> httpx.Response:
    await asyncio.sleep(30)
    return httpx.Response(200)


class _Drip(httpx.AsyncByteStream):
    async def __aiter__(self):  # type: ignore[override]
        for _ in range(30):
            await asyncio.sleep(0.2)
            yield b" "


async def _drip(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, stream=_Drip())


@pytest.mark.parametrize("answer", [_hang, _drip], ids=["hang", "drip"])
def test_a_source_that_hangs_or_drips_is_bounded_and_backed_off(answer: Any) -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": answer}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}], timeout_s=0.5)
    for said in ("timed out (backed off if its next call fails too)", "backed off until"):
        started = time.monotonic()
        answered = search(sources, bound_s=5.0)
        assert time.monotonic() - started < 1.5
        assert said in answered.skipped and ("in time" in answered.skipped or "no answer" in answered.skipped)
    assert search(sources).skipped.startswith("keyed backed off")
    assert len(api.calls) == 2  # a timeout is forgiven once
    state = asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]
    assert datetime.fromisoformat(state["until"]).timestamp() == clock.now + 15 * 60


def test_a_timeout_after_an_answer_is_forgiven() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": _hang}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}], timeout_s=0.2)
    search(sources)
    api.answers["keyed.test"] = results("https://a.test/1")
    assert search(sources).tier == "keyed"
    api.answers["keyed.test"] = _hang
    assert "timed out" in search(sources).skipped
    assert asyncio.run(sources.report())["sources"]["exa"]["tiers"][0]["state"] == "usable"


@pytest.mark.parametrize(("body", "said"), [
    (b"<html>Service Unavailable</html>", "answered no JSON"),
    (b"[1, 2]", "not an object"),
    (json.dumps({"results": "none"}).encode(), "without a list of results"),
    (b"[" * 100_000 + b"]" * 100_000, "more than"),
    (json.dumps({"results": [{"url": "https://a.test/", "text": "y" * 1000}] * 500}).encode(), "more than"),
], ids=["html", "array", "not-a-list", "deep", "flood"])
def test_garbage_is_a_failure_not_results(body: bytes, said: str) -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (200, body)}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}])
    answered = search(sources)
    assert answered.hits == () and said in answered.skipped and "backed off" in answered.skipped


def test_results_are_bounded_and_unusable_ones_dropped() -> None:
    api, clock = Api(), Clock()
    items = [{"url": "not a url"}, {"url": 7}, "text", {"url": "https://a.test/" + "p" * 3000},
             *({"url": f"https://a.test/{i}", "title": ["no"], "text": "t" * 50_000} for i in range(40))]
    api.answers = {"keyed.test": (200, {"results": items})}
    sources = router(api, clock, tiers=[{"name": "keyed", "url": "https://keyed.test", "key": KEY}],
                     max_bytes=10_000_000)
    hits = search(sources).hits
    assert [h.url for h in hits] == [f"https://a.test/{i}" for i in range(10)]
    assert all(h.title == "" and len(h.text) == 20_000 for h in hits)


def test_the_metrics_count_calls_and_show_each_tier_state() -> None:
    api, clock = Api(), Clock()
    api.answers = {"keyed.test": (402, b""), "free.test": results("https://a.test/1")}
    sources = router(api, clock)
    calls = "wisp_agent_source_calls_total"
    with Moved(calls, outcome="credit", source="exa", tier="keyed") as credit, \
            Moved(calls, outcome="skipped", source="exa", tier="keyed") as skipped, \
            Moved(calls, outcome="ok", source="exa", tier="free") as ok:
        search(sources)
        search(sources)
        asyncio.run(sources.report())
    assert (credit.by, skipped.by, ok.by) == (1, 1, 2)
    state = "wisp_agent_source_tier_state"
    assert value(state, source="exa", tier="keyed", state="parked") == 1
    assert value(state, source="exa", tier="keyed", state="usable") == 0
    assert value(state, source="exa", tier="free", state="usable") == 1
    assert value("wisp_agent_source_tier_calls_today", source="exa", tier="free") == 2
