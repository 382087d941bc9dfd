"""Background jobs in memory, of the extractions' kind: a job runs in the background and its record moves
processing → completed | failed; records expire after their TTL; the store is bounded (finished records make room,
unfinished ones a 429), and at most max_running jobs run at once; a cancelled job is told to stop and ends with
what it has."""

import asyncio

import pytest

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.errors import JobNotFound, TooManyExtracts
from agent.state.background import COMPLETED, FAILED, PROCESSING
from agent.state.background.memory import MemoryJobs
from agent.state.extracts import EXTRACTS

JOB = ExtractJob(("https://a.test/",), (), "p", None)
DONE = ExtractResult({"ok": True})
OWNER = "key:a"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Runner:
    """Runs each job once its gate opens: a result, or the exception it was given."""

    def __init__(self, outcome: ExtractResult | Exception = DONE) -> None:
        self.outcome, self.gate, self.running, self.most = outcome, asyncio.Event(), 0, 0

    async def __call__(self, job_id: str, job: ExtractJob, cancelled) -> ExtractResult:
        self.cancelled = cancelled
        self.running += 1
        self.most = max(self.most, self.running)
        await self.gate.wait()
        self.running -= 1
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


async def settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_job_is_processing_then_completed_with_its_result() -> None:
    async def scenario() -> None:
        runner, clock = Runner(), Clock()
        jobs = MemoryJobs(EXTRACTS, runner, max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10, clock=clock)
        job_id = await jobs.start(JOB, OWNER)
        record = await jobs.get(job_id, OWNER)
        assert record.status == PROCESSING and record.expires == 1060.0
        runner.gate.set()
        await settled()
        record = await jobs.get(job_id, OWNER)
        assert record.status == COMPLETED and record.result.data == {"ok": True} and record.job == JOB
    asyncio.run(scenario())


@pytest.mark.parametrize(("outcome", "error"), [
    (ExtractResult(error="no valid JSON came out of the pages"), "no valid JSON came out of the pages"),
    (KeyError("bug"), "Internal error (KeyError); the details are in agent-svc's log"),
])
def test_a_job_that_fails_or_raises_is_failed_with_the_cause(outcome, error: str) -> None:
    async def scenario() -> None:
        runner = Runner(outcome)
        runner.gate.set()
        jobs = MemoryJobs(EXTRACTS, runner, max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10)
        job_id = await jobs.start(JOB, OWNER)
        await settled()
        record = await jobs.get(job_id, OWNER)
        assert record.status == FAILED and record.result.error == error
    asyncio.run(scenario())


def test_an_unknown_or_expired_job_is_not_found() -> None:
    async def scenario() -> None:
        clock = Clock()
        jobs = MemoryJobs(EXTRACTS, Runner(), max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10, clock=clock)
        job_id = await jobs.start(JOB, OWNER)
        with pytest.raises(JobNotFound, match="Extract job not found"):
            (await jobs.get("nope", OWNER))
        clock.now += 61
        with pytest.raises(JobNotFound):
            (await jobs.get(job_id, OWNER))
        await jobs.close()
    asyncio.run(scenario())


def test_another_clients_job_is_not_found() -> None:
    async def scenario() -> None:
        jobs = MemoryJobs(EXTRACTS, Runner(), max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10)
        job_id = await jobs.start(JOB, OWNER)
        with pytest.raises(JobNotFound, match="Extract job not found"):  # Firecrawl's answer to another team
            (await jobs.get(job_id, "key:b"))
        assert (await jobs.get(job_id, OWNER)).owner == OWNER
        await jobs.close()
    asyncio.run(scenario())


def test_finished_jobs_make_room_and_unfinished_ones_are_a_429() -> None:
    async def scenario() -> None:
        runner = Runner()
        jobs = MemoryJobs(EXTRACTS, runner, max_jobs=2, max_running=2, ttl_s=60, max_per_owner=10)
        first, second = (await jobs.start(JOB, OWNER)), (await jobs.start(JOB, OWNER))
        with pytest.raises(TooManyExtracts, match="2 extractions are unfinished"):
            (await jobs.start(JOB, OWNER))
        runner.gate.set()
        await settled()
        third = await jobs.start(JOB, OWNER)
        with pytest.raises(JobNotFound):
            (await jobs.get(first, OWNER))  # the oldest finished one made room
        assert (await jobs.get(second, OWNER)).status == COMPLETED and (await jobs.get(third, OWNER))
        await jobs.close()
    asyncio.run(scenario())


def test_one_clients_unfinished_jobs_are_capped_and_leave_room_for_others() -> None:
    async def scenario() -> None:
        runner = Runner()
        jobs = MemoryJobs(EXTRACTS, runner, max_jobs=10, max_running=2, ttl_s=60, max_per_owner=2)
        (await jobs.start(JOB, OWNER)), (await jobs.start(JOB, OWNER))
        with pytest.raises(TooManyExtracts, match="2 of your extractions are unfinished"):
            (await jobs.start(JOB, OWNER))
        assert (await jobs.get((await jobs.start(JOB, "key:b")), "key:b")).status == PROCESSING
        runner.gate.set()
        await settled()
        assert (await jobs.get((await jobs.start(JOB, OWNER)), OWNER))  # finished ones no longer count
        await jobs.close()
    asyncio.run(scenario())


def test_at_most_max_running_run_at_once_and_close_cancels_them() -> None:
    async def scenario() -> None:
        runner = Runner()
        jobs = MemoryJobs(EXTRACTS, runner, max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10)
        ids = [await jobs.start(JOB, OWNER) for _ in range(4)]
        await settled()
        assert runner.most == 2 and all([(await jobs.get(i, OWNER)).status == PROCESSING for i in ids])
        await jobs.close()
        assert runner.running == 2  # cancelled where they waited, never finished
    asyncio.run(scenario())


def test_a_cancelled_job_is_told_to_stop_and_keeps_what_it_ends_with() -> None:
    async def scenario() -> None:
        runner = Runner(ExtractResult({"partial": True}))
        jobs = MemoryJobs(EXTRACTS, runner, max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10)
        job_id = await jobs.start(JOB, OWNER)
        await settled()
        assert not runner.cancelled()
        with pytest.raises(JobNotFound):
            await jobs.cancel(job_id, "key:b")
        assert (await jobs.cancel(job_id, OWNER)).cancelled and runner.cancelled()
        runner.gate.set()
        await settled()
        record = await jobs.get(job_id, OWNER)
        assert record.status == COMPLETED and record.result.data == {"partial": True}
        assert (await jobs.cancel(job_id, OWNER)).status == COMPLETED  # a finished job stays as it ended
    asyncio.run(scenario())


def test_a_groups_jobs_are_found_for_their_owner_alone_and_no_group_finds_none() -> None:
    from agent.core.research import ResearchJob, ResearchResult
    from agent.research.jobs import RESEARCH

    async def run(job_id: str, job: ResearchJob, cancelled) -> ResearchResult:
        return ResearchResult("", (), "done")

    async def main() -> None:
        jobs = MemoryJobs(RESEARCH, run, max_jobs=10, max_running=2, ttl_s=60, max_per_owner=10)
        first = await jobs.start(ResearchJob("q", thread_id="t-1"), "a")
        await jobs.start(ResearchJob("q", thread_id="t-1"), "b")
        await jobs.start(ResearchJob("q"), "a")
        second = await jobs.start(ResearchJob("q", thread_id="t-1"), "a")
        assert [r.id for r in await jobs.related("t-1", "a")] == [first, second]
        assert await jobs.related("", "a") == []
        await jobs.close()
    asyncio.run(main())
