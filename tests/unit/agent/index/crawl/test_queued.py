"""Crawls on the shared queue, with a real redis-server: the visits of pages queued are queued with them, what
was lost is queued again by a repair (once), and a bug in a step fails the job where Redis out of reach does
not."""

import asyncio
from collections.abc import Awaitable, Callable
from types import SimpleNamespace

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from agent.core.crawl_options import CrawlOptions
from agent.index.crawl.crawler import CrawlTools
from agent.index.crawl.queued import QueuedRunner
from agent.index.crawl.settings import CrawlSettings
from agent.state.jobs import COMPLETED, FAILED, RUNNING
from agent.state.jobs.redis import RedisJobStore
from agent.state.shared import Shared
from agent.state.tasks import TaskQueue
from offline_web.redis_server import RedisServer

OPTIONS = CrawlOptions(seeds=("https://docs.test/",), limit=10)


def runner_on(redis_server: RedisServer, steps: Callable[[QueuedRunner, Redis], Awaitable[None]]) -> None:
    async def main() -> None:
        redis = Redis.from_url(redis_server.url)
        await redis.flushdb()
        tasks = TaskQueue(redis_server.url)
        store = RedisJobStore(redis, 100)
        tools = CrawlTools(CrawlSettings(), None, SimpleNamespace(size=2), None, None)  # no page is visited here
        try:
            await steps(QueuedRunner(tools, store, Shared(redis, tasks)), redis)
        finally:
            await tasks.queue.disconnect()
            await redis.aclose()
    asyncio.run(main())


async def queued_tasks(redis: Redis) -> list[str]:
    return sorted(key.decode().split(":", 3)[-1] for key in await redis.lrange("saq:wisp:queued", 0, -1))


def test_lost_tasks_are_queued_again_once(redis_server: RedisServer) -> None:
    async def steps(runner: QueuedRunner, redis: Redis) -> None:
        store = runner.store
        await store.create("fresh", OPTIONS, 60)
        await store.create("seeded", OPTIONS, 60)
        await store.mark_seeded("seeded")
        await store.add_pages("seeded", [("k1", "https://docs.test/1", 1), ("k2", "https://docs.test/2", 1)], 10)
        assert len(await queued_tasks(redis)) == 2  # queued with their pages
        await store.claim("seeded", "k2")
        await store.done("seeded", "k2", {})
        for key in await redis.keys("saq:*"):  # a Redis restored from a file older than the tasks
            await redis.delete(key)
        assert await runner.repair() == 2  # the seeding of one, the unvisited page of the other
        assert await queued_tasks(redis) == ["crawl.seed:fresh", "crawl.visit:seeded:k1"]
        assert await runner.repair() == 0
    runner_on(redis_server, steps)


def test_a_bug_fails_the_job_and_redis_out_of_reach_does_not(redis_server: RedisServer) -> None:
    async def steps(runner: QueuedRunner, redis: Redis) -> None:
        await runner.store.create("j", OPTIONS, 60)

        async def bug(crawl: object) -> None:
            raise ValueError("a bug")

        async def outage(crawl: object) -> None:
            raise RedisConnectionError("gone")

        with pytest.raises(RedisConnectionError):
            await runner._with("j", outage)  # the queue hands the task over once Redis is back
        assert (await runner.store.job("j")).status == RUNNING
        await runner._with("j", bug)
        job = await runner.store.job("j")
        assert job.status == FAILED and job.error == "ValueError: a bug"
    runner_on(redis_server, steps)


def test_a_repair_ends_a_job_left_running_with_nothing_to_visit(redis_server: RedisServer) -> None:
    async def steps(runner: QueuedRunner, redis: Redis) -> None:
        store = runner.store
        await store.create("j", OPTIONS, 60)
        await store.mark_seeded("j")
        await store.add_pages("j", [("k1", "https://docs.test/1", 0)], 10)
        await store.claim("j", "k1")
        await store.done("j", "k1", {})  # the visit died before it could end the job
        assert (await store.job("j")).status == RUNNING
        assert await runner.repair() == 0
        assert (await store.job("j")).status == COMPLETED
    runner_on(redis_server, steps)
