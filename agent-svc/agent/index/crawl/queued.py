"""Crawls and batch scrapes on the replicas' shared queue (REDIS_URL): a job is one task that seeds it, then one
task per page, which any replica with a free worker takes (CRAWL_CONCURRENCY pages at once per replica, all
jobs together). The store (state/jobs/redis.py) queues a page's visit when it queues the page, claims the page for
the visit, records it once, and ends the job when its last page is visited.

What could still be lost is repaired: a replica that died between queueing a page and queueing its visit, or
a Redis restarted from a file a second old. Every REPAIR_S one replica (a lock in Redis decides which) makes sure
each running job's seeding and unvisited pages have their tasks queued; a task already queued or running is
not queued twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from agent.errors import SharedStateUnavailable
from agent.index.crawl.crawler import Crawl, CrawlTools, crawl_of, seed, stop_at_time_limit, visit_claimed
from agent.index.crawl.manager import extract_slots, job_failed
from agent.state.jobs import COMPLETED, FAILED, RUNNING, Job
from agent.state.jobs.redis import RedisJobStore
from agent.state.shared import Shared
from agent.state.tasks import repair_every
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
SEED, VISIT = "crawl.seed", "crawl.visit"
REPAIR_S = 30.0
PATIENCE_S = 60.0
CRAWLS_KEPT = 64  # jobs whose robots.txt and scope a replica keeps between their pages' visits


class QueuedRunner:
    def __init__(self, tools: CrawlTools, store: RedisJobStore, shared: Shared) -> None:
        store.on_queued(self._queue_visits)
        # a visit that has fetched its page waits out a short Redis outage to record it, rather than being
        # handed over and fetching the page again
        self.store = store.patient(PATIENCE_S)
        self.tools, self.tasks, self._redis = tools, shared.tasks, shared.redis
        self._extract_slots = extract_slots(tools)
        self._crawls: OrderedDict[str, Crawl] = OrderedDict()
        self._repairing: asyncio.Task | None = None
        self.tasks.register(SEED, self._seed)
        self.tasks.register(VISIT, self._visit)

    async def start(self, job: Job) -> None:
        """Queue the job's seeding; the job exists already, so a failure here is left to the repair, not a 5xx
        that would make the client start a second job."""
        try:
            await self.tasks.enqueue(SEED, job.id, job_id=job.id)
        except UNREACHABLE as e:
            log.warning("could not queue the seeding of crawl %s (%s): the next repair will", job.id, e)

    async def resume(self) -> list[str]:
        """Nothing to resume here: the jobs' tasks wait in the queue (and the repair, from now on every REPAIR_S,
        queues what was lost)."""
        self._repairing = asyncio.create_task(repair_every(self._redis, "crawls", REPAIR_S, self.repair))
        return []

    def cancelled(self, job_id: str) -> None:
        """Nothing to stop: the visits of a cancelled job find it so, and do nothing."""
        self._crawls.pop(job_id, None)

    async def stop(self) -> None:
        if self._repairing is not None:
            self._repairing.cancel()
            await asyncio.gather(self._repairing, return_exceptions=True)

    async def repair(self) -> int:
        """Queue the tasks every running job needs (already queued ones are left alone), and end the jobs that
        have none left to run: drained, past CRAWL_MAX_DURATION_S, or unreadable. The number of tasks queued."""
        queued = 0
        for job in await self.store.running_jobs():
            if job.status != RUNNING:  # its stored options could not be read
                await self.store.finish(job.id, FAILED, job.error)
            elif time.time() >= job.created + self.tools.settings.crawl_max_duration_s:
                await stop_at_time_limit(crawl_of(job, self.tools, self.store))
            elif not job.seeded:
                queued += await self.tasks.enqueue(SEED, job.id, job_id=job.id)
            elif unvisited := await self.store.unvisited(job.id):
                for key in unvisited:
                    queued += await self.tasks.enqueue(VISIT, f"{job.id}:{key}", job_id=job.id, key=key)
            else:  # its last visit ended between two steps (an append of known URLs, a crash)
                await self.store.finish(job.id, COMPLETED, None, True)
        return queued

    async def _queue_visits(self, job_id: str, keys: list[str]) -> None:
        for key in keys:
            await self.tasks.enqueue(VISIT, f"{job_id}:{key}", job_id=job_id, key=key)

    async def _seed(self, job_id: str) -> None:
        await self._with(job_id, self._seeded)

    async def _visit(self, job_id: str, key: str) -> None:
        await self._with(job_id, lambda crawl: visit_claimed(crawl, key))

    async def _seeded(self, crawl: Crawl) -> None:
        await seed(crawl)
        # its pages' visits were queued as the pages were, and may all have ended before it was marked seeded
        await self.store.finish(crawl.job_id, COMPLETED, None, True)

    async def _with(self, job_id: str, step: Callable[[Crawl], Awaitable[None]]) -> None:
        """Run one step of a job: a bug fails the job; Redis out of reach leaves the task to be handed over."""
        try:
            crawl = await self._crawl(job_id)
            if crawl is not None:
                await step(crawl)
        except (SharedStateUnavailable, *UNREACHABLE):
            raise  # saq retries the task once its lease has lapsed, after Redis is back
        except Exception as e:
            await job_failed(self.store, job_id, e)

    async def _crawl(self, job_id: str) -> Crawl | None:
        """The job's crawl as this replica keeps it (its robots.txt cache), None when the job no longer runs."""
        job = await self.store.job(job_id)
        if job is None or job.status != RUNNING:
            self._crawls.pop(job_id, None)
            return None
        crawl = self._crawls.get(job_id)
        if crawl is None or crawl.job.seeded != job.seeded:
            crawl = crawl_of(job, self.tools, self.store, self._extract_slots)
            self._crawls[job_id] = crawl
            while len(self._crawls) > CRAWLS_KEPT:
                self._crawls.popitem(last=False)
        self._crawls.move_to_end(job_id)
        return crawl
