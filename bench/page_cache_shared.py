"""Per-replica or shared page cache (PAGE_CACHE=disk on each replica, or PAGE_CACHE=redis on REDIS_URL): what a
lookup and a write cost on each store, what each holds in memory or on disk, and the hit rate a client gets behind
a round-robin balancer over `--replicas` replicas.

The pages are those bench/page_cache.py scrapes (its queries on tests/fixtures/sites-mini.tsv, found here through
the offline web's own engine, no searx). Four parts, one table each:

- store costs: each page's lookup and write, `--repeats` times, on a disk store (a temporary directory), a Redis
  store on a real redis-server on loopback with the AOF fsynced at every write (as the launcher runs it, the
  durability the job queues want), the same recording every lookup's use (each lookup then a write, fsynced: why
  the store records a use at most once a minute), the same with `appendfsync everysec`, and memory for the floor.
  `read`/`write` is the store alone; `get`/`put` is PageCache's (a thread hop, zlib, the header), what agent-svc
  pays. Medians and p95 in ms;
- memory: `--copies` copies of every page under distinct URLs written to each store; Redis's `used_memory` (entries,
  their TTLs and the LRU bookkeeping) and the AOF against the compressed bytes kept, the disk's allocated blocks
  against its file sizes;
- hit rates, computed from request traces: every page scraped `--rounds` times (in order each round, or shuffled),
  requests spread round-robin over the replicas, each with a cache of its own or one for all;
- end to end: the in-order trace through HAProxy over `--replicas` real agent-svc processes (scaled_agents), each
  page answering after `--site-delay-ms`, with per-replica disk caches and then with one Redis cache: hits seen
  (`cacheState`), fetches the site saw, and the scrape latencies a client measures.

Prints the tables and writes JSON.

    .venv/bin/python bench/page_cache_shared.py [--pages 40] [--repeats 5] [--copies 25] [--rounds 3] \
        [--replicas 3] [--site-delay-ms 150]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import redis
from page_cache import QUERIES

from agent.core.pages import Fetched
from agent.pages.cache import PageCache, encoded
from agent.state.page_cache import Store
from agent.state.page_cache.disk import DiskStore
from agent.state.page_cache.memory import MemoryStore
from agent.state.page_cache.redis import RedisStore
from offline_web.redis_server import RedisServer
from offline_web.server import OfflineWeb
from offline_web.stack import prepare_index, scaled_agents

ROOT = Path(__file__).parent.parent
HOUR_MS = 3_600_000
DAY_S = 86_400


def corpus(web: str, wanted: int) -> list[Fetched]:
    """The first `wanted` distinct pages the queries find, fetched."""
    urls: dict[str, None] = {}
    with httpx.Client(base_url=web, timeout=30) as http:
        for query in QUERIES:
            for result in http.get("/search", params={"q": query, "format": "json"}).json()["results"][:10]:
                urls[result["url"]] = None
        pages = []
        for url in list(urls)[:wanted]:
            response = http.get(url)
            response.raise_for_status()
            pages.append(Fetched(url, url, 200, response.headers["content-type"].split(";")[0], response.content,
                                 response.charset_encoding))
    return pages


def spread(times: list[float]) -> dict[str, float]:
    return {"median": statistics.median(times), "p95": statistics.quantiles(times, n=20)[18]}


def ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def store_costs(store: Store, pages: list[Fetched], repeats: int) -> dict[str, dict[str, float]]:
    """ms per page: the store's read and write alone, and PageCache's get and put over it."""
    cache, blobs = PageCache(store, 0), [(f"bench-{n}", encoded(page, time.time())) for n, page in enumerate(pages)]
    costs: dict[str, list[float]] = {"write": [], "read": [], "put": [], "get": []}

    async def through_cache() -> None:
        for page in pages:
            started = time.perf_counter()
            await cache.put(page)
            costs["put"].append(ms_since(started))
        for page in pages:
            started = time.perf_counter()
            assert await cache.get(page.url, HOUR_MS) is not None
            costs["get"].append(ms_since(started))

    for _ in range(repeats):
        for key, blob in blobs:
            started = time.perf_counter()
            store.write(key, blob)
            costs["write"].append(ms_since(started))
        for key, _blob in blobs:
            started = time.perf_counter()
            assert store.read(key) is not None
            costs["read"].append(ms_since(started))
        asyncio.run(through_cache())
    return {name: spread(times) for name, times in costs.items()}


def filled(store: Store, pages: list[Fetched], copies: int) -> int:
    """Write `copies` copies of every page under distinct keys; the compressed bytes written."""
    written = 0
    for copy in range(copies):
        for n, page in enumerate(pages):
            blob = encoded(page, time.time())
            store.write(f"fill-{copy}-{n}", blob)
            written += len(blob)
    return written


def redis_memory(url: str, pages: list[Fetched], copies: int) -> dict[str, float]:
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.execute_command("MEMORY", "PURGE")
    before, aof_before = client.info("memory")["used_memory"], client.info("persistence")["aof_current_size"]
    kept = filled(RedisStore(url, 10**12, DAY_S), pages, copies)
    used = client.info("memory")["used_memory"] - before
    aof = client.info("persistence")["aof_current_size"] - aof_before
    return {"entries": copies * len(pages), "kept_bytes": kept, "held_bytes": used, "held_over_kept": used / kept,
            "aof_bytes": aof, "aof_over_kept": aof / kept}


def disk_memory(directory: Path, pages: list[Fetched], copies: int) -> dict[str, float]:
    kept = filled(DiskStore(directory, 10**12), pages, copies)
    allocated = sum(entry.stat().st_blocks * 512 for entry in directory.iterdir())
    return {"entries": copies * len(pages), "kept_bytes": kept, "held_bytes": allocated,
            "held_over_kept": allocated / kept}


def trace(urls: list[str], rounds: int, shuffled: bool, seed: int = 7) -> list[str]:
    order, requests = list(urls), []
    shuffle = random.Random(seed).shuffle
    for _ in range(rounds):
        if shuffled:
            shuffle(order)
        requests += order
    return requests


def hit_rates(requests: list[str], replicas: int) -> dict[str, float]:
    """Hits per request round-robin over `replicas`, each with its own cache or one shared (no eviction, no
    expiry: every miss is a URL that cache had not seen)."""
    own: list[set[str]] = [set() for _ in range(replicas)]
    shared: set[str] = set()
    own_hits = shared_hits = 0
    for n, url in enumerate(requests):
        own_hits += url in own[n % replicas]
        shared_hits += url in shared
        own[n % replicas].add(url)
        shared.add(url)
    return {"requests": len(requests), "per_replica": own_hits / len(requests), "shared": shared_hits / len(requests),
            "per_replica_fetches": len(requests) - own_hits, "shared_fetches": len(requests) - shared_hits}


def end_to_end(web: OfflineWeb, urls: list[str], rounds: int, replicas: int, env: dict[str, str],
               workdir: Path) -> dict:
    """The in-order trace through HAProxy: each scrape's cacheState and ms, and the fetches the site saw."""
    paths = {httpx.URL(url).path for url in urls}
    states, hit_ms, miss_ms = [], [], []
    with scaled_agents(web.url, workdir, replicas, env={"FETCH_ALLOW_HOSTS": "127.0.0.1", "EXTRACT_WORKERS": "1",
                                                        **env}) as agents, \
            httpx.Client(base_url=agents.url, timeout=60) as http:
        for replica in agents.replicas:  # each replica's extraction worker gets its first page outside the trace
            http.post(f"{replica.url}/v2/scrape", json={"url": urls[0], "maxAge": 0, "storeInCache": False})
        seen_before = sum(1 for request in list(web.requests) if request["path"] in paths)
        for url in trace(urls, rounds, shuffled=False):
            started = time.perf_counter()
            response = http.post("/v2/scrape", json={"url": url, "formats": ["markdown"], "maxAge": HOUR_MS})
            elapsed = ms_since(started)
            response.raise_for_status()
            state = response.json()["data"]["metadata"]["cacheState"]
            states.append(state)
            (hit_ms if state == "hit" else miss_ms).append(elapsed)
        fetched = sum(1 for request in list(web.requests) if request["path"] in paths) - seen_before
    return {"requests": len(states), "hit_rate": states.count("hit") / len(states), "site_fetches": fetched,
            "hit_ms": statistics.median(hit_ms) if hit_ms else None, "miss_ms": statistics.median(miss_ms),
            "mean_ms": statistics.fmean(hit_ms + miss_ms), "p95_ms": spread(hit_ms + miss_ms)["p95"]}


def print_tables(results: dict, args: argparse.Namespace) -> None:
    pages = results["corpus"]
    print(f"\n{pages['pages']} offline-web pages, median {pages['median_raw_bytes'] / 1000:.1f} kB raw, "
          f"{pages['median_kept_bytes'] / 1000:.1f} kB kept; load average {results['load_before']}\n")
    print("ms per page (median / p95)\n")
    print(f"| {'store':33} | {'read':>13} | {'write':>13} | {'PageCache.get':>13} | {'PageCache.put':>13} |")
    print(f"|{'-' * 35}|{'-' * 15}|{'-' * 15}|{'-' * 15}|{'-' * 15}|")
    for name, costs in results["costs"].items():
        cells = " | ".join(f"{costs[op]['median']:5.3f} / {costs[op]['p95']:5.3f}" for op in ("read", "write", "get",
                                                                                               "put"))
        print(f"| {name:33} | {cells} |")
    print(f"\nmemory: {args.copies} copies of each page ({results['memory']['redis']['entries']} entries)\n")
    print(f"| {'store':6} | {'kept MB':>8} | {'held MB':>8} | {'held/kept':>9} | {'AOF MB':>7} |")
    print(f"|{'-' * 8}|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 9}|")
    for name, figures in results["memory"].items():
        aof = f"{figures['aof_bytes'] / 1e6:7.2f}" if "aof_bytes" in figures else f"{'-':>7}"
        print(f"| {name:6} | {figures['kept_bytes'] / 1e6:8.2f} | {figures['held_bytes'] / 1e6:8.2f} | "
              f"{figures['held_over_kept']:9.2f} | {aof} |")
    print(f"\nhit rate over {args.replicas} replicas round-robin (simulated)\n")
    print(f"| {'trace':28} | {'requests':>8} | {'per replica':>11} | {'shared':>6} | {'fetches own/shared':>18} |")
    print(f"|{'-' * 30}|{'-' * 10}|{'-' * 13}|{'-' * 8}|{'-' * 20}|")
    for name, rates in results["simulated"].items():
        fetches = f"{rates['per_replica_fetches']} / {rates['shared_fetches']}"
        print(f"| {name:28} | {rates['requests']:8} | {rates['per_replica']:11.2f} | {rates['shared']:6.2f} | "
              f"{fetches:>18} |")
    print(f"\nend to end: {args.rounds} rounds of the pages in order through HAProxy over {args.replicas} agent-svc, "
          f"each page answering after {args.site_delay_ms} ms\n")
    print(f"| {'page cache':20} | {'hit rate':>8} | {'site fetches':>12} | {'hit ms':>6} | {'miss ms':>7} | "
          f"{'mean ms':>7} | {'p95 ms':>6} |")
    print(f"|{'-' * 22}|{'-' * 10}|{'-' * 14}|{'-' * 8}|{'-' * 9}|{'-' * 9}|{'-' * 8}|")
    for name, run in results["end_to_end"].items():
        hit = f"{run['hit_ms']:6.1f}" if run["hit_ms"] is not None else f"{'-':>6}"
        print(f"| {name:20} | {run['hit_rate']:8.2f} | {run['site_fetches']:12} | {hit} | {run['miss_ms']:7.1f} | "
              f"{run['mean_ms']:7.1f} | {run['p95_ms']:6.1f} |")
    shared, own = results["end_to_end"]["redis (shared)"], results["end_to_end"]["disk (per replica)"]
    print(f"\nmean scrape, per replica / shared: {own['mean_ms'] / shared['mean_ms']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5, help="lookups and writes of each page per store")
    parser.add_argument("--copies", type=int, default=25, help="copies of each page written to measure memory")
    parser.add_argument("--rounds", type=int, default=3, help="scrapes of each page in the traces")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--site-delay-ms", type=int, default=150, help="each page's answer held this long, end to end")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "page_cache_shared.json")
    args = parser.parse_args()
    results: dict = {"load_before": [round(load, 2) for load in os.getloadavg()]}
    sites, cache, db = prepare_index(args.sites)
    with tempfile.TemporaryDirectory() as tmp, OfflineWeb(sites, cache, db) as web, \
            RedisServer(Path(tmp)) as redis_server:
        pages = corpus(web.url, args.pages)
        results["corpus"] = {"pages": len(pages), "median_raw_bytes": statistics.median(len(p.body) for p in pages),
                             "median_kept_bytes": statistics.median(len(encoded(p, 0)) for p in pages)}
        client = redis.Redis.from_url(redis_server.url)
        results["costs"] = {"memory": store_costs(MemoryStore(10**12), pages, args.repeats),
                            "disk": store_costs(DiskStore(Path(tmp) / "costs", 10**12), pages, args.repeats),
                            "redis, AOF always": store_costs(RedisStore(redis_server.url, 10**12, DAY_S), pages,
                                                             args.repeats),
                            "redis, AOF always, every use kept": store_costs(
                                RedisStore(redis_server.url, 10**12, DAY_S, touch_after_s=0), pages, args.repeats)}
        client.config_set("appendfsync", "everysec")
        results["costs"]["redis, AOF everysec"] = store_costs(RedisStore(redis_server.url, 10**12, DAY_S), pages,
                                                              args.repeats)
        results["memory"] = {"redis": redis_memory(redis_server.url, pages, args.copies),
                             "disk": disk_memory(Path(tmp) / "memory", pages, args.copies)}
        urls = [page.url for page in pages]
        results["simulated"] = {f"{rounds} rounds, {order}": hit_rates(trace(urls, rounds, order == "shuffled"),
                                                                       args.replicas)
                                for rounds in (args.rounds, args.rounds * 2) for order in ("in order", "shuffled")}
        delayed = [f"{url}?delay_ms={args.site_delay_ms}" for url in urls]
        results["end_to_end"] = {
            name: end_to_end(web, delayed, args.rounds, args.replicas, env, Path(tmp) / name.split()[0])
            for name, env in (("disk (per replica)", {"PAGE_CACHE": "disk"}),
                              ("redis (shared)", {"PAGE_CACHE": "redis"}))}
    results["load_after"] = [round(load, 2) for load in os.getloadavg()]
    print_tables(results, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                   indent=2))


if __name__ == "__main__":
    main()
