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

ExtractJobs = MemoryJobs[ExtractJob, ExtractResult] | RedisJobs[ExtractJob, ExtractResult]


def extract_jobs(extractor: Extractor, shared: Shared | None) -> ExtractJobs:
    """The extract jobs, bounded as EXTRACT_MAX_JOBS, EXTRACT_MAX_RUNNING, EXTRACT_TTL_S and
    EXTRACT_MAX_JOBS_PER_KEY say: this process's, or with `shared` every replica's, running on this process's
    extractor when this replica takes one."""
    settings = extractor.settings
    bounds = (settings.extract_max_jobs, settings.extract_max_running, settings.extract_ttl_s,
              settings.extract_max_jobs_per_key)

    async def run(job_id: str, job: ExtractJob, cancelled: object) -> ExtractResult:
        return await run_extract(job, extractor)  # an extraction runs to its end or its timeout

    if shared is None:
        return MemoryJobs(EXTRACTS, run, *bounds)
    return redis_extracts(run, shared.redis, shared.tasks, *bounds)
