"""The extraction worker pool with real worker processes: results, errors, and workers killed or replaced."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from agent.worker_pool import WorkerDied, WorkerPool


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def gone(pid: int, within_s: float = 5) -> bool:
    deadline = time.monotonic() + within_s
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return not alive(pid)


def test_runs_in_another_process_and_reuses_it() -> None:
    async def main() -> None:
        pool = WorkerPool(1)
        first = await pool.run(os.getpid)
        assert first != os.getpid() and await pool.run(os.getpid) == first
        assert await pool.run(divmod, 7, 2) == (3, 1)
        await pool.close()
        assert not alive(first)

    asyncio.run(main())


def test_an_exception_in_the_task_reaches_the_caller_and_the_worker_stays() -> None:
    async def main() -> None:
        pool = WorkerPool(1)
        pid = await pool.run(os.getpid)
        with pytest.raises(ValueError, match="invalid literal"):
            await pool.run(int, "not a number")
        assert await pool.run(os.getpid) == pid
        await pool.close()

    asyncio.run(main())


def test_a_task_given_up_on_kills_its_worker_at_once() -> None:
    async def main() -> None:
        pool = WorkerPool(1)
        pid = await pool.run(os.getpid)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await pool.run(time.sleep, 30)
        assert time.monotonic() - started < 2 and await gone(pid)
        assert await pool.run(os.getpid) not in (pid, os.getpid())  # a fresh worker took its place
        await pool.close()

    asyncio.run(main())


def test_a_worker_that_dies_mid_task_is_worker_died_and_replaced() -> None:
    async def main() -> None:
        pool = WorkerPool(1)
        with pytest.raises(WorkerDied):
            await pool.run(os._exit, 3)
        assert await pool.run(divmod, 9, 4) == (2, 1)
        await pool.close()

    asyncio.run(main())


def test_a_worker_past_its_memory_bound_is_retired_after_its_task() -> None:
    async def main() -> None:
        pool = WorkerPool(1, max_rss_mb=1)  # every Python process is larger: each task gets a new worker
        pid = await pool.run(os.getpid)
        assert await gone(pid)
        assert await pool.run(os.getpid) != pid
        await pool.close()

    asyncio.run(main())


def test_started_workers_are_warm_and_run_tasks_side_by_side() -> None:
    async def main() -> None:
        pool = WorkerPool(2, warm=time.time)
        await pool.start()
        started = time.monotonic()
        await asyncio.gather(pool.run(time.sleep, 0.5), pool.run(time.sleep, 0.5))
        assert time.monotonic() - started < 0.9
        await pool.close()

    asyncio.run(main())
