"""What counting the limits in Redis (REDIS_URL) adds to a request, against counting them in the process.

1. In-process, the admission path alone: the per-minute hit, then a costly slot taken and given back, timed each
   time over many iterations, the in-process limits and the Redis ones taking turns in short slices in one event
   loop. Redis is a real Debian redis-server on loopback with its append-only file (`--fsync everysec`, a
   production setting, by default; `always` syncs every write to disk before answering).
2. End to end: keyword /v2/search (the per-minute hit only: keyword is not costly) through one agent-svc with
   API_KEYS and RATE_LIMIT_PER_MIN (too high to refuse) and one with REDIS_URL as well, one request at a time,
   alternating which goes first, against the offline web's searx.

Prints a table of medians and p95 and writes JSON.

    .venv/bin/python bench/limits_redis.py [--iterations 20000] [--slices 20] [--rounds 200] [--fsync everysec]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import redis

from agent.state.limits import Limits
from agent.state.limits.memory import process_limits
from agent.state.limits.redis import shared_limits
from agent.state.settings import LimitsSettings
from offline_web.redis_server import RedisServer
from offline_web.stack import offline_search_stack, uvicorn_service

ROOT = Path(__file__).parent.parent
KEY = "bench-key-0123456789abcdefghij"
NEVER_REFUSED = 10**9
CLIENTS = [f"key:{n:08x}" for n in range(100)]  # keys rotate: each window holds what one key sent
QUERIES = ["sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal",
           "mkdocs theme configuration", "git stash changes", "vacuum database file"]
STEPS = ("per_minute", "costly", "admission")


def quantiles(values: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(values), "p95": statistics.quantiles(values, n=20)[18], "n": len(values)}


async def admission_us(limits: Limits, client: str) -> tuple[float, float]:
    """One request's admission: µs of the per-minute hit, and of a costly slot taken and given back."""
    started = time.perf_counter_ns()
    assert await limits.per_minute.hit(client) is None
    hit = time.perf_counter_ns()
    release = await limits.costly.take(client)
    await release()
    done = time.perf_counter_ns()
    return (hit - started) / 1000, (done - hit) / 1000


async def admission_path(redis_url: str, iterations: int, slices: int) -> dict:
    settings = {"rate_limit_per_min": NEVER_REFUSED, "ranked_concurrency_per_key": 4}
    backends = {"process": process_limits(LimitsSettings(**settings)),
                "redis": shared_limits(LimitsSettings(**settings), redis_url)}
    times: dict[str, dict[str, list[float]]] = {name: {step: [] for step in STEPS} for name in backends}
    for limits in backends.values():  # warm-up: connections, scripts loaded
        for client in CLIENTS:
            await admission_us(limits, client)
    per_slice = iterations // slices
    for n in range(slices):
        order = list(backends.items()) if n % 2 == 0 else list(backends.items())[::-1]
        for name, limits in order:
            for i in range(per_slice):
                hit, costly = await admission_us(limits, CLIENTS[i % len(CLIENTS)])
                times[name]["per_minute"].append(hit)
                times[name]["costly"].append(costly)
                times[name]["admission"].append(hit + costly)
    assert await backends["redis"].warnings() == [], "Redis failed during the run: the figures are the fallback's"
    for limits in backends.values():
        await limits.close()
    return {name: {step: quantiles(values) for step, values in steps.items()} for name, steps in times.items()}


def timed_ms(call: Callable[[], httpx.Response]) -> float:
    started = time.perf_counter()
    call().raise_for_status()
    return (time.perf_counter() - started) * 1000


def end_to_end(targets: dict[str, str], rounds: int) -> dict:
    headers = {"Authorization": f"Bearer {KEY}"}
    samples: dict[str, list[float]] = {name: [] for name in targets}
    with httpx.Client(headers=headers, timeout=30) as http:
        def search(url: str, query: str) -> Callable[[], httpx.Response]:
            return lambda: http.post(f"{url}/v2/search", json={"query": query, "limit": 5})

        for query in QUERIES:  # warm-up: connections, searx's and uvicorn's first requests, Redis's scripts
            for url in targets.values():
                search(url, query)()
        for n in range(rounds):
            order = list(targets.items()) if n % 2 == 0 else list(targets.items())[::-1]
            for name, url in order:
                samples[name].append(timed_ms(search(url, QUERIES[n % len(QUERIES)])))
    paired = [r - p for r, p in zip(samples["redis"], samples["process"], strict=True)]
    return {**{name: quantiles(values) for name, values in samples.items()}, "redis_minus_process": quantiles(paired)}


def load() -> dict:
    return {"loadavg": os.getloadavg(), "cpus": os.cpu_count()}


def print_tables(result: dict) -> None:
    path = result["admission_path"]
    print(f"\nadmission path in-process, {path['process']['admission']['n']} iterations each, interleaved slices "
          f"(µs; Redis on loopback, appendfsync {result['fsync']})\n")
    print(f"| {'step':36} | {'process p50':>11} | {'p95':>7} | {'redis p50':>9} | {'p95':>7} | {'added p50':>9} | "
          f"{'ratio p50':>9} |")
    print(f"|{'-' * 38}|{'-' * 13}|{'-' * 9}|{'-' * 11}|{'-' * 9}|{'-' * 11}|{'-' * 11}|")
    labels = {"per_minute": "per-minute hit", "costly": "costly slot taken and given back",
              "admission": "both (a costly request's admission)"}
    for step, label in labels.items():
        local, shared = path["process"][step], path["redis"][step]
        print(f"| {label:36} | {local['p50']:11.1f} | {local['p95']:7.1f} | {shared['p50']:9.1f} | "
              f"{shared['p95']:7.1f} | {shared['p50'] - local['p50']:9.1f} | {shared['p50'] / local['p50']:9.1f} |")
    e2e = result["end_to_end"]
    print(f"\nkeyword /v2/search through one agent-svc, {e2e['process']['n']} requests each, one at a time, "
          "alternating (ms)\n")
    print(f"| {'agent-svc':36} | {'p50':>8} | {'p95':>8} |\n|{'-' * 38}|{'-' * 10}|{'-' * 10}|")
    for name, label in (("process", "limits in the process"), ("redis", "limits in Redis (REDIS_URL)"),
                        ("redis_minus_process", "Redis minus process, paired")):
        print(f"| {label:36} | {e2e[name]['p50']:8.2f} | {e2e[name]['p95']:8.2f} |")
    print(f"\nratio redis/process at p50: {e2e['redis']['p50'] / e2e['process']['p50']:.3f}")
    print(f"load average before and after: {result['load_before']['loadavg']} -> {result['load_after']['loadavg']} "
          f"({result['load_before']['cpus']} CPUs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20_000, help="admissions timed per backend")
    parser.add_argument("--slices", type=int, default=20, help="turns each backend takes")
    parser.add_argument("--rounds", type=int, default=200, help="end-to-end searches per agent-svc")
    parser.add_argument("--fsync", choices=("everysec", "always"), default="everysec")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "limits_redis.json")
    args = parser.parse_args()
    result: dict = {"fsync": args.fsync, "load_before": load()}
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp)) as server:
        with redis.Redis.from_url(server.url) as client:
            client.config_set("appendfsync", args.fsync)
        result["admission_path"] = asyncio.run(admission_path(server.url, args.iterations, args.slices))
        with offline_search_stack(args.sites, Path(tmp)) as stack:
            env = {"SEARXNG_URL": stack.searx.url, "API_KEYS": KEY, "RATE_LIMIT_PER_MIN": str(NEVER_REFUSED),
                   "RANKED_CONCURRENCY_PER_KEY": "4", "LOG_LEVEL": "WARNING"}
            process = uvicorn_service("agent-process", "agent.app:app", Path(tmp), {
                **env, "CRAWL_DB": f"{tmp}/process.sqlite", "PAGE_CACHE_DIR": f"{tmp}/process-pages"})
            shared = uvicorn_service("agent-redis", "agent.app:app", Path(tmp), {
                **env, "CRAWL_DB": f"{tmp}/redis.sqlite", "PAGE_CACHE_DIR": f"{tmp}/redis-pages",
                "REDIS_URL": server.url})
            with process, shared:
                result["end_to_end"] = end_to_end({"process": process.url, "redis": shared.url}, args.rounds)
                ready = httpx.get(f"{shared.url}/readyz", timeout=10).json()
                assert ready["warnings"] == [], ready["warnings"]
    result["load_after"] = load()
    print_tables(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": result},
                                   indent=2))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
