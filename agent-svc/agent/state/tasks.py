"""The queue agent-svc replicas share on Redis (REDIS_URL): saq's, with a worker in every replica's event loop.

A task is a named coroutine function and keyword arguments of JSON values. Each has a key: a task whose key is
already queued or running is not queued again, so a page of a crawl is never queued twice. A running task
renews its lease (saq's heartbeat) every third of `lease_s`; a replica that dies stops renewing it, and after
the lease one replica's sweep (every `sweep_s`, one replica at a time) hands the task to another replica.
Finished tasks are forgotten at once: what they did is in the jobs' own records (state/jobs/redis.py),
which also decide whether a task handed over has anything left to do, so that no page is done twice.

Why saq (bench/job_queues.py; docs/scaling.md): asyncio-native, in-process workers, leases kept alive by a
heartbeat (a slow page is not taken over while its replica lives, which fixed timeouts cannot promise), and
deduplication by key, in a small, maintained library.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from saq import Job, Queue, Status, Worker
from saq.queue.redis import RedisQueue

from agent import metrics
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
Task = Callable[..., Awaitable[None]]
RETRIES = 1000  # handovers of one task: a task counts its own attempts (a page fails after a few)
REDIS_DOWN_PAUSE_S = 1.0  # between two attempts to take a task while Redis cannot be reached
DEQUEUE_WAIT_S = 1.0  # how long a free worker waits on Redis for a task before asking again


class LeasedQueue(RedisQueue):
    """saq's Redis queue, which pauses when Redis is down instead of letting its worker spin on the error, and
    sweeps only tasks whose lease has lapsed.

    saq's own sweep also hands over at once every task on its active list not marked active yet, which is every
    task a worker has just taken, for the milliseconds before it marks it: a healthy task would be aborted and
    run again (saq issue #277). Here an unmarked task is handed over only when it has stayed unmarked a whole
    sweep interval; when each was first seen so is kept in Redis, since the sweep moves between replicas.
    """

    async def sweep(self, lock: int = 60, abort: float = 5.0) -> list[str]:
        if not await self.redis.set(self._sweep, 1, nx=True, ex=lock):  # another replica's turn
            return []
        now = time.time()
        first_seen = {k: float(v) for k, v in (await self.redis.hgetall(self._unmarked)).items()}
        ids = await self.redis.lrange(self._active, 0, -1)
        unmarked, lapsed, gone = {}, [], []
        for job_id, raw in zip(ids, await self.redis.mget(ids) if ids else [], strict=True):
            job = self.deserialize(raw) if raw else None
            if job is None:  # finished meanwhile, or a handed-over copy of a task that then finished
                gone.append(job_id)
                continue
            if job.status != Status.ACTIVE:
                unmarked[job_id] = first_seen.get(job_id, now)
            if job.stuck or now - unmarked.get(job_id, now) >= lock:
                lapsed.append(job)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._unmarked)
            if unmarked:
                pipe.hset(self._unmarked, mapping=unmarked).expire(self._unmarked, lock * 10)
            for job_id in gone:
                pipe.lrem(self._active, 0, job_id)
            await pipe.execute()
        for job in lapsed:
            log.warning("task %s: its lease lapsed (its replica stopped); handing it over", job.key)
            metrics.QUEUE_TASKS_HANDED_OVER.inc()
            await self.retry(job, error="its replica stopped renewing its lease")
        return [job.id for job in lapsed]

    @property
    def _unmarked(self) -> str:
        return self.namespace("unmarked")


class _QuietWorker(Worker):
    SIGNALS: ClassVar[list] = []  # uvicorn owns the process's signals; the lifespan stops the worker


class TaskQueue:
    def __init__(self, redis_url: str, name: str = "wisp", lease_s: float = 10.0, sweep_s: float = 2.0) -> None:
        # its own client (a worker's waits for a task hold connections), with timeouts: a connection left half-open
        # must fail an enqueue or a lease renewal, not hang it (the longest wait for a task is DEQUEUE_WAIT_S)
        self.queue: Queue = LeasedQueue(Redis.from_url(redis_url, socket_timeout=DEQUEUE_WAIT_S + 5,
                                                       socket_connect_timeout=2, health_check_interval=10,
                                                       retry_on_error=[RedisConnectionError]), name=name)
        self.lease_s, self.sweep_s = lease_s, sweep_s
        self._functions: dict[str, Task] = {}
        self._worker: Worker | None = None
        self._running: asyncio.Task | None = None

    def register(self, name: str, task: Task) -> None:
        """`task(**kwargs)` runs when a task of this name is taken, and may run again after its replica dies. It
        records a bug it meets as its job's failure; what it raises (Redis out of reach) leaves it to be handed
        over once its lease lapses."""
        self._functions[name] = task

    async def enqueue(self, name: str, key: str, /, **kwargs: Any) -> bool:
        """Queue a task unless one of this key is queued or running; False when it was."""
        job = Job(function=name, kwargs=kwargs, key=f"{name}:{key}", timeout=0, heartbeat=max(1, round(self.lease_s)),
                  retries=RETRIES, ttl=-1)
        return await self.queue.enqueue(job) is not None

    async def start(self, concurrency: int) -> None:
        """Take tasks, `concurrency` at once, until `close`."""
        functions = [(name, self._leased(name, task)) for name, task in self._functions.items()]
        self._worker = _QuietWorker(self.queue, functions, concurrency=concurrency, dequeue_timeout=DEQUEUE_WAIT_S,
                                    timers={"sweep": max(1, round(self.sweep_s)), "abort": 1})
        self._running = asyncio.create_task(self._worker.start(), name="task-queue-worker")

    async def close(self) -> None:
        """Stop taking tasks; the running ones are handed back to the queue (saq retries them elsewhere)."""
        worker, running, self._worker, self._running = self._worker, self._running, None, None
        if worker is not None:
            await worker.stop()
        if running is not None:
            await asyncio.gather(running, return_exceptions=True)

    def _leased(self, name: str, task: Task) -> Callable[..., Awaitable[None]]:
        running = metrics.QUEUE_TASKS_RUNNING.labels(name)

        async def run(ctx: dict[str, Any], **kwargs: Any) -> None:
            renewing = asyncio.create_task(self._renew(ctx["job"]))
            running.inc()
            try:
                await task(**kwargs)
            finally:
                running.dec()
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
        return run

    async def _renew(self, job: Any) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await job.update()
            except UNREACHABLE as e:  # the lease may lapse: the job's records decide who finishes
                log.warning("could not renew the lease of task %s: %s", job.key, e)


async def repair_every(redis: Redis, name: str, period_s: float, repair: Callable[[], Awaitable[int]]) -> None:
    """Forever, every `period_s`: `repair()` on one replica (the first to take the period's lock in Redis), which
    queues what was lost and returns how many tasks; a Redis out of reach is logged, and tried next period."""
    while True:
        await asyncio.sleep(period_s)
        try:
            if (await redis.set(f"wisp:repair:{name}", "1", nx=True, ex=max(1, int(period_s)))
                    and (queued := await repair())):
                log.warning("%s: queued %d tasks that had been lost", name, queued)
        except UNREACHABLE as e:
            log.warning("%s: could not check for lost tasks: %s", name, e)


