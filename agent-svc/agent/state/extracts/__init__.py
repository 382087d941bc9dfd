"""The extract jobs: background jobs (state/background) polled by id and forgotten EXTRACT_TTL_S after they
started. Two stores keep them behind the same calls (`start`, `get`, `resume`, `close`): this process's memory
(background/memory.py) and the replicas' Redis (redis.py, REDIS_URL); each runs a job with the runner it is given
(extract/jobs.py binds extract/run.py's)."""

from __future__ import annotations

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.errors import TooManyExtracts
from agent.state.background import Kind, Record

ExtractRecord = Record[ExtractJob, ExtractResult]
EXTRACTS: Kind[ExtractResult] = Kind("extraction", "EXTRACT", "Extract job not found", TooManyExtracts,
                                     failed=lambda result: result.error is not None,
                                     crashed=lambda message: ExtractResult(error=message))
