"""Research jobs on the replicas' Redis (a real redis-server): a job's record and result survive the trip through
Redis whole; a job started on one replica runs on another's worker and is read on the first; a cancel sent to one
replica stops the job where another runs it, and the job ends with what it had."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict

from redis.asyncio import Redis

from agent.core.research import CANCELLED, ResearchJob, ResearchResult, ResearchSource, Step
from agent.core.webhook import Webhook
from agent.research.jobs import PLACE, RESEARCH
from agent.state.background import FAILED, PROCESSING
from agent.state.background.redis import RedisJobs
from agent.state.tasks import TaskQueue
from offline_web.redis_server import RedisServer

JOB = ResearchJob("who wrote falcon", urls=("https://a.test/",), schema={"type": "object"}, effort="low",
                  webhook=Webhook("https://hooks.test/", {"X-A": "b"}, {"run": "1"}, ("completed",)),
                  thread_id="t-1", turn=2, history=(("who made zephyr", "Ada [1]"),))
FOUND = ResearchResult("Evidence [1]", (ResearchSource("https://a.test/", "A", "snippet"),), CANCELLED,
                       claims=({"text": "x", "citations": [1], "supported": True, "score": 0.9, "reason": None},),
                       credits_used=2, warnings=("w",),
                       steps=(Step("search", "q → 1 results", 0.5, "q", ("https://a.test/",)),))


def test_a_job_and_its_result_come_back_from_redis_whole() -> None:
    codec = PLACE.codec
    assert codec.job_of(json.loads(json.dumps(asdict(JOB)))) == JOB
    assert codec.result_of(json.loads(json.dumps(asdict(FOUND)))) == FOUND


def test_a_cancel_sent_to_one_replica_stops_the_job_another_runs(redis_server: RedisServer) -> None:
    ran: list[ResearchJob] = []

    async def run(job_id: str, job: ResearchJob, cancelled) -> ResearchResult:
        ran.append(job)
        while not cancelled():  # a job checks between its steps
            await asyncio.sleep(0.05)
        return FOUND

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        queues = [TaskQueue(redis_server.url, lease_s=2, sweep_s=1) for _ in range(2)]
        # each replica's store registers its task on its queue; the second's runs what the first starts
        first, _ = (RedisJobs(RESEARCH, PLACE, run, redis, queue, 10, 1, 60, 10) for queue in queues)
        await queues[1].start(concurrency=1)  # the second replica alone runs tasks
        try:
            job_id = await first.start(JOB, "key-a")
            for _ in range(200):
                if ran:
                    break
                await asyncio.sleep(0.05)
            assert ran == [JOB] and (await first.get(job_id, "key-a")).status == PROCESSING
            assert (await first.cancel(job_id, "key-a")).cancelled
            for _ in range(200):
                record = await first.get(job_id, "key-a")
                if record.status != PROCESSING:
                    break
                await asyncio.sleep(0.05)
            assert record.status == FAILED and record.result == FOUND and record.created > 0
        finally:
            for queue in queues:
                await queue.close()
                await queue.queue.disconnect()
            await redis.aclose()
    asyncio.run(main())


def test_a_threads_jobs_are_found_on_redis_by_any_replica_for_their_owner_alone(redis_server: RedisServer) -> None:
    async def run(job_id: str, job: ResearchJob, cancelled) -> ResearchResult:
        return FOUND

    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        queue = TaskQueue(redis_server.url, lease_s=2, sweep_s=1)
        jobs = RedisJobs(RESEARCH, PLACE, run, redis, queue, 10, 1, 60, 10)
        try:
            first = await jobs.start(JOB, "key-a")
            second = await jobs.start(JOB, "key-a")
            await jobs.start(JOB, "key-b")
            await jobs.start(ResearchJob("another thread", thread_id="t-2"), "key-a")
            assert [r.id for r in await jobs.related("t-1", "key-a")] == [first, second]
            assert await jobs.related("t-9", "key-a") == []
        finally:
            await queue.queue.disconnect()
            await redis.aclose()
    asyncio.run(main())
