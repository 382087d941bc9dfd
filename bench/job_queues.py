"""Which Redis job library should carry Wisp's crawl tasks? saq, arq, taskiq-redis and dramatiq, each against a
real redis-server started here (Debian's, in a temporary folder), its workers in processes of their own:

- throughput: `-n` tasks that do next to nothing, enqueued one after the other by one client, drained by 2
  worker processes (8 tasks at a time each): enqueues per second and drain per second on a queue filled first,
  with the Redis commands each task cost; tasks per second from the first enqueue to the last task done with the
  workers running; and any task started more than once (medians of `--rounds`, the libraries in turn);
- latency: one task at a time on 1 idle worker (a random pause of 0-0.5 s before each, so that polling workers
  are caught at any point of their interval): enqueue to start, enqueue to the result seen by the client (ms);
- dedup: the same key enqueued 3 times before any worker runs: how often the task starts;
- takeover: a 30 s task; its worker is SIGKILLed 1 s after the start; does the other worker start it again,
  how long after the kill, and how often did it start in all (2 is right; 3 or more ran it twice);
- double run: a 12 s task on a healthy worker with a ~5 s lease: how often does it start (1 is right).

The last two run on an idle queue and on a busy one (another client enqueues a short task every 0.25 s), as a
crawl's last page and a crawl in full flow would. Every task body records its start and end in Redis. Prints
the tables and writes JSON.

    .venv/bin/python bench/job_queues.py [--rounds 3] [-n 2000] [--libraries saq arq taskiq dramatiq]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

import arq
import arq.connections
import arq.jobs
import dramatiq
import dramatiq.brokers.redis
import dramatiq.middleware
import dramatiq.results
import dramatiq.results.backends
import saq
import taskiq
import taskiq.acks
import taskiq.api
import taskiq_redis
from redis.asyncio import Redis

from agent.state.tasks import LeasedQueue
from offline_web.processes import ending_with_this_process
from offline_web.redis_server import RedisServer

ROOT = Path(__file__).parent.parent
LEASE_S = 5  # the lease, visibility timeout or heartbeat limit asked of each library, where it has one
LONGEST_TASK_S = 30  # Wisp's slowest page; a library whose lease is a job timeout must allow it
CONCURRENCY = 8
STARTS, ENDS, READY = "bench:starts", "bench:ends", "bench:ready"


# --- what every task does, in the worker process ------------------------------------------------------------

_events: Redis | None = None  # the worker process's connection for the probes' records, opened on first use
_events_url = ""


async def probe(key: str, seconds: float) -> str:
    """The task body of every library: records its start, sleeps `seconds`, records its end."""
    global _events
    _events = _events or Redis.from_url(_events_url)
    await _events.rpush(STARTS, json.dumps({"key": key, "pid": os.getpid(), "t": time.time()}))
    if seconds:
        await asyncio.sleep(seconds)
    await _events.rpush(ENDS, json.dumps({"key": key, "pid": os.getpid(), "t": time.time()}))
    return key


# --- one adapter per library ----------------------------------------------------------------------------------

class Library(Protocol):
    """A library as Wisp would use it: enqueue a task by key, wait for its result, run a worker in an event loop."""

    settings: ClassVar[str]  # how its lease is configured here

    async def connect(self, url: str) -> None: ...
    async def enqueue(self, key: str, seconds: float) -> Any: ...  # a handle, or None when the key was queued
    async def result(self, handle: Any, timeout_s: float) -> None: ...
    async def close(self) -> None: ...
    async def serve(self, url: str, concurrency: int) -> None: ...  # runs until the process ends


class Saq:
    settings = (f"Job(heartbeat={LEASE_S}, retries=3, timeout={LONGEST_TASK_S * 2}), job.update() every "
                f"{LEASE_S / 2} s beside the body; Worker(timers={{'sweep': 1}})")

    async def connect(self, url: str) -> None:
        self.queue = saq.Queue.from_url(url, name="bench")
        await self.queue.connect()

    async def enqueue(self, key: str, seconds: float) -> saq.Job | None:
        return await self.queue.enqueue(saq.Job("probe", kwargs={"key": key, "seconds": seconds}, key=key,
                                                heartbeat=LEASE_S, retries=3, timeout=LONGEST_TASK_S * 2))

    async def result(self, handle: saq.Job, timeout_s: float) -> None:
        await handle.refresh(until_complete=timeout_s)

    async def close(self) -> None:
        await self.queue.disconnect()

    async def serve(self, url: str, concurrency: int) -> None:
        await self.connect(url)
        await saq.Worker(self.queue, [("probe", _saq_probe)], concurrency=concurrency, timers={"sweep": 1}).start()


class WispSaq(Saq):
    """saq as Wisp runs it: the same settings, with Wisp's sweep (agent/state/tasks.py), which hands over a
    task not yet marked active only when two sweeps see it so (saq's own takes it at once: saq#277)."""

    settings = Saq.settings + "; Wisp's sweep"

    async def connect(self, url: str) -> None:
        self.queue = LeasedQueue.from_url(url, name="bench")
        await self.queue.connect()


async def _saq_probe(ctx: dict, *, key: str, seconds: float) -> str:
    """saq only knows a job is alive when the job says so: Wisp would have to touch it beside every task."""
    job: saq.Job = ctx["job"]

    async def beat() -> None:
        while True:
            await asyncio.sleep(LEASE_S / 2)
            await job.update()

    heart = asyncio.create_task(beat())
    try:
        return await probe(key, seconds)
    finally:
        heart.cancel()


class Arq:
    timeout_s = LONGEST_TASK_S + 5
    settings = (f"job_timeout={timeout_s} s: its lease is the longest timeout + 10 s ({timeout_s + 10} s), no "
                "heartbeat; worker poll_delay 0.5 s (default)")

    async def connect(self, url: str) -> None:
        self.pool = await arq.create_pool(arq.connections.RedisSettings.from_dsn(url))

    async def enqueue(self, key: str, seconds: float) -> arq.jobs.Job | None:
        return await self.pool.enqueue_job("probe", key, seconds, _job_id=key)

    async def result(self, handle: arq.jobs.Job, timeout_s: float) -> None:
        await handle.result(timeout_s, poll_delay=0.01)  # the client's poll, not the library's 0.5 s default

    async def close(self) -> None:
        await self.pool.aclose()

    async def serve(self, url: str, concurrency: int) -> None:
        worker = arq.Worker([arq.func(_arq_probe, name="probe")], max_jobs=concurrency, job_timeout=self.timeout_s,
                            redis_settings=arq.connections.RedisSettings.from_dsn(url), handle_signals=False)
        await worker.main()


async def _arq_probe(ctx: dict, key: str, seconds: float) -> str:
    return await probe(key, seconds)


class Taskiq:
    settings = (f"RedisStreamBroker(idle_timeout={LEASE_S * 1000} ms, unacknowledged_lock_timeout={LEASE_S}), "
                "ack when executed, no heartbeat")

    def _broker(self, url: str) -> taskiq_redis.RedisStreamBroker:
        broker = taskiq_redis.RedisStreamBroker(url, idle_timeout=LEASE_S * 1000,
                                                unacknowledged_lock_timeout=LEASE_S)
        broker = broker.with_result_backend(taskiq_redis.RedisAsyncResultBackend(url, result_ex_time=3600))
        self.task = broker.register_task(probe, task_name="probe")
        return broker

    async def connect(self, url: str) -> None:
        self.broker = self._broker(url)
        await self.broker.startup()

    async def enqueue(self, key: str, seconds: float) -> taskiq.AsyncTaskiqTask:
        return await self.task.kicker().with_task_id(key).kiq(key=key, seconds=seconds)

    async def result(self, handle: taskiq.AsyncTaskiqTask, timeout_s: float) -> None:
        await handle.wait_result(check_interval=0.01, timeout=timeout_s)  # default interval: 0.2 s

    async def close(self) -> None:
        await self.broker.shutdown()

    async def serve(self, url: str, concurrency: int) -> None:
        await taskiq.api.run_receiver_task(self._broker(url), max_async_tasks=concurrency, run_startup=True,
                                           ack_time=taskiq.acks.AcknowledgeType.WHEN_EXECUTED)


class Dramatiq:
    maintenance_chance = 100_000  # in a million commands: its dead-worker sweep (default 1,000)
    settings = (f"RedisBroker(heartbeat_timeout={LEASE_S * 1000} ms, maintenance_chance={maintenance_chance}), "
                f"a heartbeat per worker process; async actor on the AsyncIO middleware's loop thread")

    def _broker(self, url: str) -> dramatiq.brokers.redis.RedisBroker:
        broker = dramatiq.brokers.redis.RedisBroker(url=url, heartbeat_timeout=LEASE_S * 1000,
                                                    maintenance_chance=self.maintenance_chance)
        self.backend = dramatiq.results.backends.RedisBackend(url=url)
        broker.add_middleware(dramatiq.results.Results(backend=self.backend))
        broker.add_middleware(dramatiq.middleware.AsyncIO())
        self.actor = dramatiq.actor(probe, broker=broker, actor_name="probe", store_results=True, max_retries=3)
        return broker

    async def connect(self, url: str) -> None:
        self.broker = self._broker(url)

    async def enqueue(self, key: str, seconds: float) -> dramatiq.Message:
        # dramatiq's client is blocking: called on the loop as is, its cheapest use (a thread would add to it)
        return self.broker.enqueue(self.actor.message(key, seconds).copy(message_id=key))

    async def result(self, handle: dramatiq.Message, timeout_s: float) -> None:
        await asyncio.to_thread(handle.get_result, backend=self.backend, block=True, timeout=int(timeout_s * 1000))

    async def close(self) -> None:
        self.broker.close()

    async def serve(self, url: str, concurrency: int) -> None:
        dramatiq.Worker(self._broker(url), worker_threads=concurrency).start()
        await asyncio.Event().wait()


LIBRARIES: dict[str, type[Library]] = {"saq": Saq, "wisp-saq": WispSaq, "arq": Arq, "taskiq": Taskiq,
                                       "dramatiq": Dramatiq}


# --- the harness: Redis, worker processes, the probes' records --------------------------------------------

@dataclass(frozen=True)
class Record:
    """A task body's start or end."""

    key: str
    pid: int
    t: float


class Lab:
    """One library's worker processes on one Redis, and what their tasks recorded there."""

    def __init__(self, library: str, url: str, logs: Path) -> None:
        self.library, self.url, self.logs = library, url, logs
        self.redis = Redis.from_url(url)
        self.workers: list[subprocess.Popen[bytes]] = []
        self.polls = 0  # Redis commands this harness sent while it waited, one per look

    @contextlib.asynccontextmanager
    async def scene(self, workers: int, start_workers: bool = True) -> AsyncIterator[Library]:
        """An empty Redis, `workers` ready worker processes (unless told to wait) and a connected client."""
        await self.redis.flushall()
        client = LIBRARIES[self.library]()
        await client.connect(self.url)
        try:
            if start_workers:
                await self.start_workers(workers)
            yield client
        finally:
            self.stop_workers()
            await client.close()

    async def start_workers(self, count: int) -> None:
        for _ in range(count):
            log = (self.logs / f"{self.library}-worker-{len(self.workers)}.log").open("ab")
            self.workers.append(subprocess.Popen(
                [sys.executable, __file__, "--serve", self.library, "--redis-url", self.url],
                stdout=log, stderr=subprocess.STDOUT, preexec_fn=ending_with_this_process()))
        if not await self.until(lambda: self._ready(len(self.workers)), 60):
            raise RuntimeError(f"{self.library} workers not ready in 60 s: see {self.logs}")
        await asyncio.sleep(1)  # a worker says it is ready just before its library starts consuming

    async def _ready(self, count: int) -> bool:
        return await self.redis.llen(READY) >= count

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)

    def stop_workers(self) -> None:
        for worker in self.workers:
            worker.kill()  # the queue is flushed next: nothing to finish cleanly
            worker.wait()
        self.workers.clear()

    async def starts(self, key: str | None = None) -> list[Record]:
        return await self._records(STARTS, key)

    async def ends(self, key: str | None = None) -> list[Record]:
        return await self._records(ENDS, key)

    async def _records(self, name: str, key: str | None) -> list[Record]:
        found = [Record(**json.loads(raw)) for raw in await self.redis.lrange(name, 0, -1)]
        return [record for record in found if key is None or record.key == key]

    async def ended(self, key: str) -> bool:
        return bool(await self.ends(key))

    async def commands(self) -> int:
        """Commands Redis has served so far (this one included)."""
        return (await self.redis.info("stats"))["total_commands_processed"]

    async def until(self, condition: Callable[[], Awaitable[bool]], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            self.polls += 1  # each condition sends Redis one command
            if await condition():
                return True
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        self.stop_workers()
        await self.redis.aclose()


@contextlib.asynccontextmanager
async def traffic(client: Library, busy: bool) -> AsyncIterator[None]:
    """On a busy queue, another client enqueues a short task every 0.25 s meanwhile."""
    async def trickle() -> None:
        for number in range(10**6):
            await client.enqueue(f"trickle-{number}", 0)
            await asyncio.sleep(0.25)

    task = asyncio.create_task(trickle()) if busy else None
    try:
        yield
    finally:
        if task:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


# --- the measures ----------------------------------------------------------------------------------------------

async def throughput(lab: Lab, tasks: int) -> dict:
    """Enqueue rate and drain rate on a queue filled first; then both at once, from the first enqueue to the last
    task done. Redis commands per task of the enqueue and of the drain (the probes' records and the harness's own
    looks left out); starts beyond one per task in both."""
    async with lab.scene(workers=2, start_workers=False) as client:
        before = await lab.commands()
        enqueue_s = await _enqueue_all(client, tasks)
        enqueued, polls = await lab.commands(), lab.polls
        await lab.start_workers(2)
        await _wait_ended(lab, tasks)
        drained = await lab.commands() - enqueued - (lab.polls - polls) - 2 * tasks
        starts, ends = await lab.starts(), await lab.ends()
    drain_s = max(end.t for end in ends) - min(start.t for start in starts)
    async with lab.scene(workers=2) as client:
        began = time.perf_counter()
        await _enqueue_all(client, tasks)
        await _wait_ended(lab, tasks)
        both_s = time.perf_counter() - began
        extra_starts = len(starts) - tasks + len(await lab.starts()) - tasks
    return {"enqueue_per_s": tasks / enqueue_s, "drain_per_s": tasks / drain_s, "tasks_per_s": tasks / both_s,
            "enqueue_commands_per_task": (enqueued - before) / tasks, "drain_commands_per_task": drained / tasks,
            "extra_starts": extra_starts}


async def _enqueue_all(client: Library, tasks: int) -> float:
    """Seconds to enqueue `tasks` one after the other."""
    began = time.perf_counter()
    for number in range(tasks):
        await client.enqueue(f"t{number}", 0)
    return time.perf_counter() - began


async def _wait_ended(lab: Lab, tasks: int) -> None:
    async def all_ended() -> bool:
        return await lab.redis.llen(ENDS) >= tasks

    if not await lab.until(all_ended, 300):
        raise RuntimeError(f"{lab.library}: {tasks} tasks not done in 300 s")


async def latency(lab: Lab, samples: int) -> dict:
    pauses = random.Random(7)
    to_start, to_result = [], []
    async with lab.scene(workers=1) as client:
        for number in range(-3, samples):  # 3 to warm up
            await asyncio.sleep(pauses.uniform(0, 0.5))
            began = time.time()
            await client.result(await client.enqueue(f"l{number}", 0), 30)
            seen = time.time()
            if number >= 0:
                to_start.append(((await lab.starts(f"l{number}"))[0].t - began) * 1000)
                to_result.append((seen - began) * 1000)
    return {"to_start_ms": statistics.median(to_start), "to_result_ms": statistics.median(to_result),
            "to_result_p90_ms": statistics.quantiles(to_result, n=10)[-1]}


async def dedup(lab: Lab) -> dict:
    async with lab.scene(workers=1, start_workers=False) as client:
        accepted = [await client.enqueue("page", 0) is not None for _ in range(3)]
        await lab.start_workers(1)
        await lab.until(lambda: lab.ended("page"), 30)
        await asyncio.sleep(3)  # a second copy would start by now
        return {"accepted": sum(accepted), "starts": len(await lab.starts("page"))}


async def takeover(lab: Lab, busy: bool, wait_s: float) -> dict:
    async with lab.scene(workers=2) as client, traffic(client, busy):
        await client.enqueue("long", LONGEST_TASK_S)
        if not await lab.until(lambda: _started(lab, "long"), 30):
            raise RuntimeError(f"{lab.library}: the long task did not start in 30 s")
        first = (await lab.starts("long"))[0]
        await asyncio.sleep(max(0.0, first.t + 1 - time.time()))
        lab.kill(first.pid)
        killed_at = time.time()
        taken = await lab.until(lambda: _started_elsewhere(lab, "long", first.pid), wait_s)
        if taken:
            await asyncio.sleep(LEASE_S + 3)  # a third start would come within a lease and a sweep
        starts = await lab.starts("long")
    again = [start for start in starts if start.pid != first.pid]
    return {"taken_over": taken, "seconds": again[0].t - killed_at if again else None, "starts": len(starts),
            "waited_s": wait_s}


async def _started(lab: Lab, key: str) -> bool:
    return bool(await lab.starts(key))


async def _started_elsewhere(lab: Lab, key: str, pid: int) -> bool:
    return any(start.pid != pid for start in await lab.starts(key))


async def double_run(lab: Lab, busy: bool) -> dict:
    seconds = 12
    async with lab.scene(workers=2) as client, traffic(client, busy):
        await client.enqueue("twelve", seconds)
        finished = await lab.until(lambda: lab.ended("twelve"), seconds + 30)
        await asyncio.sleep(3)
        return {"starts": len(await lab.starts("twelve")), "finished": finished}


async def behaviour(lab: Lab, args: argparse.Namespace) -> dict:
    figures = {**await latency(lab, args.samples), "dedup": await dedup(lab)}
    for busy in (False, True):
        queue = "busy" if busy else "idle"
        figures[f"takeover_{queue}"] = await takeover(lab, busy, args.takeover_wait)
        figures[f"double_run_{queue}"] = await double_run(lab, busy)
    return figures


def summary(rounds: list[dict]) -> dict:
    """Medians of the rounds' rates; the extra starts of all rounds together."""
    return {**{figure: statistics.median(r[figure] for r in rounds) for figure in rounds[0]},
            "extra_starts": sum(r["extra_starts"] for r in rounds)}


async def measure(url: str, logs: Path, args: argparse.Namespace) -> dict[str, dict]:
    labs = {name: Lab(name, url, logs) for name in args.libraries}
    try:
        rounds: dict[str, list[dict]] = {name: [] for name in labs}
        for _ in range(args.rounds):  # the libraries in turn, so that the machine's other load falls on each alike
            for name, lab in labs.items():
                rounds[name].append(await throughput(lab, args.tasks))
        return {name: {"settings": LIBRARIES[name].settings, **summary(rounds[name]), "rounds": rounds[name],
                       **await behaviour(lab, args)} for name, lab in labs.items()}
    finally:
        for lab in labs.values():
            await lab.close()


# --- the report ------------------------------------------------------------------------------------------------

def print_tables(results: dict[str, dict], args: argparse.Namespace) -> None:
    print(f"\n{args.tasks} tasks enqueued one at a time by one client, 2 worker processes x {CONCURRENCY} (medians of "
          f"{args.rounds}): enqueue and drain on a queue filled first, end to end with the workers running; "
          f"latency: {args.samples} tasks one at a time on 1 idle worker (medians)\n")
    print("| library | enqueue/s | drain/s | end to end/s | Redis cmds/task: enqueue | drain | enqueue→start ms "
          f"| →result ms | result p90 ms | extra starts in {2 * args.tasks * args.rounds} | dedup: starts of 3 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        print(f"| {name} | {r['enqueue_per_s']:,.0f} | {r['drain_per_s']:,.0f} | {r['tasks_per_s']:,.0f} | "
              f"{r['enqueue_commands_per_task']:.1f} | {r['drain_commands_per_task']:.1f} | {r['to_start_ms']:.1f} | "
              f"{r['to_result_ms']:.1f} | {r['to_result_p90_ms']:.1f} | {r['extra_starts']} | {r['dedup']['starts']} |")
    print(f"\nA {LONGEST_TASK_S} s task whose worker is SIGKILLed after 1 s (starts: 2 is right), and a 12 s task on a "
          f"healthy worker (starts: 1 is right); lease ~{LEASE_S} s\n")
    print("| library | taken over (idle) | s after kill | starts | taken over (busy) | s after kill | starts | "
          "12 s task starts (idle) | (busy) |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|")
    for name, r in results.items():
        cells = []
        for queue in ("idle", "busy"):
            t = r[f"takeover_{queue}"]
            cells += ["yes" if t["taken_over"] else f"no (in {t['waited_s']:.0f} s)",
                      f"{t['seconds']:.1f}" if t["seconds"] is not None else "-", str(t["starts"])]
        print(f"| {name} | {' | '.join(cells)} | {r['double_run_idle']['starts']} | {r['double_run_busy']['starts']} |")
    print()
    for name, r in results.items():
        print(f"- {name}: {r['settings']}")


def machine() -> dict:
    return {"cpus": os.cpu_count(), "load_average": os.getloadavg(),
            "processes": sum(1 for entry in Path("/proc").iterdir() if entry.name.isdigit())}


async def run(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp)) as redis:
        return await measure(redis.url, Path(tmp), args)


async def serve(library: str, url: str) -> None:
    """A worker process: the library's worker in this process's event loop, as an agent-svc replica would run it."""
    global _events_url
    _events_url = url
    async with Redis.from_url(url) as redis:
        await redis.rpush(READY, os.getpid())
    await LIBRARIES[library]().serve(url, CONCURRENCY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--tasks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=50, help="latency samples")
    parser.add_argument("--takeover-wait", type=float, default=60, help="seconds to wait for a takeover")
    parser.add_argument("--libraries", nargs="+", choices=list(LIBRARIES), default=list(LIBRARIES))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "job_queues.json")
    parser.add_argument("--serve", choices=list(LIBRARIES), help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.redis_url))
        return
    before = machine()
    results = asyncio.run(run(args))
    print_tables(results, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                    "machine": {"before": before, "after": machine()}, "results": results},
                                   indent=2))
    print(f"\nresults: {args.out}")


if __name__ == "__main__":
    main()
