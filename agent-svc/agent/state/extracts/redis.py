"""The extract jobs of every replica (REDIS_URL): the records in Redis, expiring EXTRACT_TTL_S after their start,
and each extraction a task of the shared queue, which any replica runs (EXTRACT_MAX_RUNNING at once on each).
An extraction whose replica dies is handed over after its lease and runs again from its start (it has nothing
worth resuming); its result is recorded once, by whichever run finishes first.

The same bounds as memory.py's, over all replicas: EXTRACT_MAX_JOBS unfinished extractions, and
EXTRACT_MAX_JOBS_PER_KEY of one client's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import asdict
from typing import Any

from redis.asyncio import Redis
from wisp_obs.requests import request_id

from agent.core.extract_job import ExtractJob, ExtractResult
from agent.errors import JobNotFound, SharedStateUnavailable, TooManyExtracts
from agent.state.background import COMPLETED, FAILED, PROCESSING, Runner, crashed
from agent.state.extracts import EXTRACTS, ExtractRecord
from agent.state.tasks import TaskQueue, repair_every
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
TASK = "extract.run"
PREFIX = "wisp:extract:"
UNFINISHED = f"{PREFIX}unfinished"  # id → when its record expires
MAX_ATTEMPTS = 3
REPAIR_S = 30.0

# KEYS: the record, the unfinished set; ARGV: id, status, result. Records a result once.
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'processing' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'result', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""


class RedisExtractJobs:
    def __init__(self, run: Runner[ExtractJob, ExtractResult], redis: Redis, tasks: TaskQueue, max_jobs: int,
                 max_running: int, ttl_s: float, max_per_owner: int) -> None:
        self._run, self._redis, self._tasks = run, redis, tasks
        self._max_jobs, self._ttl_s, self._max_per_owner = max_jobs, ttl_s, max_per_owner
        self._running = asyncio.Semaphore(max_running)
        self._finish = redis.register_script(_FINISH)
        self._repairing: asyncio.Task | None = None
        tasks.register(TASK, self._extract)

    async def start(self, job: ExtractJob, owner: str | None) -> str:
        """The id of `owner`'s new job, recorded; its task is queued, or left to the repair when that fails (a
        503 then would make the client start a second job)."""
        job_id = request_id()
        expires = time.time() + self._ttl_s
        try:
            await self._make_room(owner)
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.hset(_record(job_id), mapping={"job": json.dumps(asdict(job)), "owner": owner or "",
                                                    "expires": expires, "status": PROCESSING, "result": ""})
                pipe.expireat(_record(job_id), int(expires) + 1)
                pipe.zadd(UNFINISHED, {job_id: expires})
                await pipe.execute()
        except UNREACHABLE as e:
            raise SharedStateUnavailable(f"the extract jobs (Redis) cannot be reached: {e}") from e
        try:
            await self._tasks.enqueue(TASK, job_id, job_id=job_id)
        except UNREACHABLE as e:
            log.warning("could not queue extraction %s (%s): the next repair will", job_id, e)
        return job_id

    async def get(self, job_id: str, owner: str | None) -> ExtractRecord:
        try:
            fields = await self._redis.hgetall(_record(job_id))
        except UNREACHABLE as e:
            raise SharedStateUnavailable(f"the extract jobs (Redis) cannot be reached: {e}") from e
        record = _record_of(job_id, {k.decode(): v.decode() for k, v in fields.items()})
        if record is None or record.owner != owner or record.expires <= time.time():
            raise JobNotFound("Extract job not found")
        return record

    async def resume(self) -> None:
        """Every REPAIR_S, one replica queues again the unfinished extractions whose task was lost (a replica
        that died between writing the record and queueing the task)."""
        self._repairing = asyncio.create_task(repair_every(self._redis, "extractions", REPAIR_S, self.repair))

    async def close(self) -> None:
        """Stop repairing; the queue's worker hands running extractions back when it stops."""
        if self._repairing is not None:
            self._repairing.cancel()
            await asyncio.gather(self._repairing, return_exceptions=True)

    async def repair(self) -> int:
        """Queue a task for every unfinished extraction that has none; the number queued."""
        queued = 0
        for member in await self._redis.zrangebyscore(UNFINISHED, time.time(), "+inf"):
            queued += await self._tasks.enqueue(TASK, member.decode(), job_id=member.decode())
        return queued

    async def _extract(self, job_id: str) -> None:
        """The task: run the extraction once more unless it has a result, and record the result once; one whose
        replicas died MAX_ATTEMPTS times fails (it may be what kills them)."""
        fields = {k.decode(): v.decode() for k, v in (await self._redis.hgetall(_record(job_id))).items()}
        record = _record_of(job_id, fields)
        if record is None or record.status != PROCESSING:
            return
        if await self._redis.hincrby(_record(job_id), "attempts", 1) > MAX_ATTEMPTS:
            result = ExtractResult(warnings=record.job.warnings, error=f"the replicas running it stopped "
                                                                        f"{MAX_ATTEMPTS} times")
        else:
            async with self._running:
                try:
                    result = await self._run(record.job, _never)
                except Exception as e:  # a bug fails the job, never leaves it processing
                    result = crashed(EXTRACTS, job_id, e)
        await self._finish(keys=[_record(job_id), UNFINISHED],
                           args=[job_id, FAILED if result.error else COMPLETED, json.dumps(asdict(result))])

    async def _make_room(self, owner: str | None) -> None:
        await self._redis.zremrangebyscore(UNFINISHED, "-inf", time.time())
        unfinished = [member.decode() for member in await self._redis.zrange(UNFINISHED, 0, -1)]
        if owner is not None and len(unfinished) >= self._max_per_owner:
            owners = await asyncio.gather(*(self._redis.hget(_record(i), "owner") for i in unfinished))
            if sum(o is not None and o.decode() == owner for o in owners) >= self._max_per_owner:
                raise TooManyExtracts(f"{self._max_per_owner} of your extractions are unfinished "
                                      "(EXTRACT_MAX_JOBS_PER_KEY): retry when one has finished")
        if len(unfinished) >= self._max_jobs:
            raise TooManyExtracts(f"{self._max_jobs} extractions are unfinished (EXTRACT_MAX_JOBS): retry when one "
                                  "has finished")


def _never() -> bool:
    """An extraction is not cancelled: it runs to its end or its timeout."""
    return False


def _record(job_id: str) -> str:
    return f"{PREFIX}{job_id}"


def _record_of(job_id: str, fields: dict[str, str]) -> ExtractRecord | None:
    if "job" not in fields:
        return None
    result = json.loads(fields["result"]) if fields.get("result") else None
    return ExtractRecord(job_id, _job_of(json.loads(fields["job"])), fields["owner"] or None,
                         float(fields["expires"]), fields["status"], _result_of(result) if result else None)


def _job_of(fields: dict[str, Any]) -> ExtractJob:
    return ExtractJob(**{**fields, "urls": tuple(fields["urls"]), "sites": tuple(fields["sites"]),
                         "warnings": tuple(fields["warnings"])})


def _result_of(fields: dict[str, Any]) -> ExtractResult:
    return ExtractResult(**{**fields, "warnings": tuple(fields["warnings"])})
