"""The extract jobs of every replica (REDIS_URL): background jobs on Redis (state/background/redis.py), under the
keys and the task name they have always had. An extraction whose replica dies runs again from its start (it has
nothing worth resuming)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from redis.asyncio import Redis

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.state.background import Codec, Runner
from agent.state.background.redis import Place, RedisJobs
from agent.state.extracts import EXTRACTS
from agent.state.tasks import TaskQueue


def redis_extracts(run: Runner[ExtractJob, ExtractResult], redis: Redis, tasks: TaskQueue, max_jobs: int,
                   max_running: int, ttl_s: float, max_per_owner: int) -> RedisJobs[ExtractJob, ExtractResult]:
    return RedisJobs(EXTRACTS, PLACE, run, redis, tasks, max_jobs, max_running, ttl_s, max_per_owner)


def _job_of(fields: dict[str, Any]) -> ExtractJob:
    return ExtractJob(**{**fields, "urls": tuple(fields["urls"]), "sites": tuple(fields["sites"]),
                         "warnings": tuple(fields["warnings"])})


def _result_of(fields: dict[str, Any]) -> ExtractResult:
    return ExtractResult(**{**fields, "warnings": tuple(fields["warnings"])})


PLACE = Place("wisp:extract:", "extract.run", Codec(asdict, _job_of, asdict, _result_of))
