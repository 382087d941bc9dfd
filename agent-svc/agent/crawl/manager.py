"""The crawls agent-svc runs: started by POST /v2/crawl, cancelled by DELETE, resumed after a restart.

At most CRAWL_MAX_RUNNING crawls run at once; the others wait, reported as scraping. A crawl that raises is
marked failed with the error (status "failed", as Firecrawl's clients expect), never left running silently.
"""

from __future__ import annotations

import asyncio
import logging

from agent.crawl.crawler import run_crawl
from agent.crawl.jobs import CANCELLED, COMPLETED, FAILED, TERMINAL, Job, JobStore
from agent.crawl.options import CrawlOptions
from agent.errors import WispError
from agent.firecrawl import new_id
from agent.services import Services

log = logging.getLogger(__name__)


class JobNotFound(WispError):
    status = 404

    def __init__(self) -> None:
        super().__init__("Job not found")


class AlreadyFinished(WispError):
    status = 409

    def __init__(self, status: str) -> None:
        super().__init__(f"Crawl is already {status}")


class Crawls:
    def __init__(self, services: Services, store: JobStore) -> None:
        self.services, self.store = services, store
        self._tasks: dict[str, asyncio.Task] = {}
        self._running = asyncio.Semaphore(services.settings.crawl_max_running)
        # crawls extract in the pool searches use: they leave it at least one worker
        self._extract_slots = asyncio.Semaphore(max(1, services.settings.extract_workers - 1))

    async def start(self, options: CrawlOptions) -> str:
        job_id = new_id()
        await self.store.call("create", job_id, options, self.services.settings.crawl_ttl_s)
        self._spawn(job_id, options)
        return job_id

    async def resume(self) -> list[str]:
        """Resume every crawl a previous run of agent-svc left running; forget expired ones."""
        await self.store.call("expire")
        resumed = await self.store.call("running")
        for job_id in resumed:
            job = await self.store.call("job", job_id)
            self._spawn(job_id, job.options)
        if resumed:
            log.info("resumed %d crawls: %s", len(resumed), ", ".join(resumed))
        return resumed

    async def job(self, job_id: str) -> Job:
        job = await self.store.call("job", job_id)
        if job is None:
            raise JobNotFound()
        return job

    async def cancel(self, job_id: str) -> None:
        job = await self.job(job_id)
        if job.status in TERMINAL:
            raise AlreadyFinished(job.status)
        await self.store.call("finish", job_id, CANCELLED)
        if task := self._tasks.get(job_id):
            task.cancel()

    async def stop(self) -> None:
        """Stop every crawl task; the jobs stay running in the store, and the next start resumes them."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def _spawn(self, job_id: str, options: CrawlOptions) -> None:
        task = asyncio.create_task(self._run(job_id, options), name=f"crawl-{job_id}")
        self._tasks[job_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(job_id, None))

    async def _run(self, job_id: str, options: CrawlOptions) -> None:
        async with self._running:
            try:
                await run_crawl(job_id, options, self.services, self.store, self._extract_slots)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.exception("crawl %s failed", job_id)
                await self.store.call("finish", job_id, FAILED, f"{type(e).__name__}: {e}")
            else:
                log.info("crawl %s %s", job_id, COMPLETED)
