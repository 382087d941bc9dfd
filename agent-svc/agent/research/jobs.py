"""Which store keeps the research jobs: this process's memory, or with REDIS_URL the replicas' Redis (both
state/background), each job run by loop.py on the researcher of the replica that takes it. A job cut short (the
deadline, a cancel, maxCredits) or that noted nothing is failed, with what it has as its partial result. A job whose
replica dies runs again from its start on another; without Redis, the jobs a restart finds unfinished in
RESEARCH_DB run again from their start."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from agent.core.research import ERROR, ResearchJob, ResearchResult, ResearchSource, Step
from agent.core.webhook import Webhook
from agent.errors import TooManyResearchJobs
from agent.research.events import JobEvents
from agent.research.loop import Researcher, run_research
from agent.state.background import Codec, Kind
from agent.state.background.journal import SqliteJournal
from agent.state.background.memory import MemoryJobs
from agent.state.background.redis import Place, RedisJobs
from agent.state.shared import Shared

ResearchJobs = MemoryJobs[ResearchJob, ResearchResult] | RedisJobs[ResearchJob, ResearchResult]
RESEARCH: Kind[ResearchResult] = Kind(
    "research job", "RESEARCH", "Agent job not found", TooManyResearchJobs,
    failed=lambda result: result.cut_short or not result.sources or result.error is not None,
    crashed=lambda message: ResearchResult("", (), ERROR, error=message),
    group_of=lambda job: job.thread_id)


def research_jobs(researcher: Researcher, shared: Shared | None) -> ResearchJobs:
    """The research jobs, bounded as RESEARCH_MAX_JOBS, RESEARCH_MAX_RUNNING, RESEARCH_TTL_S and
    RESEARCH_MAX_JOBS_PER_KEY say: this process's, or with `shared` every replica's."""
    settings = researcher.settings
    bounds = (settings.research_max_jobs, settings.research_max_running, settings.research_ttl_s,
              settings.research_max_jobs_per_key)

    async def run(job_id: str, job: ResearchJob, cancelled: Callable[[], bool]) -> ResearchResult:
        async with JobEvents(researcher.webhooks, job.webhook, job_id) as events:
            result = await run_research(job, researcher, cancelled, on_step=events.step)
            events.ended(result, RESEARCH.failed(result), result.data if job.schema is not None else result.text)
        return result

    if shared is None:
        return MemoryJobs(RESEARCH, run, *bounds, journal=SqliteJournal(settings.research_db, PLACE.codec))
    return RedisJobs(RESEARCH, PLACE, run, shared.redis, shared.tasks, *bounds)


def _job_of(fields: dict[str, Any]) -> ResearchJob:
    webhook = fields.get("webhook")
    return ResearchJob(**{**fields, "urls": tuple(fields["urls"]),
                          "history": tuple(tuple(turn) for turn in fields.get("history", ())),
                          "webhook": Webhook(**{**webhook, "events": tuple(webhook["events"])}) if webhook else None})


def _result_of(fields: dict[str, Any]) -> ResearchResult:
    return ResearchResult(**{**fields, "sources": tuple(ResearchSource(**s) for s in fields["sources"]),
                             "claims": tuple(fields["claims"]), "warnings": tuple(fields["warnings"]),
                             "steps": tuple(Step(**{**s, "urls": tuple(s.get("urls", ()))}) for s in fields["steps"])})


PLACE = Place("wisp:research:", "research.run", Codec(asdict, _job_of, asdict, _result_of))
