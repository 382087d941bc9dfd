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

Searches come before indexing. A job is interactive (a search waits for it) or background (a crawl's page being
indexed). A background job gets the model only when no interactive job waits, and a sliced one yields to
interactive jobs between its slices; its items never join an interactive call. Its wait for `max_wait_s` is
counted on a clock that stops while the model serves interactive work, so that it is measured from when it could
first have run: agent-svc's crawler retries a 503 only three times, and a page should not be lost because
searches came first. Behind other background work it still expires, which tells a crawl that it asks more than
the model can do. Each priority has its own `max_pending`, so a crawl's backlog never refuses a search.

Each model call is timed, and its time goes to the speed of the kind of work it did (`speed.py`). By those speeds
the lane tells how long a new interactive job would wait (`queued_ms`): semantic-svc reports it with every
answer, so that agent-svc asks the model only when the answer can come before its deadline.
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
from semantic.errors import Busy
from semantic.kinds import PRIORITIES, BatchRecord, Depth, LaneStats, Priority, SpeedKind
from semantic.lane.heap import HeapTrimmer
from semantic.lane.speed import SpeedMeter

# The lane serves text models: an item is a text, or texts read together (a query and a passage).
Text = str | tuple[str, ...]
Work = Callable[[list[Any]], Sequence[Any]]  # items → one result per item, each independent of the others
RECENT_BATCHES = 32


@dataclass(eq=False)
class _Job:
    work: Work
    items: list[Text]
    batch_key: Hashable | None
    priority: Priority
    timed_as: SpeedKind | None
    future: asyncio.Future
    queued_at: float  # on its priority's clock
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
                 clock: Callable[[], float] = time.monotonic, heap: HeapTrimmer | None = None,
                 speed: SpeedMeter | None = None) -> None:
        """0 for `max_batch_chars` or `max_wait_s`: no limit of that kind. `max_pending` holds for each priority."""
        self._max_pending, self._max_batch, self._max_batch_chars = max_pending, max_batch, max_batch_chars
        self._max_wait_s, self._clock = max_wait_s, clock
        self._queues: dict[Priority, deque[_Job]] = {priority: deque() for priority in PRIORITIES}
        self._ready = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self._worker: asyncio.Task | None = None
        self._recent: deque[BatchRecord] = deque(maxlen=RECENT_BATCHES)
        self._heap = heap or HeapTrimmer()
        self.speed = speed or SpeedMeter()
        self._interactive_s = 0.0  # model time spent on interactive calls, which background waits do not count
        self._call_ends: float | None = None  # when the call in progress should end, by the measured speeds
        self._batches = self._sliced = self._computed = self._skipped = self._expired = 0

    async def run(self, work: Work, items: list[Text], batch_key: Hashable | None = None,
                  priority: Priority = "interactive", timed_as: SpeedKind | None = None) -> list[Any]:
        """Results of `work(items)`, possibly computed in slices together with other jobs of the same batch key
        and priority; the model calls' time counts towards the speed of `timed_as` (none: not measured)."""
        if not items:
            return []
        queue = self._queues[priority]
        if len(queue) >= self._max_pending:
            metrics.dropped("refused")
            raise Busy(f"{len(queue)} {priority} model jobs are already waiting; retry shortly")
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._work())
        job = _Job(work, items, batch_key, priority, timed_as, asyncio.get_running_loop().create_future(),
                   self._waiting_clock(priority))
        queue.append(job)
        self._ready.set()
        return await job.future

    def queued_ms(self) -> float:
        """How long a new interactive job would wait for the model, by the measured speeds: the time the waiting
        interactive jobs need and what the call in progress has left (background jobs wait behind it)."""
        running_s = max(self._call_ends - self._clock(), 0.0) if self._call_ends is not None else 0.0
        return running_s * 1000 + sum(self._estimate_ms(job.timed_as, job.items[job.taken:])
                                      for job in self._queues["interactive"])

    def stats(self) -> LaneStats:
        waiting = {priority: Depth(len(queue), sum(job.remaining for job in queue))
                   for priority, queue in self._queues.items()}
        return LaneStats(sum(d.jobs for d in waiting.values()), sum(d.items for d in waiting.values()), waiting,
                         self._batches, self._sliced, self._computed, self._skipped, self._expired,
                         list(self._recent))

    async def close(self) -> None:
        if self._worker:
            self._worker.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._drop_hopeless()
            queue = next((queue for queue in self._queues.values() if queue), None)
            if queue is None:
                if self._heap.untrimmed:  # then look again: a job may have come during the trim
                    await loop.run_in_executor(self._executor, self._heap.release)
                    continue
                self._ready.clear()
                await self._ready.wait()
                continue
            batch = self._next_batch(queue)
            items = [item for part in batch for item in part.job.items[part.start : part.stop]]
            started = self._clock()
            self._call_ends = started + sum(self._estimate_ms(part.job.timed_as,
                                                              part.job.items[part.start : part.stop])
                                            for part in batch) / 1000
            try:
                results = await loop.run_in_executor(self._executor, self._compute, batch[0].job.work, items)
            except Exception as e:  # the model's error belongs to the requests that asked
                for part in batch:
                    if not part.job.future.done():
                        part.job.future.set_exception(e)
                continue
            finally:
                self._call_ends = None
            self._record(batch, items, self._clock() - started)
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

    def _estimate_ms(self, kind: SpeedKind | None, items: Sequence[Text]) -> float:
        # work timed as no kind is another embedder's (EMBED_MODEL's beside SIMILARITY_MODEL's): an embedder's pace
        return sum(map(_chars, items)) * self.speed.speed(kind or "embed").ms_per_kchar / 1000

    def _waiting_clock(self, priority: Priority) -> float:
        """The clock a job of `priority` waits on: a background job's stands still while interactive work runs."""
        return self._clock() - (self._interactive_s if priority == "background" else 0)

    def _drop_hopeless(self) -> None:
        """No model time for a job whose caller gave up (or a slice of which failed), nor for one that waited
        too long to start."""
        for priority, queue in self._queues.items():
            now = self._waiting_clock(priority)
            for job in queue:
                waited = now - job.queued_at
                if self._max_wait_s and not job.taken and waited > self._max_wait_s and not job.future.done():
                    besides = " besides interactive work" if priority == "background" else ""
                    job.future.set_exception(Busy(f"waited {waited:.1f} s for the model{besides}, longer than "
                                                  "MAX_WAIT_S; retry shortly"))
                    self._expired += 1
                    metrics.dropped("expired")
                elif job.future.done():
                    self._skipped += 1
                    metrics.dropped("skipped")
            self._queues[priority] = deque(job for job in queue if not job.future.done())

    def _next_batch(self, queue: deque[_Job]) -> list[_Slice]:
        """The oldest job of `queue` and its other jobs of the same key, as much of each as fits in one call."""
        key = queue[0].batch_key
        batch: list[_Slice] = []
        count = chars = 0
        for job in list(queue):
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
            queue.remove(job)
            if job.remaining:
                queue.append(job)
        return batch

    def _record(self, batch: list[_Slice], items: list[Text], seconds: float) -> None:
        self._batches += 1
        self._sliced += len(batch)
        self._computed += len(items)
        if batch[0].job.priority == "interactive":
            self._interactive_s += seconds
        key = batch[0].job.batch_key
        name = "/".join(map(str, key)) if isinstance(key, tuple) else str(key)
        record = BatchRecord(name, len(batch), len(items), sum(map(_chars, items)), round(seconds * 1000, 1))
        self._recent.append(record)
        metrics.observe_batch(record)
        self._time_by_kind(batch, seconds * 1000, record.chars)

    def _time_by_kind(self, batch: list[_Slice], ms: float, chars_in_call: int) -> None:
        """The call's time to each kind of work in it, in proportion to its characters (one kind, nearly always)."""
        work: dict[SpeedKind, tuple[int, int]] = {}
        for part in batch:
            if part.job.timed_as is not None:
                chars, texts = work.get(part.job.timed_as, (0, 0))
                part_chars = sum(map(_chars, part.job.items[part.start : part.stop]))
                work[part.job.timed_as] = (chars + part_chars, texts + part.stop - part.start)
        for kind, (chars, texts) in work.items():
            self.speed.observe(kind, ms * chars / max(chars_in_call, 1), chars, texts)


def _chars(item: Text) -> int:
    return len(item) if isinstance(item, str) else sum(map(len, item))
