"""Background jobs of one kind in this process: each runs in the background, is polled by id, and is forgotten
its TTL after it started (its `expiresAt`). A job is its owner's: another client finds no such job, as Firecrawl
answers another team's.

Bounded: at most `max_jobs` are kept, a finished one making room for a new one (the oldest first); when they are
all unfinished a new one is a 429, and so is a client's new one while `max_per_owner` of its own are unfinished
(so that one client cannot take every place). `max_running` run at once; the others wait, reported as processing.
A restart forgets them, unless a journal (journal.py) keeps them: then the unfinished ones run again from their
start.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Generic

from wisp_obs.requests import request_id

from agent.core.expiring import ExpiringMap
from agent.errors import JobNotFound
from agent.state.background import COMPLETED, FAILED, PROCESSING, J, Kind, R, Record, Runner, crashed
from agent.state.background.journal import SqliteJournal


class MemoryJobs(Generic[J, R]):
    def __init__(self, kind: Kind[R], run: Runner[J, R], max_jobs: int, max_running: int, ttl_s: float,
                 max_per_owner: int, clock: Callable[[], float] = time.time,
                 journal: SqliteJournal[J, R] | None = None) -> None:
        self._journal = journal
        self._kind, self._run, self._max_jobs, self._ttl_s, self._clock = kind, run, max_jobs, ttl_s, clock
        self._max_per_owner = max_per_owner
        self._records: ExpiringMap[Record[J, R]] = ExpiringMap(clock)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running = asyncio.Semaphore(max_running)

    async def start(self, job: J, owner: str | None) -> str:
        """The id of `owner`'s new job; it runs in the background. The kind's 429 when no room is left."""
        await self._make_room(owner)
        job_id = request_id()  # the id of the request that started it, so that its log lines name the job
        now = self._clock()
        await self._put(Record(job_id, job, owner, now + self._ttl_s, created=now))
        self._run_in_background(job_id, job)
        return job_id

    async def get(self, job_id: str, owner: str | None) -> Record[J, R]:
        """`owner`'s job's record; JobNotFound when it never was, has expired, or is another client's."""
        self._records.expire()
        record = self._records.get(job_id)
        if record is None or record.owner != owner:
            raise JobNotFound(self._kind.not_found)
        return record

    async def related(self, group: str, owner: str | None) -> list[Record[J, R]]:
        """`owner`'s jobs that joined `group`, oldest first (none for no group)."""
        self._records.expire()
        joined = (r for _, r in self._records.items() if r.owner == owner and self._kind.group_of(r.job) == group)
        return sorted(joined, key=lambda r: r.created) if group else []

    async def cancel(self, job_id: str, owner: str | None) -> Record[J, R]:
        """Tell `owner`'s job to stop (it ends with what it has); its record. JobNotFound as `get`."""
        record = await self.get(job_id, owner)
        if record.status == PROCESSING and not record.cancelled:
            record = replace(record, cancelled=True)
            await self._put(record)
        return record

    async def resume(self) -> None:
        """With a journal, the jobs it kept, and the unfinished ones run again from their start."""
        if self._journal is None:
            return
        for record in await self._journal.load():
            self._records.put(record.id, record)
            if record.status == PROCESSING:
                self._run_in_background(record.id, record.job)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._journal is not None:
            self._journal.close()

    def _run_in_background(self, job_id: str, job: J) -> None:
        task = asyncio.create_task(self._finish(job_id, job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _put(self, record: Record[J, R]) -> None:
        self._records.put(record.id, record)
        if self._journal is not None:
            await self._journal.save(record)

    async def _finish(self, job_id: str, job: J) -> None:
        async with self._running:
            try:
                result = await self._run(job_id, job, lambda: self._cancelled(job_id))
            except Exception as e:  # a bug must fail the job, not leave it processing forever
                result = crashed(self._kind, job_id, e)
        if (record := self._records.get(job_id)) is not None:
            status = FAILED if self._kind.failed(result) else COMPLETED
            await self._put(replace(record, status=status, result=result))

    def _cancelled(self, job_id: str) -> bool:
        record = self._records.get(job_id)
        return record is None or record.cancelled

    async def _make_room(self, owner: str | None) -> None:
        self._records.expire()
        running = sum(r.owner == owner and r.status == PROCESSING for _, r in self._records.items())
        if owner is not None and running >= self._max_per_owner:
            raise self._kind.too_many_of_yours(self._max_per_owner)
        if len(self._records) < self._max_jobs:
            return
        finished = next((i for i, r in self._records.items() if r.status != PROCESSING), None)
        if finished is None:
            raise self._kind.too_many_in_all(self._max_jobs)
        self._records.pop(finished)
        if self._journal is not None:
            await self._journal.forget(finished)
