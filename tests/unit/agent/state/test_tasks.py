"""The shared task queue on a real redis-server: a task runs once per key while queued or running, renews its
lease while it runs, is handed over when its replica stops renewing it, and a task just taken is not; the shared
client outlives a Redis restart."""

import asyncio
import time
from pathlib import Path

from redis.asyncio import Redis
from saq import Status

from agent.state.settings import SharedStateSettings
from agent.state.shared import shared_state
from agent.state.tasks import TaskQueue
from offline_web.redis_server import RedisServer
from tests.waiting import until

LEASE_S = 2.0  # renewed every third of it: a renewal may come 1.3 s late before the lease lapses


async def fresh(redis_server: RedisServer, lease_s: float = 2.0) -> TaskQueue:
    async with Redis.from_url(redis_server.url) as redis:
        await redis.flushdb()
    return TaskQueue(redis_server.url, lease_s=lease_s, sweep_s=1)


def test_a_key_is_queued_once_while_its_task_waits_or_runs(redis_server: RedisServer) -> None:
    async def main() -> list[str]:
        tasks, ran = await fresh(redis_server), []
        gate = asyncio.Event()

        async def work(page: str) -> None:
            ran.append(page)
            await gate.wait()
        tasks.register("work", work)
        assert await tasks.enqueue("work", "a", page="a")
        assert not await tasks.enqueue("work", "a", page="a")
        await tasks.start(concurrency=2)
        await until(lambda: ran, "the task started")
        assert not await tasks.enqueue("work", "a", page="a")  # running
        gate.set()
        # a finished task is forgotten: its key is queued again, and the task runs again
        await until(lambda: tasks.enqueue("work", "a", page="a"), "the finished task's key queued again")
        await until(lambda: len(ran) == 2, "the task queued again ran")
        await tasks.close()
        await tasks.queue.disconnect()
        return ran

    assert asyncio.run(main()) == ["a", "a"]


def test_a_running_task_keeps_its_lease_past_it(redis_server: RedisServer) -> None:
    async def main() -> tuple[int, list[str], Status]:
        tasks, starts, ended = await fresh(redis_server, lease_s=LEASE_S), [], []
        done = asyncio.Event()

        async def slow() -> None:
            starts.append(time.time())  # saq's clock, which judges a lease
            await done.wait()
            ended.append(True)
        tasks.register("slow", slow)
        await tasks.enqueue("slow", "s")
        await tasks.start(concurrency=2)  # a free worker would run the task again at once if it were handed over
        await until(lambda: starts, "the task started")
        handed: list[str] = []
        while time.time() - starts[0] <= 2 * LEASE_S:  # sweeps (the worker's own too) all along two leases
            handed += await tasks.queue.sweep(lock=1)
            await asyncio.sleep(0.25)
        job = await tasks.queue.job("slow:s")  # past its first lease: renewed, still active, not lapsed
        status = Status.QUEUED if job.stuck else job.status
        done.set()
        await until(lambda: ended, "the task ended")
        await tasks.close()
        await tasks.queue.disconnect()
        return len(starts), handed, status

    started, handed, status = asyncio.run(main())
    assert started == 1 and handed == [] and status == Status.ACTIVE  # twice its lease, renewed: never handed over


def test_a_task_whose_lease_lapses_is_handed_over(redis_server: RedisServer) -> None:
    async def main() -> Status:
        tasks = await fresh(redis_server, lease_s=1.0)
        await tasks.enqueue("visit", "p", page="p")
        job = await tasks.queue.dequeue(timeout=1)  # a replica takes it, marks it, then dies
        await job.update(status=Status.ACTIVE)
        await asyncio.sleep(1.5)
        handed = await tasks.queue.sweep(lock=1)
        again = await tasks.queue.job(job.key)
        await tasks.queue.disconnect()
        assert handed == [job.id]
        return again.status

    assert asyncio.run(main()) == Status.QUEUED


def test_a_task_just_taken_is_not_handed_over_by_one_sweep(redis_server: RedisServer) -> None:
    async def main() -> tuple[list[str], list[str]]:
        tasks = await fresh(redis_server)
        await tasks.enqueue("visit", "p", page="p")
        await tasks.queue.dequeue(timeout=1)  # taken, not yet marked active: saq's own sweep would abort it
        first = await tasks.queue.sweep(lock=1)
        await asyncio.sleep(1.1)  # the sweep's lock
        second = await tasks.queue.sweep(lock=1)  # still unmarked a sweep later: its replica died
        await tasks.queue.disconnect()
        return first, second

    first, second = asyncio.run(main())
    assert first == [] and len(second) == 1


def test_the_shared_client_sends_no_command_to_a_connection_a_restarted_redis_closed(tmp_path: Path) -> None:
    async def main(server: RedisServer) -> None:
        async with shared_state(SharedStateSettings(redis_url=server.url)) as shared:
            await asyncio.gather(*(shared.redis.incr("n") for _ in range(8)))  # the pool holds several connections
            server.kill()
            server.start()
            assert sorted(await asyncio.gather(*(shared.redis.incr("n") for _ in range(8)))) == list(range(9, 17))
    with RedisServer(tmp_path) as server:
        asyncio.run(main(server))
