"""Background jobs kept in a SQLite journal: a job a restart finds unfinished runs again from its start under
its id, for its owner; a finished one is read back as it ended; an expired one is forgotten."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.state.background import COMPLETED, PROCESSING
from agent.state.background.journal import SqliteJournal
from agent.state.background.memory import MemoryJobs
from agent.state.extracts import EXTRACTS
from agent.state.extracts.redis import PLACE

JOB = ExtractJob(("https://a.test/",), (), "p", None)
CODEC = PLACE.codec


def jobs(path: Path, run, ttl_s: float = 60) -> MemoryJobs[ExtractJob, ExtractResult]:
    return MemoryJobs(EXTRACTS, run, 10, 2, ttl_s, 10, journal=SqliteJournal(str(path), CODEC))


def test_a_job_a_restart_finds_unfinished_runs_again_and_a_finished_one_is_kept(tmp_path: Path) -> None:
    path, stalled, runs = tmp_path / "jobs.sqlite", asyncio.Event(), []

    async def stalls(job_id: str, job: ExtractJob, cancelled) -> ExtractResult:
        await stalled.wait()  # never set: the process stops with the job running
        return ExtractResult()

    async def finishes(job_id: str, job: ExtractJob, cancelled) -> ExtractResult:
        runs.append(job)
        return ExtractResult({"n": len(runs)})

    async def scenario() -> None:
        before = jobs(path, stalls)
        running = await before.start(JOB, "key-a")
        await asyncio.sleep(0)  # it starts running
        await before.close()  # the restart

        after = jobs(path, finishes)
        await after.resume()
        for _ in range(100):
            if (await after.get(running, "key-a")).status != PROCESSING:
                break
            await asyncio.sleep(0.01)
        record = await after.get(running, "key-a")
        assert record.status == COMPLETED and record.result == ExtractResult({"n": 1}) and runs == [JOB]
        await after.close()

        again = jobs(path, finishes)  # a second restart: the finished job is read back, not run
        await again.resume()
        assert (await again.get(running, "key-a")).result == ExtractResult({"n": 1}) and runs == [JOB]
        await again.close()
    asyncio.run(scenario())


def test_an_expired_job_is_forgotten_by_the_restart(tmp_path: Path) -> None:
    async def finishes(job_id: str, job: ExtractJob, cancelled) -> ExtractResult:
        return ExtractResult({})

    async def scenario() -> None:
        store = jobs(tmp_path / "jobs.sqlite", finishes, ttl_s=0.01)
        await store.start(JOB, None)
        await asyncio.sleep(0.05)
        await store.close()
        journal = SqliteJournal(str(tmp_path / "jobs.sqlite"), CODEC)
        assert await journal.load() == []
        journal.close()
    asyncio.run(scenario())
