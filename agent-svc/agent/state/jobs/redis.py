"""The crawl jobs and their frontiers on Redis (REDIS_URL), shared by every agent-svc replica: the same
operations as sqlite.py's store, each one atomic (a Lua script or a transaction), so that replicas working
on one crawl at once never see half a change.

A job is a hash of its fields and page counts; its pages a hash of key → {url, depth, state, attempts}; its
documents a list in completion order; its failed and blocked pages another. Every key of a job expires at its
expiry plus CRAWL_MAX_DURATION_S (no job runs longer than that), so Redis forgets finished jobs by itself.

A page is claimed (queued → fetching) by the task that visits it, and only a claimed page can be finished, once:
a task handed over after its replica died claims the page again, and whichever of the two finishes first
records the page, the other finds it finished. A page whose visits were handed over MAX_ATTEMPTS times fails.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis

from agent.core.crawl_options import CrawlOptions
from agent.errors import SharedStateUnavailable
from agent.state.jobs import FAILED, ROWS_PER_PAGE, RUNNING, Counts, Job, QueuedPage
from agent.state.jobs.sqlite import JobStore
from agent.state.unreachable import UNREACHABLE

T = TypeVar("T")
PREFIX = "wisp:crawl:"
RUNNING_SET = f"{PREFIX}running"
MAX_ATTEMPTS = 3
RETRY_PAUSE_S = 0.5  # between two tries of a patient store while Redis is out of reach
Enqueue = Callable[[str, list[str]], Awaitable[None]]

# Queues the pages (key, url, depth triples of ARGV from `first`) a running job does not know yet, while its total
# stays within `limit` and it knows of at most ROWS_PER_PAGE × limit pages; returns the keys queued.
_ADD_PAGES = f"""
local function add_pages(job, pages, limit, first)
    if redis.call('HGET', job, 'status') ~= 'scraping' then return {{}} end
    local counts = redis.call('HMGET', job, 'queued', 'fetching', 'done', 'purge')
    local room = math.min(limit - (tonumber(counts[1]) + tonumber(counts[2]) + tonumber(counts[3])),
                          {ROWS_PER_PAGE} * limit - redis.call('HLEN', pages))
    local added = {{}}
    for i = first, #ARGV, 3 do
        if #added >= room then break end
        local page = cjson.encode({{url = ARGV[i + 1], depth = tonumber(ARGV[i + 2]), state = 'queued',
                                    attempts = 0}})
        if redis.call('HSETNX', pages, ARGV[i], page) == 1 then table.insert(added, ARGV[i]) end
    end
    redis.call('HINCRBY', job, 'queued', #added)
    redis.call('EXPIREAT', pages, counts[4])
    return added
end
"""
# KEYS: job, pages; ARGV: limit, then the pages
_ADD = _ADD_PAGES + "return add_pages(KEYS[1], KEYS[2], tonumber(ARGV[1]), 2)"

# KEYS: job, pages, errors; ARGV: key, max attempts, now. The page to visit (its JSON), marked fetching; nil when
# the job no longer runs or the page is finished; 'failed' when it had too many attempts.
_CLAIM = """
if redis.call('HGET', KEYS[1], 'status') ~= 'scraping' then return nil end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return nil end
local page = cjson.decode(raw)
if page.state == 'queued' then
    redis.call('HINCRBY', KEYS[1], 'queued', -1)
    redis.call('HINCRBY', KEYS[1], 'fetching', 1)
elseif page.state ~= 'fetching' then
    return nil
end
page.attempts = page.attempts + 1
if page.attempts > tonumber(ARGV[2]) then
    page.state = 'failed'
    redis.call('HINCRBY', KEYS[1], 'fetching', -1)
    redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(page))
    redis.call('RPUSH', KEYS[3], cjson.encode({key = ARGV[1], url = page.url, state = 'failed', code = 'SCRAPE_FAILED',
        error = 'the replicas visiting it stopped ' .. (page.attempts - 1) .. ' times', finished = tonumber(ARGV[3])}))
    redis.call('EXPIREAT', KEYS[3], redis.call('HGET', KEYS[1], 'purge'))
    return 'failed'
end
page.state = 'fetching'
raw = cjson.encode(page)
redis.call('HSET', KEYS[2], ARGV[1], raw)
return raw
"""

# KEYS: job, pages, list (documents or errors); ARGV: key, new state, entry. Finishes a claimed page of a running
# job once (a cancelled job keeps what it had).
_FINISH_PAGE = """
if redis.call('HGET', KEYS[1], 'status') ~= 'scraping' then return 0 end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return 0 end
local page = cjson.decode(raw)
if page.state ~= 'fetching' then return 0 end
page.state = ARGV[2]
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(page))
redis.call('HINCRBY', KEYS[1], 'fetching', -1)
if ARGV[2] == 'done' then redis.call('HINCRBY', KEYS[1], 'done', 1) end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('EXPIREAT', KEYS[3], redis.call('HGET', KEYS[1], 'purge'))
return 1
"""

# KEYS: job, running set; ARGV: id, status, error, drained. Ends a running job once; with drained, only when no
# page is queued or being fetched and its seeds are in.
_FINISH_JOB = """
local job = redis.call('HMGET', KEYS[1], 'status', 'queued', 'fetching', 'seeded')
if job[1] ~= 'scraping' then return 0 end
if ARGV[4] == '1' and (tonumber(job[2]) + tonumber(job[3]) > 0 or job[4] ~= '1') then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'error', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
"""

# KEYS: job, pages, running set; ARGV: id, limit, then the pages. A batch's appendToId: the pages join a running
# or completed job, which runs again; returns its status before and the keys queued.
_APPEND = _ADD_PAGES + """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'scraping' and status ~= 'completed' then return {status or '', {}} end
redis.call('HSET', KEYS[1], 'status', 'scraping', 'error', '')
local added = add_pages(KEYS[1], KEYS[2], tonumber(ARGV[2]), 3)
redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'created'), ARGV[1])
return {status, added}
"""

_FIELDS = ("created", "expires", "status", "options", "error", "indexed", "unchanged", "chunks", "not_indexed",
           "index_error", "seeded", "owner")


class RedisJobStore:
    """jobs.JobStore's operations on Redis, for replicas; `enqueue(job_id, keys)` queues the visits of pages
    newly queued (by links, sitemaps or an append)."""

    def __init__(self, redis: Redis, max_duration_s: float, patience_s: float = 0.0) -> None:
        self._redis, self._max_duration_s, self._patience_s = redis, max_duration_s, patience_s
        self._enqueue: Enqueue | None = None
        self._add = redis.register_script(_ADD)
        self._claim = redis.register_script(_CLAIM)
        self._finish_page = redis.register_script(_FINISH_PAGE)
        self._finish_job = redis.register_script(_FINISH_JOB)
        self._append = redis.register_script(_APPEND)

    def on_queued(self, enqueue: Enqueue) -> None:
        self._enqueue = enqueue

    def patient(self, patience_s: float) -> RedisJobStore:
        """This store, retrying what Redis refuses for up to `patience_s` before it gives up: for the visits,
        which would otherwise fetch their page again once handed over (every operation is safe to repeat)."""
        patient = copy.copy(self)
        patient._patience_s = patience_s
        return patient

    async def run(self, method: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run one of the operations below, as jobs.JobStore.run does; Redis out of reach is a 503 (at once,
        or after this store's patience)."""
        gives_up = time.monotonic() + self._patience_s
        while True:
            try:
                return await method(*args)
            except UNREACHABLE as e:
                if time.monotonic() >= gives_up:
                    raise SharedStateUnavailable(f"the job store (Redis) cannot be reached: {e}") from e
                await asyncio.sleep(RETRY_PAUSE_S)

    def close(self) -> None:
        """Nothing to release: the Redis client belongs to the process."""

    async def create(self, job_id: str, options: CrawlOptions, ttl_s: float, owner: str | None = None) -> None:
        now = time.time()
        fields = {"created": now, "expires": now + ttl_s, "purge": int(now + ttl_s + self._max_duration_s) + 1,
                  "status": RUNNING, "options": json.dumps(options.as_json()), "error": "", "indexed": 0,
                  "unchanged": 0, "chunks": 0, "not_indexed": 0, "index_error": "", "seeded": 0,
                  "owner": owner or "", "queued": 0, "fetching": 0, "done": 0}
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(_job(job_id), mapping=fields).expireat(_job(job_id), fields["purge"])
            pipe.zadd(RUNNING_SET, {job_id: now})
            await pipe.execute()

    async def job(self, job_id: str) -> Job | None:
        return _job_of(job_id, await self._redis.hmget(_job(job_id), _FIELDS))

    async def running(self) -> list[str]:
        return [member.decode() for member in await self._redis.zrange(RUNNING_SET, 0, -1)]

    async def running_jobs(self) -> list[Job]:
        """The running jobs, oldest first; one whose keys have expired leaves the running set."""
        jobs = []
        for job_id in await self.running():
            job = await self.job(job_id)
            if job is None:
                await self._redis.zrem(RUNNING_SET, job_id)
            else:
                jobs.append(job)
        return jobs

    async def mark_seeded(self, job_id: str) -> None:
        await self._redis.hset(_job(job_id), "seeded", 1)

    async def finish(self, job_id: str, status: str, error: str | None = None, drained: bool = False) -> bool:
        return bool(await self._finish_job(keys=[_job(job_id), RUNNING_SET],
                                           args=[job_id, status, error or "", "1" if drained else "0"]))

    async def append(self, job_id: str, pages: list[tuple[str, str, int]], limit: int) -> str | None:
        """As JobStore.append: one script, so that the job's end (a drained finish) never misses the pages."""
        status, added = await self._append(keys=[_job(job_id), _pages(job_id), RUNNING_SET],
                                           args=[job_id, limit, *_flat(pages)])
        await self._queued(job_id, [key.decode() for key in added])
        return status.decode() or None

    async def known(self, job_id: str) -> int:
        return await self._redis.hlen(_pages(job_id))

    async def requeue_unfinished(self, job_id: str) -> None:
        """Nothing to do: a page whose visit stopped is claimed again by the visit handed over."""

    async def add_pages(self, job_id: str, pages: list[tuple[str, str, int]], limit: int) -> int:
        if not pages:
            return 0
        added = await self._add(keys=[_job(job_id), _pages(job_id)], args=[limit, *_flat(pages)])
        await self._queued(job_id, [key.decode() for key in added])
        return len(added)

    async def _queued(self, job_id: str, keys: list[str]) -> None:
        if keys and self._enqueue is not None:
            await self._enqueue(job_id, keys)

    async def claim(self, job_id: str, key: str) -> QueuedPage | None:
        """The page to visit, now fetching; None when there is nothing to do (a finished page, a finished job)."""
        raw = await self._claim(keys=[_job(job_id), _pages(job_id), _errors(job_id)],
                                args=[key, MAX_ATTEMPTS, time.time()])
        if raw is None or raw == b"failed":
            return None
        page = json.loads(raw)
        return QueuedPage(key, page["url"], page["depth"])

    async def unvisited(self, job_id: str) -> list[str]:
        """Keys of the pages queued or being fetched (the visits a repair makes sure are queued)."""
        pages = await self._redis.hgetall(_pages(job_id))
        return [key.decode() for key, raw in pages.items() if json.loads(raw)["state"] in ("queued", "fetching")]

    async def queued(self, job_id: str) -> int:
        counts = await self._redis.hmget(_job(job_id), ("queued", "fetching"))
        return sum(int(count or 0) for count in counts)

    async def done(self, job_id: str, key: str, document: dict[str, Any]) -> None:
        await self._finish_page(keys=[_job(job_id), _pages(job_id), _docs(job_id)],
                                args=[key, "done", json.dumps(document)])

    async def failed(self, job_id: str, key: str, error: str, code: str, state: str = "failed") -> None:
        page = json.loads(await self._redis.hget(_pages(job_id), key) or "{}")
        entry = {"key": key, "url": page.get("url", ""), "error": error[:1000], "code": code, "state": state,
                 "finished": time.time()}
        await self._finish_page(keys=[_job(job_id), _pages(job_id), _errors(job_id)],
                                args=[key, state, json.dumps(entry)])

    async def indexed(self, job_id: str, indexed: int, unchanged: int, chunks: int, error: str | None) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(_job(job_id), "indexed", indexed).hincrby(_job(job_id), "unchanged", unchanged)
            pipe.hincrby(_job(job_id), "chunks", chunks).hincrby(_job(job_id), "not_indexed", 1 if error else 0)
            if error:
                pipe.hset(_job(job_id), "index_error", error)
            await pipe.execute()

    async def counts(self, job_id: str) -> Counts:
        queued, fetching, done = (int(n or 0) for n in await self._redis.hmget(_job(job_id),
                                                                              ("queued", "fetching", "done")))
        return Counts(queued + fetching + done, done)

    async def snapshot(self, job_id: str, skip: int, limit: int, max_bytes: int
                       ) -> tuple[Job, Counts, list[dict[str, Any]]] | None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hmget(_job(job_id), (*_FIELDS, "queued", "fetching", "done"))
            pipe.lrange(_docs(job_id), skip, skip + limit - 1)
            fields, documents = await pipe.execute()
        job = _job_of(job_id, fields[:len(_FIELDS)])
        if job is None:
            return None
        queued, fetching, done = (int(n or 0) for n in fields[len(_FIELDS):])
        return job, Counts(queued + fetching + done, done), _within(documents, max_bytes)

    async def documents(self, job_id: str, skip: int, limit: int, max_bytes: int) -> list[dict[str, Any]]:
        return _within(await self._redis.lrange(_docs(job_id), skip, skip + limit - 1), max_bytes)

    async def errors(self, job_id: str) -> tuple[list[dict[str, Any]], list[str]]:
        entries = [json.loads(raw) for raw in await self._redis.lrange(_errors(job_id), 0, -1)]
        errors = [{"id": f"{job_id}:{e['key']}", "url": e["url"], "error": e["error"], "code": e["code"],
                   "finished": e["finished"]} for e in entries if e["state"] == "failed"]
        return errors, [e["url"] for e in entries if e["state"] == "blocked"]

    async def unfinished(self, owner: str | None = None) -> int:
        if owner is None:
            return await self._redis.zcard(RUNNING_SET)
        return sum(job.owner == owner for job in await self.running_jobs())

    async def expire(self) -> int:
        """Nothing to do: Redis forgets a job's keys at their expiry."""
        return 0


def _job(job_id: str) -> str:
    return f"{PREFIX}{job_id}"


def _pages(job_id: str) -> str:
    return f"{PREFIX}{job_id}:pages"


def _docs(job_id: str) -> str:
    return f"{PREFIX}{job_id}:docs"


def _errors(job_id: str) -> str:
    return f"{PREFIX}{job_id}:errors"


def _flat(pages: list[tuple[str, str, int]]) -> list[Any]:
    return [value for page in pages for value in page]


def _job_of(job_id: str, fields: list[bytes | None]) -> Job | None:
    if fields[0] is None:
        return None
    (created, expires, status, options, error, indexed, unchanged, chunks, not_indexed, index_error, seeded,
     owner) = (f.decode() if f is not None else "" for f in fields)
    try:
        parsed = CrawlOptions.from_json(json.loads(options))
    except (ValueError, TypeError) as e:  # written by another version of Wisp
        parsed, status = CrawlOptions(seeds=("",), limit=1), FAILED
        error = f"its stored options could not be read ({e})"
    return Job(job_id, float(created), float(expires), status, parsed, error or None, int(indexed), int(unchanged),
               int(chunks), int(not_indexed), index_error or None, seeded == "1", owner or None)


def _within(documents: list[bytes], max_bytes: int) -> list[dict[str, Any]]:
    """The documents from the first, as long as they stay within about `max_bytes` of JSON (at least one)."""
    kept, size = [], 0
    for raw in documents:
        if kept and size + len(raw) > max_bytes:
            break
        kept.append(json.loads(raw))
        size += len(raw)
    return kept


Store = JobStore | RedisJobStore  # where the jobs are: this process's SQLite, or the replicas' Redis
