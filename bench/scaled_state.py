"""What keeping the recent scrapes and the usage counts in Redis (REDIS_URL) costs, against the in-process ones
measured in the same run. Two parts, one table each:

- in-process: per Document or credit, the recent scrapes' `put` and `get` (Documents of the offline-web pages
  bench/page_cache.py scrapes, the HTML as their markdown) and the usage counts' credit and read, on the in-process
  kinds, then on a real redis-server on loopback with its AOF fsynced at every write (as the launcher runs it),
  then with `appendfsync everysec` (as docker-compose.scale.yml runs Valkey). `put at the bound` keeps the count
  bound full, so that every put also drops the oldest. A credit is measured twice: what the request pays (the
  background task started) and the task's round trip to Redis, off the request's path. Medians and p95 in ms;
- end to end: two agent-svc processes on one offline web, one without REDIS_URL and one on a redis-server (AOF
  fsynced at every write), each page scraped by both in turn (which one first alternates), its Document read back
  by `GET /v2/scrape/{id}`, and `/v2/team/credit-usage` read: medians of what a client measures, and the ratio.

Prints the tables and writes JSON.

    .venv/bin/python bench/scaled_state.py [--pages 40] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import redis
from page_cache_shared import corpus, ms_since, spread
from redis.asyncio import Redis

from agent.core.pages import Fetched
from agent.state.recent import Recent
from agent.state.recent.memory import RecentScrapes
from agent.state.recent.redis import RedisRecentScrapes
from agent.state.usage.memory import Usage
from agent.state.usage.redis import RedisUsage
from offline_web.redis_server import RedisServer
from offline_web.server import OfflineWeb
from offline_web.stack import prepare_index, uvicorn_service

ROOT = Path(__file__).parent.parent
NO_BOUND = 10**12
KEPT_S = 3600.0
Timed = dict[str, list[float]]


def document(page: Fetched) -> dict[str, Any]:
    return {"markdown": page.body.decode(page.charset or "utf-8", "replace"),
            "metadata": {"scrapeId": str(uuid.uuid4()), "sourceURL": page.url, "statusCode": 200}}


async def timed(times: list[float], call: Callable[[], Awaitable[Any]]) -> None:
    started = time.perf_counter()
    await call()
    times.append(ms_since(started))


async def recent_costs(unbounded: Recent, bounded: Recent, pages: list[Fetched], repeats: int, costs: Timed) -> None:
    """Each page's Document kept and read back, `repeats` times under fresh ids; then kept past a full bound."""
    for _ in range(repeats):
        documents = [document(page) for page in pages]
        for doc in documents:
            await timed(costs["put"], lambda doc=doc: unbounded.put("key:bench", doc))
        for doc in documents:
            await timed(costs["get"], lambda doc=doc: unbounded.get(doc["metadata"]["scrapeId"]))
        for doc in documents:
            await timed(costs["put at the bound"], lambda doc=doc: bounded.put("key:bench", doc))


async def usage_costs(usage: Usage | RedisUsage, clients: int, repeats: int, costs: Timed) -> None:
    """One credit per client, `repeats` times: what `ended` costs the request, then the credit's trip to Redis
    (the drain of its task: nothing with the in-process counts); and each client's counts read back."""
    for _ in range(repeats):
        for n in range(clients):
            client = f"key:bench-{n}"
            usage.began(client)
            started = time.perf_counter()
            usage.ended(client, credited=True)
            costs["credit (request's path)"].append(ms_since(started))
            if isinstance(usage, RedisUsage):
                await timed(costs["credit (Redis round trip)"], usage.drain)
        for n in range(clients):
            await timed(costs["read"], lambda n=n: usage.counted(f"key:bench-{n}"))


def in_process(pages: list[Fetched], repeats: int) -> Timed:
    costs: Timed = {name: [] for name in ("put", "get", "put at the bound", "credit (request's path)", "read")}

    async def run() -> None:
        await recent_costs(RecentScrapes(NO_BOUND, NO_BOUND, KEPT_S), RecentScrapes(len(pages), NO_BOUND, KEPT_S),
                           pages, repeats, costs)
        await usage_costs(Usage(), len(pages), repeats, costs)
    asyncio.run(run())
    return costs


def on_redis(url: str, pages: list[Fetched], repeats: int) -> Timed:
    costs: Timed = {name: [] for name in ("put", "get", "put at the bound", "credit (request's path)",
                                          "credit (Redis round trip)", "read")}

    async def run() -> None:
        client = Redis.from_url(url)
        await client.flushdb()
        await recent_costs(RedisRecentScrapes(client, NO_BOUND, NO_BOUND, KEPT_S),
                           RedisRecentScrapes(client, len(pages), NO_BOUND, KEPT_S), pages, repeats, costs)
        await usage_costs(RedisUsage(client), len(pages), repeats, costs)
        await client.aclose()
    asyncio.run(run())
    return costs


def end_to_end(web: OfflineWeb, urls: list[str], redis_url: str, workdir: Path) -> dict[str, dict[str, float]]:
    """Each URL scraped, read back and its credits read on both agent-svc, alternating which goes first."""
    def agent(name: str, **env: str) -> Any:
        return uvicorn_service(name, "agent.app:app", workdir, {
            "SEARXNG_URL": web.url, "FETCH_ALLOW_HOSTS": "127.0.0.1", "EXTRACT_WORKERS": "1",
            "CRAWL_DB": str(workdir / f"{name}.sqlite"), "PAGE_CACHE": "off", **env})

    times: dict[str, Timed] = {kind: {"scrape": [], "GET scrape/{id}": [], "credit-usage": []}
                               for kind in ("in-process", "redis")}
    with agent("agent-alone") as alone, agent("agent-redis", REDIS_URL=redis_url) as shared, \
            httpx.Client(timeout=60) as http:
        agents = {"in-process": alone.url, "redis": shared.url}
        for base in agents.values():  # each extraction worker's first page, outside the figures
            http.post(f"{base}/v2/scrape", json={"url": urls[0]}).raise_for_status()
        for n, url in enumerate(urls):
            for kind in (("in-process", "redis") if n % 2 else ("redis", "in-process")):
                base, kind_times = agents[kind], times[kind]
                started = time.perf_counter()
                scraped = http.post(f"{base}/v2/scrape", json={"url": url, "formats": ["markdown"]})
                kind_times["scrape"].append(ms_since(started))
                scrape_id = scraped.json()["data"]["metadata"]["scrapeId"]
                started = time.perf_counter()
                http.get(f"{base}/v2/scrape/{scrape_id}").raise_for_status()
                kind_times["GET scrape/{id}"].append(ms_since(started))
                started = time.perf_counter()
                http.get(f"{base}/v2/team/credit-usage").raise_for_status()
                kind_times["credit-usage"].append(ms_since(started))
    return {kind: {op: statistics.median(values) for op, values in ops.items()} for kind, ops in times.items()}


def print_tables(results: dict, args: argparse.Namespace) -> None:
    print(f"\n{results['corpus']['pages']} offline-web pages (Documents of median "
          f"{results['corpus']['median_document_bytes'] / 1000:.1f} kB of JSON), {args.repeats} repeats; load average "
          f"{results['load_before']} before, {results['load_after']} after\n")
    print("the stores alone, called from this process, ms per call (median / p95)\n")
    kinds = list(results["costs"])
    print(f"| {'operation':26} | " + " | ".join(f"{kind:>26}" for kind in kinds) + " |")
    print(f"|{'-' * 28}|" + "|".join("-" * 28 for _ in kinds) + "|")
    for op in results["costs"][kinds[-1]]:
        cells = [f"{c[op]['median']:11.4f} / {c[op]['p95']:11.4f}" if op in c else f"{'-':>26}"
                 for c in results["costs"].values()]
        print(f"| {op:26} | " + " | ".join(cells) + " |")
    print("\nend to end, one agent-svc each, ms (median)\n")
    print(f"| {'request':18} | {'in-process':>10} | {'redis':>8} | {'redis/in-process':>16} |")
    print(f"|{'-' * 20}|{'-' * 12}|{'-' * 10}|{'-' * 18}|")
    alone, shared = results["end_to_end"]["in-process"], results["end_to_end"]["redis"]
    for op in alone:
        print(f"| {op:18} | {alone[op]:10.2f} | {shared[op]:8.2f} | {shared[op] / alone[op]:16.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5, help="puts, gets and credits of each page or client")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "scaled_state.json")
    args = parser.parse_args()
    results: dict = {"load_before": [round(load, 2) for load in os.getloadavg()]}
    sites, cache, db = prepare_index(args.sites)
    with tempfile.TemporaryDirectory() as tmp, OfflineWeb(sites, cache, db) as web, \
            RedisServer(Path(tmp)) as redis_server:
        pages = corpus(web.url, args.pages)
        results["corpus"] = {"pages": len(pages), "median_document_bytes": statistics.median(
            len(json.dumps(document(page), separators=(",", ":"))) for page in pages)}
        raw = {"in-process": in_process(pages, args.repeats),
               "redis, AOF always": on_redis(redis_server.url, pages, args.repeats)}
        redis.Redis.from_url(redis_server.url).config_set("appendfsync", "everysec")
        raw["redis, AOF everysec"] = on_redis(redis_server.url, pages, args.repeats)
        results["costs"] = {kind: {op: spread(times) for op, times in ops.items()} for kind, ops in raw.items()}
        redis.Redis.from_url(redis_server.url).config_set("appendfsync", "always")
        results["end_to_end"] = end_to_end(web, [page.url for page in pages], redis_server.url, Path(tmp))
    results["load_after"] = [round(load, 2) for load in os.getloadavg()]
    print_tables(results, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                   indent=2))


if __name__ == "__main__":
    main()
