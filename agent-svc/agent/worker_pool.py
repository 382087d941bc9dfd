"""Processes for CPU-bound work (page extraction) off the event loop, replaced if one dies."""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool


class WorkerPool:
    def __init__(self, workers: int, make: Callable[[int], Executor] | None = None) -> None:
        self._workers = workers
        self._make = make or _spawned_processes
        self._pool = self._make(workers)

    async def run(self, fn: Callable, *args: object) -> object:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._make(self._workers)
            raise

    def submit(self, fn: Callable, *args: object) -> None:
        self._pool.submit(fn, *args)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _spawned_processes(workers: int) -> Executor:
    # forking a process that runs threads (asyncio, httpx) is unsafe; spawned workers start clean
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_die_with_parent,
                               initargs=(os.getpid(),))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when the process that started it ends, however it ends (SIGKILL too):
    otherwise workers live on, orphaned, after agent-svc stops."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the request took hold
        os._exit(0)
