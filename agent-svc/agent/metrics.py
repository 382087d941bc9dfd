"""agent-svc's Prometheus metrics, served at GET /metrics, and the calls that move them.

Every label takes few values: routes are templates, modes and search stages come from registries, causes and
fetch outcomes from the Literals below, engines from SearXNG's settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics
from wisp_obs.requests import RequestInfo, current

from agent.core.outcome import Cause
from agent.core.pages import FetchOutcome
from agent.core.timings import StageTimings

CacheLookup = Literal["hit", "miss", "expired", "unreadable", "unavailable", "refused"]
SharedLimit = Literal["per_minute", "costly"]

# where a search falls back instead of failing, each named at its site (the response's `warning` says more)

disable_created_metrics()  # the *_created series would double every scrape, and no panel reads them

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 8.0, 15.0, 30.0, 60.0)

REQUESTS = Counter("wisp_agent_requests", "HTTP requests by route template, method, retrieval mode and status",
                   ["route", "method", "mode", "status"])
REQUEST_SECONDS = Histogram("wisp_agent_request_duration_seconds", "HTTP request duration by route and mode",
                            ["route", "mode"], buckets=_LATENCY_BUCKETS)
STAGE_SECONDS = Histogram("wisp_agent_stage_duration_seconds",
                          "Duration of each search stage (as in timings_ms), observed once per request",
                          ["stage", "mode"], buckets=_LATENCY_BUCKETS)
FETCHES = Counter("wisp_agent_fetches", "Page fetches by outcome", ["outcome"])
DEGRADATIONS = Counter("wisp_agent_degradations", "Fallbacks a search took instead of failing, by cause", ["cause"])
ENGINE_ANSWERS = Counter("wisp_agent_searxng_engine_answers",
                         "SearXNG answers in which the engine gave at least one result", ["engine"])
ENGINE_FAILURES = Counter("wisp_agent_searxng_engine_unresponsive",
                          "SearXNG answers that reported the engine unresponsive, by engine and reason",
                          ["engine", "reason"])
SEARXNG_RETRIES = Counter("wisp_agent_searxng_retries",
                          "Searches sent to SearXNG a second time after it answered a 5xx, by that status", ["status"])
QUEUE_TASKS_RUNNING = Gauge("wisp_agent_queue_tasks_running", "Tasks of the shared queue (REDIS_URL) this replica "
                            "runs now, by task", ["task"])
QUEUE_TASKS_HANDED_OVER = Counter("wisp_agent_queue_tasks_handed_over", "Tasks of the shared queue whose lease "
                                  "lapsed (their replica stopped), found by this replica's sweep")
USAGE_CREDITS_LOST = Counter("wisp_agent_usage_credits_lost", "Credits not counted in Redis (REDIS_URL): it failed, "
                             "or too many counts were waiting for it")
PAGE_CACHE_LOOKUPS = Counter("wisp_agent_page_cache_lookups",
                             "Page cache lookups of fetches with a maxAge, by result", ["result"])
PAGE_CACHE_STORES = Counter("wisp_agent_page_cache_stores", "Fetched pages written to the page cache")
PAGE_CACHE_EVICTIONS = Counter("wisp_agent_page_cache_evictions",
                               "Page cache entries dropped to stay within PAGE_CACHE_MAX_BYTES")
PAGE_CACHE_SKIPPED = Counter("wisp_agent_page_cache_skipped", "Fetched pages not kept because the page cache's "
                             "writes were behind")
PAGE_CACHE_BYTES = Gauge("wisp_agent_page_cache_bytes", "Compressed bytes the page cache holds, as this process "
                         "last counted them")
BrowserRequest = Literal["allowed", "blocked", "failed", "skipped"]
BROWSER_REQUESTS = Counter("wisp_agent_browser_requests", "Connections the browser opened through the SSRF guard "
                           "(allowed, blocked, failed to connect) and requests it skipped (media, fonts)", ["outcome"])
BROWSER_RENDERS = Counter("wisp_agent_browser_renders", "Pages rendered in the browser, by outcome", ["outcome"])
BROWSER_RENDER_SECONDS = Histogram("wisp_agent_browser_render_seconds", "Time to render a page (waiting for a "
                                   "slot, loading, waitFor and actions)", buckets=_LATENCY_BUCKETS)
BROWSER_PAGES = Gauge("wisp_agent_browser_pages", "Pages open in the browser now")
BROWSER_STARTS = Counter("wisp_agent_browser_starts", "Chromium started: the first page, after idling, a crash, or "
                         "growing past BROWSER_MAX_RSS_MB")
SourceCall = Literal["ok", "skipped", "credit", "rate", "server", "garbage", "refused", "slow", "rejected"]
TierStatus = Literal["usable", "parked", "backoff", "capped"]
SOURCE_CALLS = Counter("wisp_agent_source_calls", "Calls of the extra candidate sources (SEARCH_SOURCES) by source, "
                       "tier and outcome: ok, skipped (held or capped: not called), or the failure", ["source", "tier",
                                                                                                       "outcome"])
SOURCE_TIER_STATE = Gauge("wisp_agent_source_tier_state", "Each extra source's tier: 1 for its state now (usable, "
                          "parked after a 402, backoff after a 429 or 5xx, capped for the day), 0 for the others",
                          ["source", "tier", "state"])
SOURCE_TIER_CALLS_TODAY = Gauge("wisp_agent_source_tier_calls_today", "Calls of each extra source's tier this UTC "
                                "day (with REDIS_URL: of every replica)", ["source", "tier"])
LIMITS_FALLBACKS = Counter("wisp_agent_limits_fallbacks", "Requests whose limit was counted by this process alone "
                           "because the Redis of REDIS_URL did not answer, by limit", ["limit"])

for _cause in get_args(Cause):  # every series exists from the start, so rate() sees the first one
    DEGRADATIONS.labels(_cause)
for _outcome in get_args(FetchOutcome):
    FETCHES.labels(_outcome)
for _request in get_args(BrowserRequest):
    BROWSER_REQUESTS.labels(_request)
for _result in get_args(CacheLookup):
    PAGE_CACHE_LOOKUPS.labels(_result)
for _limit in get_args(SharedLimit):
    LIMITS_FALLBACKS.labels(_limit)


def observe_request(info: RequestInfo, status: int, seconds: float) -> None:
    """The middleware's hook: one request ended."""
    mode = info.extra.get("mode", "")
    REQUESTS.labels(info.route, info.method, mode, str(status)).inc()
    REQUEST_SECONDS.labels(info.route, mode).observe(seconds)


def note_mode(mode: str) -> None:
    """Label the current request with its retrieval mode (a name from the registry, once it is checked)."""
    if info := current():
        info.extra["mode"] = mode


def observe_stages(mode: str, timings: StageTimings) -> None:
    for stage, ms in timings.as_dict().items():
        STAGE_SECONDS.labels(stage, mode).observe(ms / 1000)


def fetched(outcome: FetchOutcome) -> None:
    FETCHES.labels(outcome).inc()


def browser_request(outcome: BrowserRequest) -> None:
    BROWSER_REQUESTS.labels(outcome).inc()


def rendered(outcome: FetchOutcome, seconds: float) -> None:
    BROWSER_RENDERS.labels(outcome).inc()
    BROWSER_RENDER_SECONDS.observe(seconds)


def page_cache_looked_up(result: CacheLookup) -> None:
    PAGE_CACHE_LOOKUPS.labels(result).inc()


def page_cache_stored(evicted: int, held_bytes: int) -> None:
    PAGE_CACHE_STORES.inc()
    PAGE_CACHE_EVICTIONS.inc(evicted)
    PAGE_CACHE_BYTES.set(held_bytes)


def page_cache_skipped() -> None:
    PAGE_CACHE_SKIPPED.inc()


def page_cache_held(held_bytes: int) -> None:
    PAGE_CACHE_BYTES.set(held_bytes)


def degraded(causes: Iterable[Cause]) -> None:
    """Count a request's degradations (its outcome's), once, when it ends."""
    for cause in causes:
        DEGRADATIONS.labels(cause).inc()


def searxng_answered(answering: Iterable[str], unresponsive: Iterable[tuple[str, str]]) -> None:
    for engine in answering:
        ENGINE_ANSWERS.labels(engine).inc()
    for engine, reason in unresponsive:
        ENGINE_FAILURES.labels(engine, reason[:80]).inc()


def searxng_retried(status: int) -> None:
    SEARXNG_RETRIES.labels(str(status)).inc()


def limits_fell_back(limit: SharedLimit) -> None:
    LIMITS_FALLBACKS.labels(limit).inc()


def source_called(source: str, tier: str, outcome: SourceCall) -> None:
    SOURCE_CALLS.labels(source, tier, outcome).inc()


def source_tier_is(source: str, tier: str, status: TierStatus, calls_today: int) -> None:
    for state in get_args(TierStatus):
        SOURCE_TIER_STATE.labels(source, tier, state).set(1 if state == status else 0)
    SOURCE_TIER_CALLS_TODAY.labels(source, tier).set(calls_today)
