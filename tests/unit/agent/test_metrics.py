"""agent-svc's metrics: the hooks move the right series, and real searches and fetches (against the in-process
SearXNG, the fetcher on httpx's mock transport) count their outcomes, degradations and engines."""

import asyncio
import time
from collections.abc import AsyncIterator
from typing import get_args

import httpx
import pytest
from prometheus_client import REGISTRY
from wisp_obs.requests import RequestInfo

from agent import metrics
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.core.timings import StageTimings
from agent.pages.fetch import Fetcher, FetchPolicy
from agent.pages.ssrf import Allowlist
from agent.search.service import Search
from agent.upstream.searxng import SearxngClient

from .fake_searxng import FakeSearxng, FakeSemantic


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


class Moved:
    """How much a series moved during the block."""

    def __init__(self, name: str, **labels: str) -> None:
        self.name, self.labels = name, labels

    def __enter__(self) -> "Moved":
        self.before = value(self.name, **self.labels)
        return self

    def __exit__(self, *exc: object) -> None:
        self.by = value(self.name, **self.labels) - self.before



def searched(query: SearchQuery, search: Search) -> SearchOutcome:
    return asyncio.run(search.run(search.prepared(query)))

def test_every_cause_and_fetch_outcome_is_a_series_from_the_start() -> None:
    for cause in get_args(metrics.Cause):
        assert REGISTRY.get_sample_value("wisp_agent_degradations_total", {"cause": cause}) is not None
    for outcome in get_args(metrics.FetchOutcome):
        assert REGISTRY.get_sample_value("wisp_agent_fetches_total", {"outcome": outcome}) is not None


def test_a_request_is_counted_by_route_method_mode_and_status() -> None:
    info = RequestInfo("id", "POST", "/v2/search", route="/v2/search", extra={"mode": "hybrid"})
    labels = {"route": "/v2/search", "method": "POST", "mode": "hybrid", "status": "200"}
    with Moved("wisp_agent_requests_total", **labels) as requests, \
         Moved("wisp_agent_request_duration_seconds_count", route="/v2/search", mode="hybrid") as timed, \
         Moved("wisp_agent_request_duration_seconds_bucket", route="/v2/search", mode="hybrid", le="0.5") as fast:
        metrics.observe_request(info, 200, 0.3)
    assert (requests.by, timed.by, fast.by) == (1, 1, 1)


def test_a_request_without_a_mode_has_an_empty_mode() -> None:
    with Moved("wisp_agent_requests_total", route="/healthz", method="GET", mode="", status="200") as requests:
        metrics.observe_request(RequestInfo("id", "GET", "/healthz", route="/healthz"), 200, 0.001)
    assert requests.by == 1


def test_each_stage_of_the_timings_is_observed_once() -> None:
    timings = StageTimings()
    timings.add("searxng", 120.0)
    timings.add("fetch", 40.0)
    timings.add("fetch", 60.0)  # a stage run twice is one observation of its sum, as in timings_ms
    with Moved("wisp_agent_stage_duration_seconds_count", stage="fetch", mode="m1") as fetch, \
         Moved("wisp_agent_stage_duration_seconds_sum", stage="fetch", mode="m1") as fetch_sum, \
         Moved("wisp_agent_stage_duration_seconds_count", stage="total", mode="m1") as total:
        metrics.observe_stages("m1", timings)
    assert (fetch.by, total.by) == (1, 1)
    assert fetch_sum.by == pytest.approx(0.1)


def test_a_keyword_search_times_its_stages_and_counts_unresponsive_engines() -> None:
    fake = FakeSearxng(unresponsive=[["slowengine", "timeout"]])
    with Moved("wisp_agent_stage_duration_seconds_count", stage="searxng", mode="keyword") as searxng, \
         Moved("wisp_agent_searxng_engine_unresponsive_total", engine="slowengine", reason="timeout") as failed, \
         Moved("wisp_agent_degradations_total", cause="engines_unresponsive") as degraded:
        searched(SearchQuery(query="q", limit=3), fake.search())
    assert (searxng.by, failed.by, degraded.by) == (1, 1, 1)


def test_a_ranked_search_without_semantic_svc_counts_its_fallback() -> None:
    with Moved("wisp_agent_degradations_total", cause="searxng_order") as degraded:
        outcome = searched(SearchQuery(query="q", limit=3, retrieval_mode="hybrid"), FakeSearxng().search())
    assert degraded.by == 1 and "results keep SearXNG's order" in outcome.warnings[-1]


def test_pages_that_fail_count_one_snippet_fallback_per_search() -> None:
    pages = {"https://general.test/0": "<html><body><p>q q q</p></body></html>"}  # the others answer 404
    with Moved("wisp_agent_degradations_total", cause="snippets") as degraded:
        searched(SearchQuery(query="q", limit=3, retrieval_mode="hybrid"),
                 FakeSearxng().search(FakeSemantic(), pages))
    assert degraded.by == 1


def test_the_engines_that_gave_results_are_counted_once_per_answer() -> None:
    def searxng(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"results": [
            {"url": "https://a.test/", "title": "a", "engines": ["engine-a", "engine-b"]},
            {"url": "https://b.test/", "title": "b", "engines": ["engine-a"]}],
            "unresponsive_engines": [["engine-c", "CAPTCHA"]]})

    client = SearxngClient("http://searx.test", httpx.AsyncClient(transport=httpx.MockTransport(searxng)), 5.0)
    with Moved("wisp_agent_searxng_engine_answers_total", engine="engine-a") as a, \
         Moved("wisp_agent_searxng_engine_answers_total", engine="engine-b") as b, \
         Moved("wisp_agent_searxng_engine_unresponsive_total", engine="engine-c", reason="CAPTCHA") as c:
        asyncio.run(client.search({"q": "x"}))
    assert (a.by, b.by, c.by) == (1, 1, 1)
    assert client.health.report()["answering"] == ["engine-a", "engine-b"]


class Streamed(httpx.AsyncByteStream):
    """A body that arrives as a stream, as over a socket (a Response built from bytes is already read)."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._body


def _web(request: httpx.Request) -> httpx.Response:
    match request.url.path:
        case "/page":
            return httpx.Response(200, stream=Streamed(b"<p>hello</p>"), headers={"content-type": "text/html"})
        case "/missing":
            return httpx.Response(404, stream=Streamed(b"gone"), headers={"content-type": "text/html"})
        case "/image":
            return httpx.Response(200, content=b"\x89PNG", headers={"content-type": "image/png"})
        case "/loop":
            return httpx.Response(302, headers={"location": "/loop"})
        case "/big.pdf":
            return httpx.Response(200, stream=Streamed(b"%PDF" + b"x" * 20_000),
                                  headers={"content-type": "application/pdf"})
        case "/slow":
            raise httpx.ReadTimeout("slow", request=request)
        case "/reset":
            raise httpx.RemoteProtocolError("peer closed the connection", request=request)
        case _:
            raise httpx.ConnectError("refused", request=request)


@pytest.mark.parametrize(("url", "outcome"), [
    ("http://127.0.0.1/page", "ok"), ("http://127.0.0.1/missing", "http_error"),
    ("http://127.0.0.1/image", "unsupported_type"), ("http://127.0.0.1/loop", "too_many_redirects"),
    ("http://127.0.0.1/big.pdf", "too_large"), ("http://127.0.0.1/slow", "timeout"),
    ("http://127.0.0.1/refused", "connect_error"), ("http://10.0.0.1/page", "blocked"),
    ("http://127.0.0.1/reset", "error"),
])
def test_each_fetch_counts_its_outcome(url: str, outcome: str) -> None:
    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(_web)),
                      FetchPolicy(Allowlist.parse("127.0.0.1"), 10_000, 3, "test"))
    with Moved("wisp_agent_fetches_total", outcome=outcome) as counted:
        fetched = asyncio.run(fetcher.fetch_before(url, time.monotonic() + 5))
    assert counted.by == 1 and fetched.outcome == outcome and fetched.ok == (outcome == "ok")


def test_a_fetch_past_its_deadline_counts_as_a_timeout() -> None:
    async def hanging(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200)

    fetcher = Fetcher(httpx.AsyncClient(transport=httpx.MockTransport(hanging)),
                      FetchPolicy(Allowlist.parse("127.0.0.1"), 10_000, 3, "test"))
    with Moved("wisp_agent_fetches_total", outcome="timeout") as counted:
        fetched = asyncio.run(fetcher.fetch_before("http://127.0.0.1/", time.monotonic() + 0.05))
    assert counted.by == 1 and str(fetched.error) == "still loading at the deadline"
