"""Which store keeps the extract jobs: this process's memory (state/background), or with REDIS_URL the replicas'
Redis (state/extracts), each running a job with extract/run.py on this process's extractor."""

from __future__ import annotations

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.extract.run import Extractor, run_extract
from agent.state.background.memory import MemoryJobs
from agent.state.background.redis import RedisJobs
from agent.state.extracts import EXTRACTS
from agent.state.extracts.redis import redis_extracts
from agent.state.shared import Shared


def extract_jobs(extractor: Extractor) -> MemoryJobs[ExtractJob, ExtractResult]:
    """The process's extract jobs, bounded as EXTRACT_MAX_JOBS, EXTRACT_MAX_RUNNING, EXTRACT_TTL_S and
    EXTRACT_MAX_JOBS_PER_KEY say."""
    settings = extractor.settings
    return MemoryJobs(EXTRACTS, lambda job, cancelled: run_extract(job, extractor), settings.extract_max_jobs,
                      settings.extract_max_running, settings.extract_ttl_s, settings.extract_max_jobs_per_key)


def redis_extract_jobs(extractor: Extractor, shared: Shared) -> RedisJobs[ExtractJob, ExtractResult]:
    """The replicas' extract jobs, running on this process's extractor when this replica takes one."""
    settings = extractor.settings
    return redis_extracts(lambda job, cancelled: run_extract(job, extractor), shared.redis, shared.tasks,
                          settings.extract_max_jobs, settings.extract_max_running, settings.extract_ttl_s,
                          settings.extract_max_jobs_per_key)
