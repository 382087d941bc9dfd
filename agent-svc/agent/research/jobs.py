"""Which store keeps the research jobs: this process's memory (state/background), each job run by loop.py on this
process's researcher. A job cut short (the deadline, a cancel, maxCredits) or that noted nothing is failed, with
what it has as its partial result."""

from __future__ import annotations

from agent.core.research import ERROR, ResearchJob, ResearchResult
from agent.errors import TooManyResearchJobs
from agent.research.loop import Researcher, run_research
from agent.state.background import Kind
from agent.state.background.memory import MemoryJobs

RESEARCH: Kind[ResearchResult] = Kind(
    "research job", "RESEARCH", "Agent job not found", TooManyResearchJobs,
    failed=lambda result: result.cut_short or not result.sources,
    crashed=lambda message: ResearchResult("", (), ERROR, error=message))


def research_jobs(researcher: Researcher) -> MemoryJobs[ResearchJob, ResearchResult]:
    """The process's research jobs, bounded as RESEARCH_MAX_JOBS, RESEARCH_MAX_RUNNING, RESEARCH_TTL_S and
    RESEARCH_MAX_JOBS_PER_KEY say."""
    settings = researcher.settings
    return MemoryJobs(RESEARCH, lambda job, cancelled: run_research(job, researcher, cancelled),
                      settings.research_max_jobs, settings.research_max_running, settings.research_ttl_s,
                      settings.research_max_jobs_per_key)
