"""All model work on one thread, off the event loop, behind a bounded queue that batches across requests.

Two model calls at once on a 2-core machine only fight over the cores, so one thread runs them in turn.
Jobs that share a batch key (embedding passages, say) are merged into one model call up to `max_batch`
texts, which is where concurrent requests gain throughput. Past `max_pending` waiting jobs, a request is
refused at once (503) instead of waiting without bound, so p95 cannot explode under load.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from semantic.errors import NotReady


class Busy(NotReady):
    """The queue is full; the client should retry later (503)."""


@dataclass
class _Job:
    work: Callable[[list[Any]], Sequence[Any]]  # items → one result per item
    items: list[Any]
    batch_key: Hashable | None
    future: asyncio.Future


class ModelLane:
    def __init__(self, max_pending: int, max_batch: int) -> None:
        self._max_pending, self._max_batch = max_pending, max_batch
        self._jobs: deque[_Job] = deque()
        self._ready = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self._worker: asyncio.Task | None = None

    async def run(self, work: Callable[[list[Any]], Sequence[Any]], items: list[Any],
                  batch_key: Hashable | None = None) -> list[Any]:
        """Results of `work(items)`, possibly computed together with other jobs of the same batch key."""
        if len(self._jobs) >= self._max_pending:
            raise Busy(f"{len(self._jobs)} model jobs are already waiting; retry shortly")
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._work())
        job = _Job(work, items, batch_key, asyncio.get_running_loop().create_future())
        self._jobs.append(job)
        self._ready.set()
        return await job.future

    async def close(self) -> None:
        if self._worker:
            self._worker.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._jobs:
                self._ready.clear()
                await self._ready.wait()
                continue
            batch = self._next_batch()
            if not batch:
                continue
            items = [item for job in batch for item in job.items]
            try:
                results = await loop.run_in_executor(self._executor, batch[0].work, items)
            except Exception as e:  # the model's error belongs to the requests that asked
                for job in batch:
                    if not job.future.done():
                        job.future.set_exception(e)
                continue
            offset = 0
            for job in batch:
                if not job.future.done():
                    job.future.set_result(list(results[offset : offset + len(job.items)]))
                offset += len(job.items)

    def _next_batch(self) -> list[_Job]:
        while self._jobs and self._jobs[0].future.done():  # its caller gave up: no model time for it
            self._jobs.popleft()
        if not self._jobs:
            return []
        batch = [self._jobs.popleft()]
        key, size = batch[0].batch_key, len(batch[0].items)
        while key is not None and self._jobs and self._jobs[0].batch_key == key \
                and size + len(self._jobs[0].items) <= self._max_batch:
            size += len(self._jobs[0].items)
            batch.append(self._jobs.popleft())
        return batch
