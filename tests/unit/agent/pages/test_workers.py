"""The extraction worker pool with real worker processes: results, errors, and workers killed or replaced."""

from __future__ import annotations

import asyncio
import functools
import os
import time
from pathlib import Path

import pytest

from agent.pages.workers import WorkerDied, WorkerPool


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def gone(pid: int, within_s: float = 20) -> bool:
    """Whether the process ends within `within_s`: a bound for a hang, loose enough for a loaded machine."""
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
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await pool.run(time.sleep, 30)
        assert await gone(pid)  # within 20 s: a worker left to finish its task would live 30
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


def test_a_worker_killed_with_output_unread_is_reaped_and_replaced() -> None:
    """Output nobody reads fills the pipe's reader, which stops reading: then the kill's end of file went unseen,
    and the worker's place was never freed (a deadline that gave up on a large page did this)."""
    async def main() -> None:
        pool = WorkerPool(1)
        junk = "import os, threading; threading.Timer(0.1, os.write, (1, bytes(1 << 20))).start()"
        await pool.run(exec, junk)  # the worker answers, then writes 1 MiB nobody asked for
        await asyncio.sleep(0.5)  # for the junk to arrive; what follows does not depend on when
        with pytest.raises(WorkerDied):  # its zeros read as an empty frame
            await pool.run(divmod, 9, 4)
        async with asyncio.timeout(30):  # a guard: the bug this catches is a wait without end
            assert await pool.run(divmod, 9, 4) == (2, 1)
        await pool.close()
        assert children() == 0

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
        # each reports its process and when its 2 s nap began and ended: the naps overlap, on any machine
        nap = ("(__import__('os').getpid(), __import__('time').time(), __import__('time').sleep(2), "
               "__import__('time').time())")
        (first, began_1, _, ended_1), (second, began_2, _, ended_2) = await asyncio.gather(
            pool.run(eval, nap), pool.run(eval, nap))
        assert first != second and max(began_1, began_2) < min(ended_1, ended_2)
        await pool.close()

    asyncio.run(main())


def children() -> int:
    """This process's extraction workers, zombies included: a killed worker not yet reaped still holds its place.
    (Only workers: in a whole run, the integration tests' services are this process's children too.)"""
    count = 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            state, parent = (proc / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            command = (proc / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue  # it ended while we looked
        count += int(parent) == os.getpid() and (state == "Z" or b"agent.pages.worker" in command)
    return count


async def steps(n: int, size: int) -> None:
    """Let the event loop run `n` times, checking at each that the pool holds no more processes than its size."""
    for _ in range(n):
        await asyncio.sleep(0)
        assert children() <= size


@pytest.mark.parametrize("step", range(0, 40, 3))
def test_a_caller_cancelled_while_its_worker_starts_leaves_no_process(step: int) -> None:
    async def main() -> None:
        pool = WorkerPool(1, warm=functools.partial(time.sleep, 30))  # a warm-up that never ends here
        task = asyncio.create_task(pool.run(os.getpid))
        await steps(step, 1)
        task.cancel()
        await steps(10, 1)
        await pool.close()  # cancels the start, wherever it is: spawning or warming up
        assert children() == 0

    asyncio.run(main())


@pytest.mark.parametrize("step", range(0, 40, 3))
def test_a_caller_cancelled_at_any_point_of_its_call_leaves_only_the_pool(step: int) -> None:
    async def main() -> None:
        pool = WorkerPool(1, warm=time.time)
        task = asyncio.create_task(pool.run(time.sleep, 30))
        await steps(step, 1)
        task.cancel()
        await steps(10, 1)
        assert await pool.run(divmod, 9, 4) == (2, 1)  # a worker killed mid-call was replaced
        assert children() == 1
        await pool.close()
        assert children() == 0

    asyncio.run(main())


def test_deadlines_killing_many_tasks_never_grow_the_pool() -> None:
    async def give_up(pool: WorkerPool, after_steps: int) -> None:
        task = asyncio.create_task(pool.run(time.sleep, 30))
        for _ in range(after_steps):
            await asyncio.sleep(0)
        task.cancel()

    async def main() -> None:
        pool = WorkerPool(2, warm=time.time)
        await pool.start()
        cancelling = asyncio.gather(*(give_up(pool, n) for n in range(0, 200, 5)))
        deadline = time.monotonic() + 60  # each caller gives up within 200 steps; the bound only stops a hang
        while not cancelling.done():
            assert time.monotonic() < deadline, "the cancelled callers did not all end within 60 s"
            await steps(1, 2)
        assert sorted(await asyncio.gather(pool.run(os.getpid), pool.run(os.getpid))) != [os.getpid()] * 2
        assert children() == 2
        await pool.close()
        assert children() == 0

    asyncio.run(main())


def test_a_worker_that_cannot_warm_up_is_logged_and_tried_again_on_the_next_task(
        caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        pool = WorkerPool(1, warm=functools.partial(int, "not a number"))
        with pytest.raises(WorkerDied, match="could not start"):
            await pool.start()
        assert "failed to start" in caplog.text
        with pytest.raises(WorkerDied, match="failed to start"):  # at once: start's failure, then the retry's
            await pool.run(os.getpid)
        with pytest.raises(WorkerDied, match=r"failed to start \(ValueError"):
            async with asyncio.timeout(30):  # only stops a hang: the retried start fails within a second
                await pool.run(os.getpid)
        await pool.close()
        assert children() == 0

    asyncio.run(main())
