"""The extract jobs: each runs in the background, is polled by id, and is forgotten EXTRACT_TTL_S after it started.
Two stores keep them behind the same calls (`start`, `get`, `resume`, `close`): this process's memory (memory.py)
and the replicas' Redis (redis.py, REDIS_URL); each runs a job with the `Runner` it is given (extract/jobs.py binds
extract/run.py's)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agent.core.extract_job import ExtractJob, ExtractResult

log = logging.getLogger(__name__)


PROCESSING, COMPLETED, FAILED = "processing", "completed", "failed"
Runner = Callable[[ExtractJob], Awaitable[ExtractResult]]


def failure(job_id: str, error: Exception) -> ExtractResult:
    """The result of a job that met a bug: logged, and failed with a message that points at the log."""
    log.error("extract job %s raised", job_id, exc_info=error)
    return ExtractResult(error=f"Internal error ({type(error).__name__}); the details are in agent-svc's log")


@dataclass(frozen=True)
class ExtractRecord:
    id: str
    job: ExtractJob
    owner: str | None  # the API key that started it; None when keys are off (everyone's)
    expires: float  # time.time() when it is forgotten
    status: str = PROCESSING
    result: ExtractResult | None = None
