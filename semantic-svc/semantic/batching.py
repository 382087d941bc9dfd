"""All model work on one thread, off the event loop, behind a bounded queue that batches across requests.

Two model calls at once on a 2-core machine only fight over the cores, so one thread runs them in turn.
Jobs that share a batch key (embedding passages, scoring query-passage pairs) are merged into one model call,
which is where concurrent requests gain throughput. A call is capped by texts and by characters so that it stays
short: a job bigger than that is cut into slices, and after each slice its rest waits behind the jobs that came
after it, so one huge request cannot hold the others back. A job whose caller gave up (a client that
disconnected) gets no model time. Past `max_pending` waiting jobs, a request is refused at once (503) instead
of waiting without bound, so p95 cannot explode under load; and a job that waited `max_wait_s` without starting
is refused then (503): under overload its caller would give up during its model call anyway, and the model
time goes to a job that can still be answered in time.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from semantic import metrics
from semantic.errors import NotReady
from semantic.heap import HeapTrimmer

# The lane serves text models: an item is a text, or texts read together (a query and a passage).
Text = str | tuple[str, ...]
Work = Callable[[list[Any]], Sequence[Any]]  # items → one result per item, each independent of the others
RECENT_BATCHES = 32


class Busy(NotReady):
    """The queue is full; the client should retry later (503)."""


@dataclass(frozen=True)
class BatchRecord:
    key: str
    jobs: int
    items: int
    chars: int
    ms: float


@dataclass(frozen=True)
class LaneStats:
    pending_jobs: int
    pending_items: int
    batches: int  # model calls since start
    jobs: int  # job slices those calls computed
    items: int
    skipped_jobs: int  # dropped because their caller gave up
    expired_jobs: int  # refused after waiting max_wait_s
    recent: list[BatchRecord]


@dataclass(eq=False)
class _Job:
    work: Work
    items: list[Text]
    batch_key: Hashable | None
    future: asyncio.Future
    queued_at: float
    taken: int = 0  # items handed to model calls so far
    results: list[Any] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return len(self.items) - self.taken


@dataclass(frozen=True)
class _Slice:
    job: _Job
    start: int
    stop: int


class ModelLane:
    def __init__(self, max_pending: int, max_batch: int, max_batch_chars: int = 0, max_wait_s: float = 0,
                 clock: Callable[[], float] = time.monotonic, heap: HeapTrimmer | None = None) -> None:
        """0 for `max_batch_chars` or `max_wait_s`: no limit of that kind."""
        self._max_pending, self._max_batch, self._max_batch_chars = max_pending, max_batch, max_batch_chars
        self._max_wait_s, self._clock = max_wait_s, clock
        self._jobs: deque[_Job] = deque()
        self._ready = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self._worker: asyncio.Task | None = None
        self._recent: deque[BatchRecord] = deque(maxlen=RECENT_BATCHES)
        self._heap = heap or HeapTrimmer()
        self._batches = self._sliced = self._computed = self._skipped = self._expired = 0

    async def run(self, work: Work, items: list[Text], batch_key: Hashable | None = None) -> list[Any]:
        """Results of `work(items)`, possibly computed in slices together with other jobs of the same batch key."""
        if not items:
            return []
        if len(self._jobs) >= self._max_pending:
            metrics.dropped("refused")
            raise Busy(f"{len(self._jobs)} model jobs are already waiting; retry shortly")
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._work())
        job = _Job(work, items, batch_key, asyncio.get_running_loop().create_future(), self._clock())
        self._jobs.append(job)
        self._ready.set()
        return await job.future

    def stats(self) -> LaneStats:
        return LaneStats(len(self._jobs), sum(job.remaining for job in self._jobs), self._batches, self._sliced,
                         self._computed, self._skipped, self._expired, list(self._recent))

    async def close(self) -> None:
        if self._worker:
            self._worker.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._drop_hopeless()
            if not self._jobs:
                if self._heap.untrimmed:  # then look again: a job may have come during the trim
                    await loop.run_in_executor(self._executor, self._heap.release)
                    continue
                self._ready.clear()
                await self._ready.wait()
                continue
            batch = self._next_batch()
            items = [item for part in batch for item in part.job.items[part.start : part.stop]]
            started = time.perf_counter()
            try:
                results = await loop.run_in_executor(self._executor, self._compute, batch[0].job.work, items)
            except Exception as e:  # the model's error belongs to the requests that asked
                for part in batch:
                    if not part.job.future.done():
                        part.job.future.set_exception(e)
                continue
            self._record(batch, items, time.perf_counter() - started)
            offset = 0
            for part in batch:
                size = part.stop - part.start
                part.job.results += results[offset : offset + size]
                offset += size
                if len(part.job.results) == len(part.job.items) and not part.job.future.done():
                    part.job.future.set_result(part.job.results)

    def _compute(self, work: Work, items: list[Any]) -> Sequence[Any]:
        try:
            return work(items)
        finally:
            self._heap.after_call()

    def _drop_hopeless(self) -> None:
        """No model time for a job whose caller gave up (or a slice of which failed), nor for one that waited
        too long to start."""
        now = self._clock()
        for job in self._jobs:
            waited = now - job.queued_at
            if self._max_wait_s and not job.taken and waited > self._max_wait_s and not job.future.done():
                job.future.set_exception(Busy(f"waited {waited:.1f} s for the model, longer than MAX_WAIT_S; "
                                              "retry shortly"))
                self._expired += 1
                metrics.dropped("expired")
            elif job.future.done():
                self._skipped += 1
                metrics.dropped("skipped")
        self._jobs = deque(job for job in self._jobs if not job.future.done())

    def _next_batch(self) -> list[_Slice]:
        """The oldest job and the other waiting jobs of its key, as much of each as fits in one model call."""
        key = self._jobs[0].batch_key
        batch: list[_Slice] = []
        count = chars = 0
        for job in list(self._jobs):
            if batch and (key is None or job.batch_key != key):
                continue
            take = 0
            while take < job.remaining:
                size = _chars(job.items[job.taken + take])
                over = self._max_batch_chars and chars + size > self._max_batch_chars
                if count and (count == self._max_batch or over):
                    break  # the first item always goes, however long: it cannot be cut
                count, chars, take = count + 1, chars + size, take + 1
            if not take:
                break
            batch.append(_Slice(job, job.taken, job.taken + take))
            job.taken += take
            self._jobs.remove(job)
            if job.remaining:
                self._jobs.append(job)
        return batch

    def _record(self, batch: list[_Slice], items: list[Text], seconds: float) -> None:
        self._batches += 1
        self._sliced += len(batch)
        self._computed += len(items)
        key = batch[0].job.batch_key
        name = "/".join(map(str, key)) if isinstance(key, tuple) else str(key)
        record = BatchRecord(name, len(batch), len(items), sum(map(_chars, items)), round(seconds * 1000, 1))
        self._recent.append(record)
        metrics.observe_batch(record)


def _chars(item: Text) -> int:
    return len(item) if isinstance(item, str) else sum(map(len, item))
