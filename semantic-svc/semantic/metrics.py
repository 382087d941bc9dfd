"""semantic-svc's Prometheus metrics, served at GET /metrics: requests, the model lane's queue and batches, and
the models' measured speed.

The queue's depth and the speed are read when /metrics is scraped, so that waiting jobs cost nothing more.
"""

from __future__ import annotations

from typing import get_args

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics
from wisp_obs.requests import RequestInfo

from semantic.kinds import BatchRecord, DropReason, LaneStats, Speed, SpeedKind

disable_created_metrics()  # the *_created series would double every scrape, and no panel reads them

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_SIZE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)

REQUESTS = Counter("wisp_semantic_requests", "HTTP requests by route template, method and status",
                   ["route", "method", "status"])
REQUEST_SECONDS = Histogram("wisp_semantic_request_duration_seconds", "HTTP request duration by route", ["route"],
                            buckets=_LATENCY_BUCKETS)
QUEUE_JOBS = Gauge("wisp_semantic_queue_jobs", "Model jobs waiting in the lane (requests' slices of texts), by "
                   "priority", ["priority"])
QUEUE_ITEMS = Gauge("wisp_semantic_queue_items", "Texts (or query-passage pairs) waiting in the lane, by priority",
                    ["priority"])
DROPPED_JOBS = Counter("wisp_semantic_dropped_jobs", "Model jobs that got no model time, by reason", ["reason"])
BATCH_ITEMS = Histogram("wisp_semantic_batch_items", "Texts (or pairs) in one model call, by batch key", ["key"],
                        buckets=_SIZE_BUCKETS)
BATCH_JOBS = Histogram("wisp_semantic_batch_jobs", "Requests' jobs merged into one model call, by batch key",
                       ["key"], buckets=_SIZE_BUCKETS)
BATCH_SECONDS = Histogram("wisp_semantic_batch_duration_seconds", "Duration of one model call, by batch key",
                          ["key"], buckets=_LATENCY_BUCKETS)
MS_PER_KCHAR = Gauge("wisp_semantic_model_ms_per_kchar", "Model milliseconds per 1,000 characters (EWMA), by kind "
                     "of call", ["kind"])
MS_PER_TEXT = Gauge("wisp_semantic_model_ms_per_text", "Model milliseconds per text or pair (EWMA), by kind of call",
                    ["kind"])

for _reason in get_args(DropReason):
    DROPPED_JOBS.labels(_reason)


def observe_request(info: RequestInfo, status: int, seconds: float) -> None:
    """The middleware's hook: one request ended."""
    REQUESTS.labels(info.route, info.method, str(status)).inc()
    REQUEST_SECONDS.labels(info.route).observe(seconds)


def observe_batch(record: BatchRecord) -> None:
    BATCH_ITEMS.labels(record.key).observe(record.items)
    BATCH_JOBS.labels(record.key).observe(record.jobs)
    BATCH_SECONDS.labels(record.key).observe(record.ms / 1000)


def dropped(reason: DropReason) -> None:
    DROPPED_JOBS.labels(reason).inc()


def sample_lane(stats: LaneStats) -> None:
    """Set the queue's gauges from the lane, just before a scrape."""
    for priority, depth in stats.waiting.items():
        QUEUE_JOBS.labels(priority).set(depth.jobs)
        QUEUE_ITEMS.labels(priority).set(depth.items)


def sample_speed(speeds: dict[SpeedKind, Speed]) -> None:
    """Set the speed gauges from the meter, just before a scrape."""
    for kind, speed in speeds.items():
        MS_PER_KCHAR.labels(kind).set(speed.ms_per_kchar)
        MS_PER_TEXT.labels(kind).set(speed.ms_per_text)
