"""The crawls and batch scrapes agent-svc runs: started by POST /v2/crawl or /v2/batch/scrape, cancelled by
DELETE, resumed after a restart. They share the host gate (politeness, with maps), the extraction slots and the
limits. How their pages are visited is the runner's: here, one task per job in this process (jobs in SQLite);
with REDIS_URL, queued.py's tasks, one per page, on every replica.

Here, at most CRAWL_MAX_RUNNING crawls, and as many batch scrapes, run at once (a batch does not wait behind
crawls of hours); the others wait, reported as scraping. Past CRAWL_MAX_JOBS unfinished jobs of both kinds, or
CRAWL_MAX_JOBS_PER_KEY of one client's, a new one is refused (429). A job is its owner's: another client's
requests for it are refused (403, as Firecrawl answers another team's crawl). A crawl that raises is marked
failed with the error (status "failed", as Firecrawl's clients expect), never left running silently.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from wisp_obs.requests import request_id

from agent.core.crawl_options import BATCH, CRAWL, CrawlOptions
from agent.errors import AlreadyFinished, BadRequest, Forbidden, JobNotFound, PastTimeLimit, TooManyCrawls
from agent.index.crawl.crawler import CrawlTools, run_crawl
from agent.index.crawl.scope import url_key
from agent.state.jobs import CANCELLED, COMPLETED, FAILED, RUNNING, TERMINAL, Counts, Job
from agent.state.jobs.redis import Store
from agent.state.jobs.sqlite import JobStore

log = logging.getLogger(__name__)


class Runner(Protocol):
    """Visits the pages of the jobs the manager starts."""

    async def start(self, job: Job) -> None: ...

    async def resume(self) -> list[str]: ...  # the jobs a previous run left unfinished

    def cancelled(self, job_id: str) -> None: ...  # the job is cancelled in the store: stop its visits

    async def stop(self) -> None: ...


class Crawls:
    def __init__(self, tools: CrawlTools, store: Store, runner: Runner | None = None) -> None:
        self.tools, self.store = tools, store
        self.runner = runner or LocalRunner(tools, store)

    async def start(self, options: CrawlOptions, owner: str | None, append_to: str | None = None) -> str:
        """A new job of `owner`'s and its id; with `append_to`, the seeds join that job of the same kind and
        owner instead (see `append`)."""
        if append_to is not None:
            await self.append(append_to, options.kind, list(options.seeds), owner)
            return append_to
        await self.store.run(self.store.expire)
        await self._make_room(owner)
        job_id = request_id()  # the id of the request that started it, so that its log lines name the job
        await self.store.run(self.store.create, job_id, options, self.tools.settings.crawl_ttl_s, owner)
        await self.runner.start(await self.job(job_id))
        return job_id

    async def resume(self) -> list[str]:
        """Resume every crawl a previous run left running; forget expired finished ones."""
        await self.store.run(self.store.expire)
        resumed = await self.runner.resume()
        if resumed:
            log.info("resumed %d crawls: %s", len(resumed), ", ".join(resumed))
        return resumed

    async def append(self, job_id: str, kind: str, urls: list[str], owner: str | None = None) -> None:
        """Queue more URLs on a running or completed job of this kind (a batch scrape's appendToId), within its
        limit; a completed one runs again. 404 for no such job, 403 for another owner's, 409 for a cancelled or
        failed one, or one past CRAWL_MAX_DURATION_S from its start (it would stop at once, leaving the URLs
        unvisited)."""
        job = await self.job(job_id, kind, owner)
        max_duration_s = self.tools.settings.crawl_max_duration_s
        if time.time() >= job.created + max_duration_s:
            raise PastTimeLimit(f"the job started more than CRAWL_MAX_DURATION_S ({max_duration_s:g} s) ago and "
                                "takes no more URLs: start a new one")
        if await self.store.run(self.store.known, job_id) + len(urls) > job.options.limit:
            raise BadRequest(f"the job would have more than {job.options.limit} URLs")
        pages = [(url_key(url, job.options.ignore_query, job.options.dedupe_similar), url, 0) for url in urls]
        before = await self.store.run(self.store.append, job_id, pages, job.options.limit)
        if before not in (RUNNING, COMPLETED):
            raise AlreadyFinished(str(before))
        if before == COMPLETED:  # its task has ended, or ends without the new pages
            await self.runner.start(await self.job(job_id))

    async def job(self, job_id: str, kind: str | None = None, owner: str | None = None) -> Job:
        """The job, live; with `kind`, a job of another kind is not found either (a crawl's id is no batch's);
        with `owner`, another client's job is Forbidden."""
        return _checked(await self.store.run(self.store.job, job_id), kind, owner)

    async def status(self, job_id: str, kind: str, skip: int, limit: int, max_bytes: int, owner: str | None = None
                     ) -> tuple[Job, Counts, list[dict[str, Any]]]:
        """A job of this `kind`, its counts and a page of its documents: a batch's id is no crawl's, and the
        other way round."""
        snapshot = await self.store.run(self.store.snapshot, job_id, skip, limit, max_bytes)
        _checked(snapshot[0] if snapshot else None, kind, owner)
        return snapshot

    async def errors(self, job_id: str, kind: str, owner: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
        await self.job(job_id, kind, owner)
        return await self.store.run(self.store.errors, job_id)

    async def why_none_scraped(self, job: Job, counts: Counts) -> str | None:
        """For a job that ended without a page scraped, how many of its pages failed or were refused and the
        first reason (the client would otherwise see `completed` and `total: 0`); None for any other job."""
        if job.status not in TERMINAL or counts.completed:
            return None
        errors, robots_blocked = await self.store.run(self.store.errors, job.id)
        if errors:
            first = errors[0]
            return (f"no page was scraped: {len(errors) + len(robots_blocked)} failed or were refused, the first "
                    f"{first['url']} ({first['code']}: {first['error']}); GET its /errors lists them all")
        if robots_blocked:
            return (f"no page was scraped: robots.txt disallows all {len(robots_blocked)}, the first "
                    f"{robots_blocked[0]}")
        return "no page was scraped: none was found to visit"

    async def active(self, owner: str | None = None) -> list[Job]:
        """The running crawls (batch scrapes are not crawls), of every client or of `owner`'s."""
        return [job for job in await self.store.run(self.store.running_jobs)
                if job.options.kind == CRAWL and _owns(job, owner)]

    async def cancel(self, job_id: str, kind: str, owner: str | None = None) -> None:
        job = await self.job(job_id, kind, owner)
        if job.status in TERMINAL or not await self.store.run(self.store.finish, job_id, CANCELLED):
            raise AlreadyFinished((await self.job(job_id)).status)  # it may have ended since the read
        self.runner.cancelled(job_id)

    async def stop(self) -> None:
        """Stop visiting pages; the jobs stay running in the store, and the next start resumes them."""
        await self.runner.stop()

    async def _make_room(self, owner: str | None) -> None:
        """TooManyCrawls when all jobs, or all of `owner`'s, are taken: one key's jobs never lock out the others
        (keyless, every job is everyone's: only the global bound applies)."""
        settings = self.tools.settings
        if await self.store.run(self.store.unfinished) >= settings.crawl_max_jobs:
            raise TooManyCrawls(f"{settings.crawl_max_jobs} crawls are unfinished (CRAWL_MAX_JOBS): wait for one to "
                                "end or cancel one")
        if owner is not None and (
                await self.store.run(self.store.unfinished, owner) >= settings.crawl_max_jobs_per_key):
            raise TooManyCrawls(f"{settings.crawl_max_jobs_per_key} of your crawls and batch scrapes are unfinished "
                                "(CRAWL_MAX_JOBS_PER_KEY): wait for one to end or cancel one")


class LocalRunner:
    """One task per job in this process, at most CRAWL_MAX_RUNNING of a kind at once."""

    def __init__(self, tools: CrawlTools, store: JobStore) -> None:
        self.tools, self.store = tools, store
        self._tasks: dict[str, asyncio.Task] = {}
        self._running = {kind: asyncio.Semaphore(tools.settings.crawl_max_running) for kind in (CRAWL, BATCH)}
        self._extract_slots = extract_slots(tools)

    async def start(self, job: Job) -> None:
        task = asyncio.create_task(self._run(job), name=f"crawl-{job.id}")
        self._tasks[job.id] = task
        # an append may start a job's next task before its last one is done: that one forgets only itself
        task.add_done_callback(lambda done: self._tasks.pop(job.id) if self._tasks.get(job.id) is done else None)

    async def resume(self) -> list[str]:
        resumed = []
        for job in await self.store.run(self.store.running_jobs):
            if job.status != RUNNING:  # its options could not be read: it reports failed
                await self.store.run(self.store.finish, job.id, FAILED, job.error)
                continue
            await self.start(job)
            resumed.append(job.id)
        return resumed

    def cancelled(self, job_id: str) -> None:
        if task := self._tasks.get(job_id):
            task.cancel()

    async def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def _run(self, job: Job) -> None:
        async with self._running.get(job.options.kind, self._running[CRAWL]):
            try:
                await run_crawl(job, self.tools, self.store, self._extract_slots)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                await job_failed(self.store, job.id, e)


def extract_slots(tools: CrawlTools) -> asyncio.Semaphore:
    """The extraction workers crawls of this process may take at once: they share the pool with searches, and
    leave them at least one worker."""
    return asyncio.Semaphore(max(1, tools.cpu_pool.size - 1))


async def job_failed(store: Store, job_id: str, error: Exception) -> None:
    """A bug met while visiting a job's pages fails the job with its error, never leaves it running silently."""
    log.error("crawl %s failed", job_id, exc_info=error)
    await store.run(store.finish, job_id, FAILED, f"{type(error).__name__}: {error}")


def _checked(job: Job | None, kind: str | None, owner: str | None) -> Job:
    """The job if it is live, of `kind` and `owner`'s (either None: any)."""
    if job is None or (kind is not None and job.options.kind != kind):
        raise JobNotFound()
    if job.expired and job.status in TERMINAL:
        raise JobNotFound("Job expired")
    if not _owns(job, owner):
        raise Forbidden("Forbidden")  # Firecrawl's answer to another team's crawl or batch
    return job


def _owns(job: Job, owner: str | None) -> bool:
    # a job stored before jobs had owners (None) stays everyone's until it expires
    return owner is None or job.owner in (None, owner)
