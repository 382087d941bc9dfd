"""Which store keeps the extract jobs (state/extracts): this process's memory, or with REDIS_URL the replicas'
Redis, each running a job with extract/run.py on this process's services."""

from __future__ import annotations

from agent.extract.run import run_extract
from agent.services import Services
from agent.state.extracts.memory import ExtractJobs
from agent.state.extracts.redis import RedisExtractJobs
from agent.state.shared import Shared


def extract_jobs(services: Services) -> ExtractJobs:
    """The process's extract jobs, running on its services, bounded as the settings say."""
    settings = services.settings
    return ExtractJobs(lambda job: run_extract(job, services), settings.extract_max_jobs,
                       settings.extract_max_running, settings.extract_ttl_s, settings.extract_max_jobs_per_key)


def redis_extract_jobs(services: Services, shared: Shared) -> RedisExtractJobs:
    """The replicas' extract jobs, running on this process's services when this replica takes one."""
    settings = services.settings
    return RedisExtractJobs(lambda job: run_extract(job, services), shared.redis, shared.tasks,
                            settings.extract_max_jobs, settings.extract_max_running, settings.extract_ttl_s,
                            settings.extract_max_jobs_per_key)
