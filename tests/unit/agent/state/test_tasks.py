"""The shared task queue on a real redis-server: a task runs once per key while queued or running, renews its
lease while it runs, is handed over when its replica stops renewing it, and a task just taken is not; the shared
client outlives a Redis restart."""

import asyncio
import time
from pathlib import Path

from redis.asyncio import Redis
from saq import Status

from agent.config import Settings
from agent.state.shared import shared_state
from agent.state.tasks import TaskQueue
from offline_web.redis_server import RedisServer


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
        while not ran:
            await asyncio.sleep(0.05)
        assert not await tasks.enqueue("work", "a", page="a")  # running
        gate.set()
        await asyncio.sleep(0.3)
        assert await tasks.enqueue("work", "a", page="a")  # a finished task is forgotten
        await asyncio.sleep(0.3)
        await tasks.close()
        await tasks.queue.disconnect()
        return ran

    assert asyncio.run(main()) == ["a", "a"]


def test_a_running_task_keeps_its_lease_past_it(redis_server: RedisServer) -> None:
    async def main() -> tuple[int, float]:
        tasks, starts = await fresh(redis_server, lease_s=1.0), []

        async def slow() -> None:
            starts.append(time.monotonic())
            await asyncio.sleep(3.5)
        tasks.register("slow", slow)
        await tasks.enqueue("slow", "s")
        await tasks.start(concurrency=1)
        began = time.monotonic()
        while time.monotonic() - began < 4.5:
            await tasks.queue.sweep(lock=1)
            await asyncio.sleep(0.5)
        await tasks.close()
        await tasks.queue.disconnect()
        return len(starts), time.monotonic() - starts[0]

    started, _ = asyncio.run(main())
    assert started == 1  # three times its lease, renewed: never handed over


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
        async with shared_state(Settings(redis_url=server.url)) as shared:
            await asyncio.gather(*(shared.redis.incr("n") for _ in range(8)))  # the pool holds several connections
            server.kill()
            server.start()
            assert sorted(await asyncio.gather(*(shared.redis.incr("n") for _ in range(8)))) == list(range(9, 17))
    with RedisServer(tmp_path) as server:
        asyncio.run(main(server))
