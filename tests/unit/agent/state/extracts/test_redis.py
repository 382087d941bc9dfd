"""The replicas' extract jobs on a real redis-server: started on one, run by whichever takes the task, polled on
any; a result is recorded once; the bounds hold over all replicas; Redis out of reach is a 503."""

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from redis.asyncio import Redis

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.errors import JobNotFound, SharedStateUnavailable, TooManyExtracts
from agent.state.background import COMPLETED, FAILED, PROCESSING
from agent.state.background.redis import RedisJobs
from agent.state.extracts.redis import redis_extracts
from agent.state.tasks import TaskQueue
from offline_web.redis_server import RedisServer

JOB = ExtractJob(("https://a.test/",), (), "p", {"type": "object"}, warnings=("w",))


def replicas(redis_server: RedisServer, run: Callable[[ExtractJob], Awaitable[ExtractResult]],
             steps: Callable[[RedisJobs, RedisJobs], Awaitable[None]], max_jobs: int = 10,
             max_per_owner: int = 10, workers: bool = True) -> None:
    """Two replicas' extract jobs on one Redis; with `workers`, the first one's queue worker runs the tasks."""
    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        tasks = [TaskQueue(redis_server.url, lease_s=2, sweep_s=1) for _ in range(2)]
        first, second = (redis_extracts(run, redis, queue, max_jobs, 2, 60, max_per_owner) for queue in tasks)
        if workers:
            await tasks[0].start(concurrency=2)
        try:
            await steps(first, second)
        finally:
            for queue in tasks:
                await queue.close()
                await queue.queue.disconnect()
            await redis.aclose()
    asyncio.run(main())


async def settled(jobs: RedisJobs, job_id: str, owner: str | None) -> str:
    for _ in range(100):
        if (status := (await jobs.get(job_id, owner)).status) != PROCESSING:
            return status
        await asyncio.sleep(0.05)
    return PROCESSING


def test_a_job_started_on_one_replica_is_done_and_read_on_another(redis_server: RedisServer) -> None:
    runs: list[ExtractJob] = []

    async def run(job_id: str, job: ExtractJob, cancelled: object) -> ExtractResult:
        runs.append(job)
        return ExtractResult({"ok": True}, {"ok": ["https://a.test/"]}, ("merged",))

    async def steps(first: RedisJobs, second: RedisJobs) -> None:
        job_id = await second.start(JOB, "key-a")
        assert await settled(second, job_id, "key-a") == COMPLETED
        record = await first.get(job_id, "key-a")
        assert record.job == JOB and record.owner == "key-a"
        assert record.result == ExtractResult({"ok": True}, {"ok": ["https://a.test/"]}, ("merged",))
        with pytest.raises(JobNotFound):
            await first.get(job_id, "key-b")
        with pytest.raises(JobNotFound):
            await first.get("nope", "key-a")
        await first._job_task(job_id)  # a task handed over after the job finished does nothing
        assert len(runs) == 1
    replicas(redis_server, run, steps)


def test_a_bug_fails_the_job_with_a_pointer_to_the_log(redis_server: RedisServer) -> None:
    async def run(job_id: str, job: ExtractJob, cancelled: object) -> ExtractResult:
        raise KeyError("boom")

    async def steps(first: RedisJobs, second: RedisJobs) -> None:
        job_id = await first.start(JOB, None)
        assert await settled(first, job_id, None) == FAILED
        assert "KeyError" in (await second.get(job_id, None)).result.error
    replicas(redis_server, run, steps)


def test_the_bounds_hold_over_both_replicas(redis_server: RedisServer) -> None:
    async def run(job_id: str, job: ExtractJob, cancelled: object) -> ExtractResult:
        return ExtractResult({})

    async def steps(first: RedisJobs, second: RedisJobs) -> None:
        await first.start(JOB, "key-a")
        with pytest.raises(TooManyExtracts, match="EXTRACT_MAX_JOBS_PER_KEY"):
            await second.start(JOB, "key-a")
        await second.start(JOB, "key-b")
        with pytest.raises(TooManyExtracts, match="EXTRACT_MAX_JOBS"):
            await second.start(JOB, "key-c")
    replicas(redis_server, run, steps, max_jobs=2, max_per_owner=1, workers=False)


def test_redis_out_of_reach_is_a_503(redis_server: RedisServer) -> None:
    async def main() -> None:
        redis = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
        tasks = TaskQueue("redis://127.0.0.1:1/0")
        jobs = redis_extracts(lambda job_id, job, cancelled: None, redis, tasks, 10, 2, 60, 10)
        with pytest.raises(SharedStateUnavailable):
            await jobs.start(JOB, None)
        with pytest.raises(SharedStateUnavailable):
            await jobs.get("j", None)
        await redis.aclose()
    asyncio.run(main())


def test_a_lost_task_is_queued_again_and_one_that_keeps_killing_replicas_fails(redis_server: RedisServer) -> None:
    runs: list[ExtractJob] = []

    async def run(job_id: str, job: ExtractJob, cancelled: object) -> ExtractResult:
        runs.append(job)
        return ExtractResult({})

    async def steps(first: RedisJobs, second: RedisJobs) -> None:
        job_id = await first.start(JOB, None)
        assert await first.repair() == 0  # its task is queued
        async with Redis.from_url(redis_server.url) as redis:
            for key in await redis.keys("saq:*"):
                await redis.delete(key)
        assert await first.repair() == 1 and await first.repair() == 0
        for _ in range(3):  # three replicas died running it
            await first._redis.hincrby(f"wisp:extract:{job_id}", "attempts", 1)
        await second._job_task(job_id)
        record = await first.get(job_id, None)
        assert record.status == FAILED and "stopped 3 times" in record.result.error and runs == []
    replicas(redis_server, run, steps, workers=False)
