"""The crawl jobs on a real redis-server: the SQLite store's operations, each page claimed and recorded once
whoever visits it, a job's end once, keys that expire with the job, and Redis out of reach as a 503."""

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest
from redis.asyncio import Redis

from agent.core.crawl_options import CrawlOptions
from agent.errors import SharedStateUnavailable
from agent.state.jobs import CANCELLED, COMPLETED, FAILED, RUNNING, Counts, QueuedPage
from agent.state.jobs.redis import MAX_ATTEMPTS, RUNNING_SET, RedisJobStore
from offline_web.redis_server import RedisServer

OPTIONS = CrawlOptions(seeds=("https://docs.test/",), limit=10, include=("^/guide",), delay_s=0.5)
MAX_DURATION_S = 100.0


def page(n: int, depth: int = 1) -> tuple[str, str, int]:
    return (f"k{n}", f"https://docs.test/{n}", depth)


def scenario(redis_server: RedisServer, steps: Callable[[RedisJobStore, Redis, list], Awaitable[None]]) -> None:
    """Run `steps` on a fresh store over the real Redis; the list gets each (job, keys) the store queued."""
    async def run() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        store, queued = RedisJobStore(redis, MAX_DURATION_S), []

        async def enqueue(job_id: str, keys: list[str]) -> None:
            queued.append((job_id, keys))
        store.on_queued(enqueue)
        try:
            await store.create("j", OPTIONS, 60, "key-a")
            await steps(store, redis, queued)
        finally:
            await redis.aclose()
    asyncio.run(run())


def test_a_new_job_runs_with_its_options_and_expires_with_its_keys(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        job = await store.job("j")
        assert job.status == RUNNING and job.options == OPTIONS and job.owner == "key-a" and not job.seeded
        assert job.expires == pytest.approx(job.created + 60) and job.error is None
        await store.add_pages("j", [page(1)], 10)
        await store.claim("j", "k1")
        await store.done("j", "k1", {"markdown": "one"})
        purge = job.created + 60 + MAX_DURATION_S
        for key in ("wisp:crawl:j", "wisp:crawl:j:pages", "wisp:crawl:j:docs"):
            assert await redis.expiretime(key) == pytest.approx(purge, abs=2)
        assert await store.running() == ["j"] and await store.unfinished() == 1
        assert await store.unfinished("key-a") == 1 and await store.unfinished("key-b") == 0
        assert await store.job("nope") is None
    scenario(redis_server, steps)


def test_pages_are_queued_once_within_the_limit_and_their_visits_queued(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        assert await store.add_pages("j", [page(1), page(2), page(1)], 10) == 2
        assert await store.add_pages("j", [page(2), page(3)], 10) == 1
        assert queued == [("j", ["k1", "k2"]), ("j", ["k3"])]
        assert await store.add_pages("j", [page(n) for n in range(4, 20)], 5) == 2  # the limit bounds the total
        assert await store.counts("j") == Counts(5, 0) and await store.known("j") == 5
        assert sorted(await store.unvisited("j")) == ["k1", "k2", "k3", "k4", "k5"]
    scenario(redis_server, steps)


def test_a_page_is_recorded_once_whoever_visits_it(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.add_pages("j", [page(1, depth=2), page(2)], 10)
        assert await store.claim("j", "k1") == QueuedPage("k1", "https://docs.test/1", 2)
        assert await store.claim("j", "k1") == QueuedPage("k1", "https://docs.test/1", 2)  # handed over
        await store.done("j", "k1", {"markdown": "first"})
        await store.done("j", "k1", {"markdown": "second"})  # the slower visit finds it recorded
        assert await store.claim("j", "k1") is None
        assert await store.counts("j") == Counts(2, 1) and await store.queued("j") == 1
        _, counts, documents = await store.snapshot("j", 0, 10, 10_000)
        assert documents == [{"markdown": "first"}] and counts == Counts(2, 1)
        await store.claim("j", "k2")
        await store.failed("j", "k2", "timed out", "SCRAPE_TIMEOUT")
        await store.failed("j", "k2", "again", "SCRAPE_TIMEOUT")
        errors, blocked = await store.errors("j")
        assert [(e["id"], e["url"], e["error"], e["code"]) for e in errors] == [
            ("j:k2", "https://docs.test/2", "timed out", "SCRAPE_TIMEOUT")]
        assert blocked == [] and await store.counts("j") == Counts(1, 1)
    scenario(redis_server, steps)


def test_a_page_whose_visits_keep_dying_fails(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.add_pages("j", [page(1)], 10)
        for _ in range(MAX_ATTEMPTS):
            assert await store.claim("j", "k1") is not None
        assert await store.claim("j", "k1") is None
        errors, _ = await store.errors("j")
        assert errors[0]["code"] == "SCRAPE_FAILED" and "stopped 3 times" in errors[0]["error"]
        assert await store.queued("j") == 0
    scenario(redis_server, steps)


def test_a_job_ends_once_and_only_when_drained_and_seeded(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.add_pages("j", [page(1)], 10)
        await store.claim("j", "k1")
        await store.done("j", "k1", {})
        assert not await store.finish("j", COMPLETED, None, True)  # not seeded yet
        await store.mark_seeded("j")
        await store.add_pages("j", [page(2)], 10)
        assert not await store.finish("j", COMPLETED, None, True)  # a page is queued
        await store.claim("j", "k2")
        await store.done("j", "k2", {})
        assert await store.finish("j", COMPLETED, None, True)
        assert not await store.finish("j", CANCELLED)
        assert (await store.job("j")).status == COMPLETED and await redis.zcard(RUNNING_SET) == 0
    scenario(redis_server, steps)


def test_a_cancelled_job_records_no_more_pages(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.add_pages("j", [page(1), page(2)], 10)
        await store.claim("j", "k1")
        assert await store.finish("j", CANCELLED)
        await store.done("j", "k1", {"markdown": "late"})
        assert await store.claim("j", "k2") is None
        assert (await store.snapshot("j", 0, 10, 10_000))[2] == [] and await store.running() == []
    scenario(redis_server, steps)


def test_append_runs_a_completed_job_again_and_not_a_failed_one(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.mark_seeded("j")
        await store.finish("j", COMPLETED)
        assert await store.append("j", [page(1)], 10) == COMPLETED
        assert (await store.job("j")).status == RUNNING and queued == [("j", ["k1"])]
        assert await store.running() == ["j"]
        await store.finish("j", FAILED, "boom")
        assert await store.append("j", [page(2)], 10) == FAILED
        assert await store.append("nope", [page(2)], 10) is None
        assert await store.known("j") == 1
    scenario(redis_server, steps)


def test_indexing_counts_add_up(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.indexed("j", 2, 1, 7, None)
        await store.indexed("j", 0, 0, 0, "semantic-svc is down")
        job = await store.job("j")
        assert (job.indexed, job.unchanged, job.chunks, job.not_indexed, job.index_error) == (
            2, 1, 7, 1, "semantic-svc is down")
    scenario(redis_server, steps)


def test_documents_page_within_a_byte_budget(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        await store.add_pages("j", [page(n) for n in range(5)], 10)
        for n in range(5):
            await store.claim("j", f"k{n}")
            await store.done("j", f"k{n}", {"n": n, "text": "x" * 100})
        assert [d["n"] for d in await store.documents("j", 1, 3, 10_000)] == [1, 2, 3]
        assert [d["n"] for d in await store.documents("j", 0, 5, 250)] == [0, 1]
        assert [d["n"] for d in await store.documents("j", 4, 5, 1)] == [4]  # at least one
    scenario(redis_server, steps)


def test_redis_out_of_reach_is_a_503(redis_server: RedisServer) -> None:
    async def run() -> None:
        redis = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1)
        store = RedisJobStore(redis, MAX_DURATION_S)
        started = time.monotonic()
        with pytest.raises(SharedStateUnavailable) as refused:
            await store.run(store.job, "j")
        assert refused.value.status == 503 and time.monotonic() - started < 5
        await redis.aclose()
    asyncio.run(run())


def test_a_patient_store_waits_out_a_short_outage_to_record_a_page(redis_server: RedisServer) -> None:
    async def steps(store: RedisJobStore, redis: Redis, queued: list) -> None:
        patient = store.patient(20)
        await patient.add_pages("j", [page(1)], 10)
        await patient.claim("j", "k1")
        redis_server.kill()
        recording = asyncio.create_task(patient.run(patient.done, "j", "k1", {"markdown": "kept"}))
        await asyncio.sleep(1.5)
        with pytest.raises(SharedStateUnavailable):
            await store.run(store.job, "j")  # a route's store answers at once
        assert not recording.done()
        await asyncio.to_thread(redis_server.start)
        await recording
        assert (await store.snapshot("j", 0, 10, 10_000))[2] == [{"markdown": "kept"}]
    scenario(redis_server, steps)
