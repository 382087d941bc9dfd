"""agent-svc's Prometheus metrics, served at GET /metrics, and the calls that move them.

Every label takes few values: routes are templates, modes and search stages come from registries, causes and
fetch outcomes from the Literals below, engines from SearXNG's settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from prometheus_client import Counter, Histogram, disable_created_metrics
from wisp_obs.requests import RequestInfo, current

from agent.core.pages import FetchOutcome
from agent.core.timings import StageTimings

# where a search falls back instead of failing, each named at its site (the response's `warning` says more)
Cause = Literal[
    "searxng_order",  # nothing could be scored: SearXNG's order
    "snippet_scores",  # page content could not be scored: ranked by the first pass's snippet scores
    "snippets",  # pages that failed to load or extract: their SearXNG snippets stood in
    "partial_scores",  # the deadline came before every text was scored: ranked with those that were
    "keyword_form",  # the keyword form of a question failed: searched as written
    "source_failed",  # one source's SearXNG request failed: its bucket is empty
    "searxng_page",  # a later SearXNG page failed: fewer results
    "engines_unresponsive",  # SearXNG engines did not answer: results may be incomplete
    "engine_catalog",  # SearXNG's engine list unreadable: engines and categories not checked
    "index_unavailable",  # the vector index could not answer: SearXNG's results alone
    "searxng_unavailable",  # SearXNG failed: the vector index's results alone
    "llm_unavailable",  # rich: the LLM failed; sources without an answer
    "llm_echo",  # rich: the LLM wrote back its prompt
    "llm_citations",  # rich: the LLM cited only sources that do not exist
    "claims_unchecked",  # rich: claims not checked, none marked supported
    "output_schema",  # rich: no JSON that validates
    "page_formats",  # summary, question or json formats of pages that failed
    "no_content",  # scrapeOptions: pages that failed to load or extract; their Documents carry metadata.error
]

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

for _cause in get_args(Cause):  # every series exists from the start, so rate() sees the first one
    DEGRADATIONS.labels(_cause)
for _outcome in get_args(FetchOutcome):
    FETCHES.labels(_outcome)


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


def degraded(cause: Cause) -> None:
    DEGRADATIONS.labels(cause).inc()


def searxng_answered(answering: Iterable[str], unresponsive: Iterable[tuple[str, str]]) -> None:
    for engine in answering:
        ENGINE_ANSWERS.labels(engine).inc()
    for engine, reason in unresponsive:
        ENGINE_FAILURES.labels(engine, reason[:80]).inc()


def searxng_retried(status: int) -> None:
    SEARXNG_RETRIES.labels(str(status)).inc()
