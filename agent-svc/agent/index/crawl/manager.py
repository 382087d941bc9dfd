"""The crawls agent-svc runs: started by POST /v2/crawl, cancelled by DELETE, resumed after a restart.

At most CRAWL_MAX_RUNNING crawls run at once; the others wait, reported as scraping, and past CRAWL_MAX_JOBS
unfinished ones a new crawl is refused (429). A crawl that raises is marked failed with the error (status
"failed", as Firecrawl's clients expect), never left running silently.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from wisp_obs.requests import request_id

from agent.errors import WispError
from agent.index.crawl.crawler import CrawlTools, run_crawl
from agent.index.crawl.jobs import CANCELLED, FAILED, RUNNING, TERMINAL, Counts, Job, JobStore
from agent.index.crawl.options import CrawlOptions

log = logging.getLogger(__name__)


class JobNotFound(WispError):
    status = 404

    def __init__(self, message: str = "Job not found") -> None:
        super().__init__(message)


class AlreadyFinished(WispError):
    status = 409

    def __init__(self, status: str) -> None:
        super().__init__(f"Crawl is already {status}")


class TooManyCrawls(WispError):
    status = 429
    code = "TOO_MANY_CRAWLS"


class Crawls:
    def __init__(self, tools: CrawlTools, store: JobStore) -> None:
        self.tools, self.store = tools, store
        self._tasks: dict[str, asyncio.Task] = {}
        self._running = asyncio.Semaphore(tools.settings.crawl_max_running)
        # crawls extract in the pool searches use: they leave it at least one worker
        self._extract_slots = asyncio.Semaphore(max(1, tools.settings.extract_workers - 1))

    async def start(self, options: CrawlOptions) -> str:
        settings = self.tools.settings
        await self.store.run(self.store.expire)
        if await self.store.run(self.store.unfinished) >= settings.crawl_max_jobs:
            raise TooManyCrawls(f"{settings.crawl_max_jobs} crawls are unfinished (CRAWL_MAX_JOBS): wait for one to "
                                "end or cancel one")
        job_id = request_id()  # the id of the request that started it, so that its log lines name the job
        await self.store.run(self.store.create, job_id, options, settings.crawl_ttl_s)
        self._spawn(await self.job(job_id))
        return job_id

    async def resume(self) -> list[str]:
        """Resume every crawl a previous run of agent-svc left running; forget expired finished ones."""
        await self.store.run(self.store.expire)
        resumed = []
        for job in await self.store.run(self.store.running_jobs):
            if job.status != RUNNING:  # its options could not be read: it reports failed
                await self.store.run(self.store.finish, job.id, FAILED, job.error)
                continue
            self._spawn(job)
            resumed.append(job.id)
        if resumed:
            log.info("resumed %d crawls: %s", len(resumed), ", ".join(resumed))
        return resumed

    async def job(self, job_id: str) -> Job:
        job = await self.store.run(self.store.job, job_id)
        return _live(job)

    async def status(self, job_id: str, skip: int, limit: int, max_bytes: int
                     ) -> tuple[Job, Counts, list[dict[str, Any]]]:
        snapshot = await self.store.run(self.store.snapshot, job_id, skip, limit, max_bytes)
        if snapshot is None:
            raise JobNotFound()
        _live(snapshot[0])
        return snapshot

    async def errors(self, job_id: str) -> tuple[list[dict[str, Any]], list[str]]:
        await self.job(job_id)
        return await self.store.run(self.store.errors, job_id)

    async def active(self) -> list[Job]:
        return await self.store.run(self.store.running_jobs)

    async def cancel(self, job_id: str) -> None:
        job = await self.job(job_id)
        if job.status in TERMINAL or not await self.store.run(self.store.finish, job_id, CANCELLED):
            raise AlreadyFinished((await self.job(job_id)).status)  # it may have ended since the read
        if task := self._tasks.get(job_id):
            task.cancel()

    async def stop(self) -> None:
        """Stop every crawl task; the jobs stay running in the store, and the next start resumes them."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def _spawn(self, job: Job) -> None:
        task = asyncio.create_task(self._run(job), name=f"crawl-{job.id}")
        self._tasks[job.id] = task
        task.add_done_callback(lambda _: self._tasks.pop(job.id, None))

    async def _run(self, job: Job) -> None:
        async with self._running:
            try:
                await run_crawl(job, self.tools, self.store, self._extract_slots)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.exception("crawl %s failed", job.id)
                await self.store.run(self.store.finish, job.id, FAILED, f"{type(e).__name__}: {e}")


def _live(job: Job | None) -> Job:
    if job is None:
        raise JobNotFound()
    if job.expired and job.status in TERMINAL:
        raise JobNotFound("Job expired")
    return job
