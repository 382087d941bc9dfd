"""semantic-svc's metrics, moved by a real model lane: batch sizes by key, dropped jobs by reason, queue depth by
priority, the models' speed by kind."""

import asyncio
import time
from typing import get_args

import pytest
from prometheus_client import REGISTRY
from wisp_obs.requests import RequestInfo

from semantic import metrics
from semantic.errors import Busy
from semantic.lane.batching import ModelLane
from semantic.lane.speed import SpeedMeter

from .lane.test_batching import Blocker, queued, recorded


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_request_is_counted_by_route_method_and_status() -> None:
    before = value("wisp_semantic_requests_total", route="/rerank", method="POST", status="503")
    timed = value("wisp_semantic_request_duration_seconds_count", route="/rerank")
    metrics.observe_request(RequestInfo("id", "POST", "/rerank", route="/rerank"), 503, 0.2)
    assert value("wisp_semantic_requests_total", route="/rerank", method="POST", status="503") == before + 1
    assert value("wisp_semantic_request_duration_seconds_count", route="/rerank") == timed + 1


def test_every_drop_reason_is_a_series_from_the_start() -> None:
    for reason in get_args(metrics.DropReason):
        assert REGISTRY.get_sample_value("wisp_semantic_dropped_jobs_total", {"reason": reason}) is not None


def test_merged_jobs_are_one_batch_of_their_texts() -> None:
    async def scenario() -> None:
        lane, blocker, calls = ModelLane(max_pending=8, max_batch=64), Blocker(), []
        first = await blocker.occupy(lane)
        jobs = [asyncio.create_task(lane.run(recorded(calls), [f"text {i}", f"more {i}"], "metrics-key"))
                for i in range(3)]
        crawl = asyncio.create_task(lane.run(recorded(calls), ["page"], "metrics-crawl", priority="background"))
        await queued(lane, 4)
        metrics.sample_lane(lane.stats())
        assert value("wisp_semantic_queue_jobs", priority="interactive") == 3
        assert value("wisp_semantic_queue_items", priority="interactive") == 6
        assert value("wisp_semantic_queue_jobs", priority="background") == 1
        blocker.release.set()
        await asyncio.gather(first, crawl, *jobs)
        metrics.sample_lane(lane.stats())
        assert value("wisp_semantic_queue_jobs", priority="interactive") == 0
        assert value("wisp_semantic_queue_jobs", priority="background") == 0
        await lane.close()

    batches = value("wisp_semantic_batch_items_count", key="metrics-key")
    texts = value("wisp_semantic_batch_items_sum", key="metrics-key")
    asyncio.run(scenario())
    assert value("wisp_semantic_batch_items_count", key="metrics-key") == batches + 1
    assert value("wisp_semantic_batch_items_sum", key="metrics-key") == texts + 6
    assert value("wisp_semantic_batch_jobs_bucket", key="metrics-key", le="4.0") >= 1
    assert value("wisp_semantic_batch_duration_seconds_count", key="metrics-key") >= 1


def test_a_full_queue_counts_its_refusals() -> None:
    async def scenario() -> None:
        lane, blocker = ModelLane(max_pending=1, max_batch=8), Blocker()
        first = await blocker.occupy(lane)
        waiting = asyncio.create_task(lane.run(recorded([]), ["a"], "k"))
        await queued(lane, 1)
        with pytest.raises(Busy):
            await lane.run(recorded([]), ["b"], "k")
        blocker.release.set()
        await asyncio.gather(first, waiting)
        await lane.close()

    refused = value("wisp_semantic_dropped_jobs_total", reason="refused")
    asyncio.run(scenario())
    assert value("wisp_semantic_dropped_jobs_total", reason="refused") == refused + 1


def test_a_job_whose_caller_gave_up_counts_as_skipped() -> None:
    async def scenario() -> None:
        lane, blocker = ModelLane(max_pending=8, max_batch=8), Blocker()
        first = await blocker.occupy(lane)
        abandoned = asyncio.create_task(lane.run(recorded([]), ["a"], "k"))
        await queued(lane, 1)
        abandoned.cancel()
        blocker.release.set()
        await first
        deadline = time.monotonic() + 5
        while lane.stats().skipped_jobs == 0:
            assert time.monotonic() < deadline, f"the abandoned job was not dropped within 5 s: {lane.stats()}"
            await asyncio.sleep(0.01)
        await lane.close()

    skipped = value("wisp_semantic_dropped_jobs_total", reason="skipped")
    asyncio.run(scenario())
    assert value("wisp_semantic_dropped_jobs_total", reason="skipped") == skipped + 1


def test_a_job_that_waited_too_long_counts_as_expired() -> None:
    now = [0.0]

    async def scenario() -> None:
        lane, blocker = ModelLane(max_pending=8, max_batch=8, max_wait_s=5, clock=lambda: now[0]), Blocker()
        first = await blocker.occupy(lane)
        late = asyncio.create_task(lane.run(recorded([]), ["a"], "k"))
        await queued(lane, 1)
        now[0] = 6.0
        blocker.release.set()
        await first
        with pytest.raises(Busy):
            await late
        await lane.close()

    expired = value("wisp_semantic_dropped_jobs_total", reason="expired")
    asyncio.run(scenario())
    assert value("wisp_semantic_dropped_jobs_total", reason="expired") == expired + 1


def test_the_speed_gauges_follow_the_meter() -> None:
    meter = SpeedMeter()
    meter.calibrate("rerank", ms=500, chars=25_000, texts=28)
    metrics.sample_speed(meter.speeds())
    assert value("wisp_semantic_model_ms_per_kchar", kind="rerank") == 20
    assert value("wisp_semantic_model_ms_per_text", kind="rerank") == pytest.approx(500 / 28)
    assert value("wisp_semantic_model_ms_per_text", kind="embed") == 0  # unmeasured
