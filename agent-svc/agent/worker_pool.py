"""Processes for CPU-bound work (page extraction) off the event loop: each task has one worker to itself, a task
given up on kills its worker, and a worker that died or grew too large is replaced.

A hostile page can keep trafilatura busy for a minute and grow a worker past 1 GB (5 MB of tiny paragraphs);
a process pool cannot stop a running task, so the deadline would hold only for the request that gave up, and
the memory would stay. Here cancelling `run` (a deadline) kills that worker at once, and a worker whose resident
memory passed `max_rss_mb` after a task is retired, which gives its memory back.

Workers are plain subprocesses speaking length-prefixed pickles on stdin/stdout (no multiprocessing machinery,
so no resource tracker to outlive agent-svc); each asks Linux to kill it when agent-svc ends, however it ends.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import struct
import sys
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
_LENGTH = struct.Struct("!Q")


class WorkerDied(Exception):
    """The worker ended before it answered (killed, out of memory, or crashed on the input)."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.rss_mb = 0.0

    async def call(self, fn: Callable, args: tuple) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(frame(pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL)))
            await self.process.stdin.drain()
            status, value, self.rss_mb = pickle.loads(await read_frame(self.process.stdout))
        except (ConnectionError, asyncio.IncompleteReadError, EOFError) as e:
            raise WorkerDied(f"the extraction worker died ({type(e).__name__})") from None
        if status == "error":
            raise value
        return value


class WorkerPool:
    """`workers` processes, started lazily, each running `warm` once when it starts."""

    def __init__(self, workers: int, max_rss_mb: float = 1024, warm: Callable[[], object] | None = None) -> None:
        self._size, self._max_rss_mb, self._warm = workers, max_rss_mb, warm
        self._idle: list[_Worker] = []
        self._slots: asyncio.Semaphore | None = None
        self._exiting: set[asyncio.Task] = set()  # killed workers being reaped
        self._closed = False

    async def start(self) -> None:
        """Start every worker now (and warm it), so that the first searches do not pay for it."""
        self._idle += await asyncio.gather(*(self._spawn() for _ in range(self._size - len(self._idle))))

    async def run(self, fn: Callable, *args: object) -> Any:
        """`fn(*args)` in a worker; cancelling this kills the worker. Raises WorkerDied, or what `fn` raised."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._size)
        async with self._slots:
            worker = self._idle.pop() if self._idle else await self._spawn()
            try:
                result = await worker.call(fn, args)
            except BaseException as e:
                if not isinstance(e, Exception) or isinstance(e, WorkerDied):  # cancelled mid-task, or dead
                    self._retire(worker)
                    raise
                self._keep(worker)
                raise
            self._keep(worker)
            return result

    async def close(self) -> None:
        """Stop every worker and wait until each has exited."""
        self._closed = True
        for worker in self._idle:
            self._retire(worker)
        self._idle.clear()
        await asyncio.gather(*self._exiting)

    def _keep(self, worker: _Worker) -> None:
        if self._closed or worker.rss_mb > self._max_rss_mb:
            if not self._closed:
                log.info("retiring an extraction worker at %.0f MiB", worker.rss_mb)
            self._retire(worker)
        else:
            self._idle.append(worker)

    def _retire(self, worker: _Worker) -> None:
        if worker.process.returncode is None:
            worker.process.kill()
        exited = asyncio.create_task(worker.process.wait())
        self._exiting.add(exited)
        exited.add_done_callback(self._exiting.discard)

    async def _spawn(self) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent.worker", str(os.getpid()), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE)
        worker = _Worker(process)
        if self._warm is not None:
            await worker.call(self._warm, ())
        return worker


def frame(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload


async def read_frame(stream: asyncio.StreamReader) -> bytes:
    (length,) = _LENGTH.unpack(await stream.readexactly(_LENGTH.size))
    return await stream.readexactly(length)
