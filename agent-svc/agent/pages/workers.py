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
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from agent.errors import Degraded
from agent.pages.worker import LENGTH, frame

log = logging.getLogger(__name__)


class WorkerDied(Degraded):
    """The worker ended before it answered (killed, out of memory, or crashed on the input)."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process, kind: str) -> None:
        self.process, self.kind = process, kind
        self.rss_mb = 0.0

    async def call(self, fn: Callable, args: tuple) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(frame(pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL)))
            await self.process.stdin.drain()
            status, value, self.rss_mb = pickle.loads(await read_frame(self.process.stdout))
        except (ConnectionError, asyncio.IncompleteReadError, EOFError) as e:
            raise WorkerDied(f"the {self.kind} worker died ({type(e).__name__})") from None
        if status == "error":
            raise value
        return value


class WorkerPool:
    """`workers` processes, started when first needed, each running `warm` once when it starts.

    The pool alone starts and stops its processes, in tasks of its own; a caller only borrows an idle worker.
    A deadline that cancels a caller can therefore never cut a start short and leave its process untracked, and
    a killed worker keeps its place until it has exited: there are never more than `workers` processes.
    """

    def __init__(self, workers: int, max_rss_mb: float = 1024, warm: Callable[[], object] | None = None,
                 kind: str = "extraction") -> None:
        self._size, self._max_rss_mb, self._warm = workers, max_rss_mb, warm
        self._kind = kind  # what its workers do, for the messages: extraction, schema
        # a worker ready for a task, or why one could not start (so that a caller waiting for it hears at once)
        self._idle: asyncio.Queue[_Worker | WorkerDied] = asyncio.Queue()
        self._places = 0  # workers idle, busy, starting, or killed and not yet reaped
        self._starting: set[asyncio.Task] = set()
        self._exiting: set[asyncio.Task] = set()
        self._closed = False
        self._failed = 0  # starts that failed, for `start` to say so
        self._waiting = 0  # tasks waiting for a worker

    @property
    def size(self) -> int:
        return self._size

    async def start(self) -> None:
        """Start every worker now (and warm it), so that the first searches do not pay for it."""
        self._fill()
        await asyncio.gather(*self._starting)
        if self._failed:
            raise WorkerDied(f"the {self._kind} workers could not start (the log says why)")

    async def run(self, fn: Callable, *args: object) -> Any:
        """`fn(*args)` in a worker; cancelling this kills the worker. Raises WorkerDied, or what `fn` raised."""
        self._fill()
        self._waiting += 1
        try:
            worker = await self._idle.get()
        finally:
            self._waiting -= 1
        if isinstance(worker, WorkerDied):
            raise worker
        try:
            result = await worker.call(fn, args)
        except WorkerDied:
            self._stop(worker)
            raise
        except Exception:  # what `fn` raised: the worker answered, and can go on
            self._keep(worker)
            raise
        except BaseException:  # cancelled mid-task: the worker is still busy with it
            self._stop(worker)
            raise
        self._keep(worker)
        return result

    async def close(self) -> None:
        """Stop every worker and wait until each has exited (workers busy now stop when they answer)."""
        self._closed = True
        while not self._idle.empty():
            if isinstance(worker := self._idle.get_nowait(), _Worker):
                self._stop(worker)
        for starting in self._starting:
            starting.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        await asyncio.gather(*self._exiting)

    def _fill(self) -> None:
        """Start a worker in every free place."""
        while not self._closed and self._places < self._size:
            self._places += 1
            self._track(self._starting, self._start_one())

    def _keep(self, worker: _Worker) -> None:
        if self._closed or worker.rss_mb > self._max_rss_mb:
            if not self._closed:
                log.info("retiring an %s worker at %.0f MiB", self._kind, worker.rss_mb)
            self._stop(worker)
        else:
            self._idle.put_nowait(worker)

    def _stop(self, worker: _Worker, refill: bool = True) -> None:
        """Kill the worker; its place is freed once it has exited, and then refilled if `refill`."""
        if worker.process.returncode is None:
            worker.process.kill()
        self._track(self._exiting, self._reap(worker, refill))

    async def _reap(self, worker: _Worker, refill: bool) -> None:
        try:  # reads what the worker left unread: a reader paused on a full buffer never sees the end of file,
            await worker.process.communicate()  # and then `wait` never returns
        finally:
            self._places -= 1
            if refill or self._waiting:  # a task waiting would otherwise wait for its deadline
                self._fill()

    def _track(self, tasks: set[asyncio.Task], step: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(step)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _start_one(self) -> None:
        try:  # cancelled (by close) or failed here, asyncio kills and reaps the process it may have started
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agent.pages.worker", str(os.getpid()), self._kind, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE)
        except BaseException as e:
            self._places -= 1
            self._failed_to_start(e)
            return
        worker = _Worker(process, self._kind)
        try:
            if self._warm is not None:
                await worker.call(self._warm, ())
        except BaseException as e:
            self._stop(worker, refill=False)  # it would fail again: a task waiting, or the next run, retries
            self._failed_to_start(e)
            return
        if self._closed:
            self._stop(worker)
        else:
            self._idle.put_nowait(worker)

    def _failed_to_start(self, e: BaseException) -> None:
        """Logged, and handed to the task waiting for a worker, not raised: nobody awaits the task that started
        it (a cancellation is raised: close is stopping it)."""
        if not isinstance(e, Exception):
            raise e
        log.error("a %s worker failed to start: %s", self._kind, e, exc_info=e)
        self._failed += 1
        self._idle.put_nowait(WorkerDied(f"a {self._kind} worker failed to start ({type(e).__name__}: {e})"))


async def read_frame(stream: asyncio.StreamReader) -> bytes:
    (length,) = LENGTH.unpack(await stream.readexactly(LENGTH.size))
    return await stream.readexactly(length)
