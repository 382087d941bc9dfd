"""Background jobs of one kind on every replica (REDIS_URL): the records in Redis, expiring their TTL after their
start, and each job a task of the shared queue, which any replica runs (`max_running` at once on each). A job whose
replica dies is handed over after its lease and runs again from its start; its result is recorded once, by
whichever run finishes first. A cancel is recorded on the job, and the replica running it sees it within
CANCEL_POLL_S.

The same bounds as memory.py's, over all replicas: `max_jobs` unfinished jobs, and `max_per_owner` of one client's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Generic

from redis.asyncio import Redis
from wisp_obs.requests import request_id

from agent.errors import JobNotFound, SharedStateUnavailable
from agent.state.background import COMPLETED, FAILED, PROCESSING, Codec, J, Kind, R, Record, Runner, crashed
from agent.state.tasks import TaskQueue, repair_every
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
MAX_ATTEMPTS = 3
REPAIR_S = 30.0
CANCEL_POLL_S = 1.0

# KEYS: the record, the unfinished set; ARGV: id, status, result. Records a result once.
_FINISH = """
if redis.call('HGET', KEYS[1], 'status') ~= 'processing' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'result', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""


@dataclass(frozen=True)
class Place(Generic[J, R]):
    """Where a kind lives in Redis and on the queue, and how it is kept there."""

    prefix: str  # "wisp:extract:": its records' keys, and its unfinished set
    task: str  # the queue's task name
    codec: Codec[J, R]


class RedisJobs(Generic[J, R]):
    def __init__(self, kind: Kind[R], place: Place[J, R], run: Runner[J, R], redis: Redis, tasks: TaskQueue,
                 max_jobs: int, max_running: int, ttl_s: float, max_per_owner: int) -> None:
        self._kind, self._place, self._run, self._redis, self._tasks = kind, place, run, redis, tasks
        self._max_jobs, self._ttl_s, self._max_per_owner = max_jobs, ttl_s, max_per_owner
        self._running = asyncio.Semaphore(max_running)
        self._finish = redis.register_script(_FINISH)
        self._repairing: asyncio.Task | None = None
        self._unfinished = f"{place.prefix}unfinished"  # id → when its record expires
        tasks.register(place.task, self._job_task)

    async def start(self, job: J, owner: str | None) -> str:
        """The id of `owner`'s new job, recorded; its task is queued, or left to the repair when that fails (a
        503 then would make the client start a second job)."""
        job_id, now = request_id(), time.time()
        expires = now + self._ttl_s
        try:
            await self._make_room(owner)
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.hset(self._key(job_id), mapping={
                    "job": json.dumps(self._place.codec.job_json(job)), "owner": owner or "", "expires": expires,
                    "created": now, "status": PROCESSING, "result": "", "cancelled": ""})
                pipe.expireat(self._key(job_id), int(expires) + 1)
                pipe.zadd(self._unfinished, {job_id: expires})
                if group := self._kind.group_of(job):
                    pipe.rpush(self._group(group), job_id)
                    pipe.expireat(self._group(group), int(expires) + 1)
                await pipe.execute()
        except UNREACHABLE as e:
            raise self._unavailable(e) from e
        try:
            await self._tasks.enqueue(self._place.task, job_id, job_id=job_id)
        except UNREACHABLE as e:
            log.warning("could not queue %s %s (%s): the next repair will", self._kind.noun, job_id, e)
        return job_id

    async def get(self, job_id: str, owner: str | None) -> Record[J, R]:
        """`owner`'s job's record; JobNotFound when it never was, has expired, or is another client's."""
        try:
            record = await self._record(job_id)
        except UNREACHABLE as e:
            raise self._unavailable(e) from e
        if record is None or record.owner != owner or record.expires <= time.time():
            raise JobNotFound(self._kind.not_found)
        return record

    async def related(self, group: str, owner: str | None) -> list[Record[J, R]]:
        """`owner`'s jobs that joined `group`, oldest first, on every replica (none for no group)."""
        if not group:
            return []
        try:
            members = [m.decode() for m in await self._redis.lrange(self._group(group), 0, -1)]
            records = [await self._record(member) for member in members]
        except UNREACHABLE as e:
            raise self._unavailable(e) from e
        return [r for r in records if r is not None and r.owner == owner and r.expires > time.time()]

    async def cancel(self, job_id: str, owner: str | None) -> Record[J, R]:
        """Tell `owner`'s job to stop, on whichever replica runs it; its record. JobNotFound as `get`."""
        record = await self.get(job_id, owner)
        if record.status == PROCESSING and not record.cancelled:
            try:
                await self._redis.hset(self._key(job_id), "cancelled", "1")
            except UNREACHABLE as e:
                raise self._unavailable(e) from e
            record = await self.get(job_id, owner)
        return record

    async def resume(self) -> None:
        """Every REPAIR_S, one replica queues again the unfinished jobs whose task was lost (a replica that died
        between writing the record and queueing the task)."""
        self._repairing = asyncio.create_task(repair_every(self._redis, self._kind.noun, REPAIR_S, self.repair))

    async def close(self) -> None:
        """Stop repairing; the queue's worker hands running jobs back when it stops."""
        if self._repairing is not None:
            self._repairing.cancel()
            await asyncio.gather(self._repairing, return_exceptions=True)

    async def repair(self) -> int:
        """Queue a task for every unfinished job that has none; the number queued."""
        queued = 0
        for member in await self._redis.zrangebyscore(self._unfinished, time.time(), "+inf"):
            queued += await self._tasks.enqueue(self._place.task, member.decode(), job_id=member.decode())
        return queued

    async def _job_task(self, job_id: str) -> None:
        """The task: run the job once more unless it has a result, and record the result once; one whose
        replicas died MAX_ATTEMPTS times fails (it may be what kills them)."""
        record = await self._record(job_id)
        if record is None or record.status != PROCESSING:
            return
        if await self._redis.hincrby(self._key(job_id), "attempts", 1) > MAX_ATTEMPTS:
            result = self._kind.crashed(f"the replicas running it stopped {MAX_ATTEMPTS} times")
        else:
            async with self._running, self._cancel_watch(job_id) as cancelled:
                try:
                    result = await self._run(job_id, record.job, cancelled)
                except Exception as e:  # a bug fails the job, never leaves it processing
                    result = crashed(self._kind, job_id, e)
        status = FAILED if self._kind.failed(result) else COMPLETED
        await self._finish(keys=[self._key(job_id), self._unfinished],
                           args=[job_id, status, json.dumps(self._place.codec.result_json(result))])

    @contextlib.asynccontextmanager
    async def _cancel_watch(self, job_id: str):  # type: ignore[no-untyped-def]
        """Whether the job was told to stop, read from Redis every CANCEL_POLL_S while it runs."""
        told = asyncio.Event()

        async def watch() -> None:
            while not told.is_set():
                with contextlib.suppress(*UNREACHABLE):
                    if await self._redis.hget(self._key(job_id), "cancelled"):
                        told.set()
                await asyncio.sleep(CANCEL_POLL_S)

        watching = asyncio.create_task(watch())
        try:
            yield told.is_set
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)

    async def _record(self, job_id: str) -> Record[J, R] | None:
        fields = {k.decode(): v.decode() for k, v in (await self._redis.hgetall(self._key(job_id))).items()}
        if "job" not in fields:
            return None
        codec = self._place.codec
        result = codec.result_of(json.loads(fields["result"])) if fields.get("result") else None
        return Record(job_id, codec.job_of(json.loads(fields["job"])), fields["owner"] or None,
                      float(fields["expires"]), fields["status"], result, bool(fields.get("cancelled")),
                      float(fields.get("created") or 0.0))

    async def _make_room(self, owner: str | None) -> None:
        await self._redis.zremrangebyscore(self._unfinished, "-inf", time.time())
        unfinished = [member.decode() for member in await self._redis.zrange(self._unfinished, 0, -1)]
        if owner is not None and len(unfinished) >= self._max_per_owner:
            owners = await asyncio.gather(*(self._redis.hget(self._key(i), "owner") for i in unfinished))
            if sum(o is not None and o.decode() == owner for o in owners) >= self._max_per_owner:
                raise self._kind.too_many_of_yours(self._max_per_owner)
        if len(unfinished) >= self._max_jobs:
            raise self._kind.too_many_in_all(self._max_jobs)

    def _key(self, job_id: str) -> str:
        return f"{self._place.prefix}{job_id}"

    def _group(self, group: str) -> str:
        return f"{self._place.prefix}group:{group}"

    def _unavailable(self, error: Exception) -> SharedStateUnavailable:
        return SharedStateUnavailable(f"the {self._kind.noun}s (Redis) cannot be reached: {error}")
