"""The extract jobs of this process: each runs in the background, is polled by id, and is forgotten
EXTRACT_TTL_S after it started (its `expiresAt`). A job is its owner's: another client finds no such job, as
Firecrawl answers another team's extraction.

Kept in memory rather than in the crawls' SQLite store: an extraction lasts seconds to minutes and leaves
nothing worth resuming (reading its pages again takes less than a restart), so a restart forgets the jobs and
their ids answer 404. Bounded: at most EXTRACT_MAX_JOBS are kept, a finished one making room for a new one
(the oldest first); when they are all unfinished a new one is a 429, and so is a client's new one while
EXTRACT_MAX_JOBS_PER_KEY of its own are unfinished (so that one client cannot take every place).
EXTRACT_MAX_RUNNING run at once; the others wait, reported as processing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace

from wisp_obs.requests import request_id

from agent.core.expiring import ExpiringMap
from agent.core.extract_job import ExtractJob
from agent.errors import JobNotFound, TooManyExtracts
from agent.state.extracts import COMPLETED, FAILED, PROCESSING, ExtractRecord, Runner, failure

log = logging.getLogger(__name__)


class ExtractJobs:
    def __init__(self, run: Runner, max_jobs: int, max_running: int, ttl_s: float, max_per_owner: int,
                 clock: Callable[[], float] = time.time) -> None:
        self._run, self._max_jobs, self._ttl_s, self._clock = run, max_jobs, ttl_s, clock
        self._max_per_owner = max_per_owner
        self._records: ExpiringMap[ExtractRecord] = ExpiringMap(clock)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running = asyncio.Semaphore(max_running)

    async def start(self, job: ExtractJob, owner: str | None) -> str:
        """The id of `owner`'s new job; it runs in the background. TooManyExtracts when no room is left."""
        self._make_room(owner)
        job_id = request_id()  # the id of the request that started it, so that its log lines name the job
        self._records.put(job_id, ExtractRecord(job_id, job, owner, self._clock() + self._ttl_s))
        task = asyncio.create_task(self._finish(job_id, job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job_id

    async def get(self, job_id: str, owner: str | None) -> ExtractRecord:
        """`owner`'s job's record; JobNotFound when it never was, has expired, or is another client's."""
        self._records.expire()
        record = self._records.get(job_id)
        if record is None or record.owner != owner:
            raise JobNotFound("Extract job not found")
        return record

    async def resume(self) -> None:
        """Nothing to resume: a restart forgets this process's extractions."""

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _finish(self, job_id: str, job: ExtractJob) -> None:
        async with self._running:
            try:
                result = await self._run(job)
            except Exception as e:  # a bug must fail the job, not leave it processing forever
                result = failure(job_id, e)
        if (record := self._records.get(job_id)) is not None:
            self._records.put(job_id, replace(record, status=FAILED if result.error else COMPLETED, result=result))

    def _make_room(self, owner: str | None) -> None:
        self._records.expire()
        running = sum(r.owner == owner and r.status == PROCESSING for _, r in self._records.items())
        if owner is not None and running >= self._max_per_owner:
            raise TooManyExtracts(f"{self._max_per_owner} of your extractions are unfinished "
                                  "(EXTRACT_MAX_JOBS_PER_KEY): retry when one has finished")
        if len(self._records) < self._max_jobs:
            return
        finished = next((i for i, r in self._records.items() if r.status != PROCESSING), None)
        if finished is None:
            raise TooManyExtracts(f"{self._max_jobs} extractions are unfinished (EXTRACT_MAX_JOBS): retry when one "
                                  "has finished")
        self._records.pop(finished)
