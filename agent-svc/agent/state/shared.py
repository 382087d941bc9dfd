"""Where the replicas' shared state is opened: with REDIS_URL, one Redis client for the stores and the task queue;
without it, nothing (each store keeps its state in the process). app.py opens it in its lifespan and gives each
kind's store what it needs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from agent.state.settings import SharedStateSettings
from agent.state.tasks import TaskQueue


@dataclass(frozen=True)
class Shared:
    """What replicas share on REDIS_URL: a client for the jobs' records, and the task queue."""

    redis: Redis
    tasks: TaskQueue


@asynccontextmanager
async def shared_state(settings: SharedStateSettings) -> AsyncIterator[Shared | None]:
    """The replicas' shared state on REDIS_URL, None without it (one replica: SQLite jobs, in-process limits).
    Redis need not answer yet: what needs it fails (503) or falls back until it does."""
    if not settings.redis_url:
        yield None
        return
    # a command on a pooled connection that a restarted Redis closed is sent once more on a new one: without it,
    # each connection the pool held fails one command after a restart (a 503, a credit lost, a scrape not kept)
    redis = Redis.from_url(settings.redis_url, socket_timeout=5, socket_connect_timeout=2, health_check_interval=10,
                           retry_on_error=[RedisConnectionError])
    tasks = TaskQueue(settings.redis_url, lease_s=settings.job_lease_s, sweep_s=settings.job_sweep_s)
    try:
        yield Shared(redis, tasks)
    finally:
        await tasks.close()
        await tasks.queue.disconnect()
        await redis.aclose()
