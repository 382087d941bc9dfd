"""Throughput and latency under concurrency: N clients for M seconds, keyword mode against raw searx, and
optionally the ranked modes.

Brings up the offline web, a real Debian searx and agent-svc on loopback (and semantic-svc when a ranked mode
is asked for). Each client sends queries back to back; the targets take turns in short slices (raw, keyword,
…, then the reverse) so that load from other jobs on this shared machine falls on all. For a ranked mode it
also counts the answers that fell back (a warning that SearXNG's order or snippets stood in) and those that
took longer than the pipeline's deadline. Prints a table with the ratios and writes JSON. The queries repeat,
so semantic-svc's embedding cache is off (EMBED_CACHE_SIZE=0 unless set): every answer pays its model work, as
it would on queries and pages never seen before.

    .venv/bin/python bench/concurrency.py [--clients 8] [--seconds 30] [--slices 6] [--targets raw_searx,keyword]
    .venv/bin/python bench/concurrency.py --targets hybrid --sites eval/data/sites.tsv
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.stack import wisp_stack

ROOT = Path(__file__).parent.parent
FALLBACKS = ("results keep SearXNG's order", "ranked by snippets alone")
DEADLINE_MS = 8000  # PIPELINE_DEADLINE_S
QUERIES = [
    "sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal", "mkdocs theme configuration",
    "sqlite release 3.40", "git stash changes", "vacuum database file", "deploying your docs",
    "isolation between connections", "cherry pick a commit",
]


def raw_request(searx_url: str):
    def send(client: httpx.AsyncClient, q: str):
        return client.get(f"{searx_url}/search", params={"q": q, "format": "json", "categories": "general",
                                                         "language": "en-US"})
    return send


def mode_request(agent_url: str, mode: str):
    def send(client: httpx.AsyncClient, q: str):
        return client.post(f"{agent_url}/v2/search", json={"query": q, "limit": 10, "retrieval_mode": mode})
    return send


async def load(send, clients: int, seconds: float) -> tuple[list[float], int, int]:
    """`clients` loops sending back to back for `seconds`; returns latencies (ms) of successes, errors, and
    how many answers fell back."""
    latencies: list[float] = []
    errors = fallbacks = 0
    queries = itertools.cycle(QUERIES)
    deadline = time.monotonic() + seconds

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal errors, fallbacks
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                response = await send(client, next(queries))
                response.raise_for_status()
                latencies.append((time.perf_counter() - started) * 1000)
                warning = response.json().get("warning", "") if response.request.method == "POST" else ""
                fallbacks += any(f in warning for f in FALLBACKS)
            except httpx.HTTPError:
                errors += 1

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
    return latencies, errors, fallbacks


async def run(searx_url: str, agent_url: str, names: list[str], clients: int, seconds: float, slices: int) -> dict:
    targets = {name: raw_request(searx_url) if name == "raw_searx" else mode_request(agent_url, name)
               for name in names}
    results = {name: {"latencies": [], "errors": 0, "fallbacks": 0, "seconds": 0.0} for name in targets}
    for send in targets.values():  # warm-up of every side's connections and caches
        await load(send, clients, 1.0)
    per_slice = seconds / slices
    for i in range(slices):
        order = list(targets) if i % 2 == 0 else list(reversed(targets))
        for name in order:
            latencies, errors, fallbacks = await load(targets[name], clients, per_slice)
            results[name]["latencies"] += latencies
            results[name]["errors"] += errors
            results[name]["fallbacks"] += fallbacks
            results[name]["seconds"] += per_slice
    return {name: _stats(r) for name, r in results.items()}


def _stats(result: dict) -> dict:
    latencies = sorted(result["latencies"])
    return {
        "requests": len(latencies), "errors": result["errors"],
        "fallbacks": result["fallbacks"], "over_deadline": sum(t > DEADLINE_MS for t in latencies),
        "throughput_rps": len(latencies) / result["seconds"],
        "p50_ms": statistics.median(latencies) if latencies else None,
        "p95_ms": latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0, help="per target, in total")
    parser.add_argument("--slices", type=int, default=6)
    parser.add_argument("--targets", default="raw_searx,keyword", help="raw_searx and retrieval modes")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "concurrency.json")
    args = parser.parse_args()
    os.environ.setdefault("EMBED_CACHE_SIZE", "0")
    names = [n.strip() for n in args.targets.split(",") if n.strip()]
    ranked = any(n not in ("raw_searx", "keyword") for n in names)
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp), with_semantic=ranked) as stack:
        result = asyncio.run(run(stack.offline.searx.url, stack.agent.url, names, args.clients, args.seconds,
                                 args.slices))
    print(f"\n{args.clients} clients, {args.seconds:.0f} s per target in {args.slices} alternating slices\n")
    print("| target | requests | errors | fell back | over the deadline | req/s | p50 ms | p95 ms |\n"
          "|---|---|---|---|---|---|---|---|")
    for name, r in result.items():
        print(f"| {name} | {r['requests']} | {r['errors']} | {r['fallbacks']} | {r['over_deadline']} | "
              f"{r['throughput_rps']:.1f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} |")
    ratios = {}
    if {"raw_searx", "keyword"} <= set(result):
        raw, keyword = result["raw_searx"], result["keyword"]
        ratios = {"throughput_keyword_over_raw": keyword["throughput_rps"] / raw["throughput_rps"],
                  "p50_keyword_over_raw": keyword["p50_ms"] / raw["p50_ms"]}
        print(f"\nkeyword/raw: throughput {ratios['throughput_keyword_over_raw']:.2f}, "
              f"p50 latency {ratios['p50_keyword_over_raw']:.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {"clients": args.clients, "seconds": args.seconds, "targets": names},
                                    **result,
                                    "ratios": ratios}, indent=2))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
