"""What API keys and limits cost: requests per second of N concurrent keyword clients against an open agent-svc
and against one with API_KEYS, RATE_LIMIT_PER_MIN (too high to refuse) and RANKED_CONCURRENCY_PER_KEY set.

Brings up the offline web, a real Debian searx and both agent-svcs on loopback. The two take turns in short
slices (open, guarded, then the reverse) so that load from other jobs on this shared machine falls on both.
`--route active` sends GET /v2/crawl/active instead of keyword searches: a route that does not wait on searx,
where the gate's share of the work is largest. `--baseline DIR` adds a third agent-svc from a checkout of Wisp
from before keys and metrics existed (`git worktree add /tmp/wisp-base 830ba3d`), so that the table shows what
metrics, request ids and the access log cost too. Prints a table and writes JSON.

    .venv/bin/python bench/auth_overhead.py [--clients 50] [--seconds 20] [--slices 6] [--route search|active]
        [--baseline DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from offline_web.stack import offline_search_stack, uvicorn_service

ROOT = Path(__file__).parent.parent
KEY = "bench-key-0123456789abcdefghij"
QUERIES = ["sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal",
           "mkdocs theme configuration", "git stash changes", "vacuum database file"]


async def slice_of(url: str, headers: dict[str, str], route: str, clients: int, seconds: float) -> list[float]:
    """Latencies (ms) of the requests `clients` back-to-back clients completed in `seconds`."""
    latencies: list[float] = []
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30, limits=limits) as http:
        async def client(n: int) -> None:
            for query in itertools.cycle(QUERIES[n % len(QUERIES):] + QUERIES[:n % len(QUERIES)]):
                if time.monotonic() >= stop:
                    return
                started = time.perf_counter()
                if route == "active":
                    response = await http.get("/v2/crawl/active")
                else:
                    response = await http.post("/v2/search", json={"query": query, "limit": 5})
                response.raise_for_status()
                latencies.append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(client(n) for n in range(clients)))
    return latencies


def run(targets: dict[str, tuple[str, dict[str, str]]], route: str, clients: int, seconds: float, slices: int
        ) -> dict:
    results: dict[str, dict] = {name: {"requests": 0, "seconds": 0.0, "latencies": []} for name in targets}
    order = list(targets)
    for name in order:  # warm-up: connections, searx's and uvicorn's first requests
        asyncio.run(slice_of(*targets[name], route, clients, 2))
    for n in range(slices):
        for name in order if n % 2 == 0 else order[::-1]:
            latencies = asyncio.run(slice_of(*targets[name], route, clients, seconds / slices))
            results[name]["requests"] += len(latencies)
            results[name]["seconds"] += seconds / slices
            results[name]["latencies"] += latencies
    for result in results.values():
        ordered = sorted(result.pop("latencies"))
        result["rps"] = result["requests"] / result["seconds"]
        result["p50_ms"] = statistics.median(ordered)
        result["p95_ms"] = ordered[round(0.95 * (len(ordered) - 1))]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20, help="per target, all slices together")
    parser.add_argument("--slices", type=int, default=6)
    parser.add_argument("--route", choices=["search", "active"], default="search")
    parser.add_argument("--baseline", type=Path, help="a Wisp checkout without keys and metrics")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "auth_overhead.json")
    args = parser.parse_args()
    guarded_env = {"API_KEYS": KEY, "RATE_LIMIT_PER_MIN": "100000000", "RANKED_CONCURRENCY_PER_KEY": "4"}
    with tempfile.TemporaryDirectory() as tmp, offline_search_stack(args.sites, Path(tmp)) as stack, \
            ExitStack() as running:
        def agent(name: str, env: dict[str, str]) -> str:
            service = uvicorn_service(name, "agent.app:app", Path(tmp), {
                "SEARXNG_URL": stack.searx.url, "CRAWL_DB": f"{tmp}/{name}.sqlite", **env})
            return running.enter_context(service).url

        targets = {"open": (agent("agent-open", {}), {}),
                   "guarded": (agent("agent-guarded", guarded_env), {"Authorization": f"Bearer {KEY}"})}
        if args.baseline:  # its agent package ahead of the installed one; wisp-text is shared
            baseline_path = f"{args.baseline.resolve()}/agent-svc"
            targets = {"baseline": (agent("agent-baseline", {"PYTHONPATH": baseline_path}), {}), **targets}
        results = run(targets, args.route, args.clients, args.seconds, args.slices)
    print(f"\n{args.clients} clients, {args.route}, {args.seconds:.0f} s per target in {args.slices} slices\n")
    print(f"| {'agent-svc':10} | {'req/s':>7} | {'p50 ms':>7} | {'p95 ms':>7} |\n|{'-' * 12}|{'-' * 9}|"
          f"{'-' * 9}|{'-' * 9}|")
    for name, result in results.items():
        print(f"| {name:10} | {result['rps']:7.1f} | {result['p50_ms']:7.1f} | {result['p95_ms']:7.1f} |")
    print(f"\nguarded/open throughput: {results['guarded']['rps'] / results['open']['rps']:.3f}")
    if "baseline" in results:
        print(f"open/baseline throughput: {results['open']['rps'] / results['baseline']['rps']:.3f}, "
              f"guarded/baseline: {results['guarded']['rps'] / results['baseline']['rps']:.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                   indent=2))


if __name__ == "__main__":
    main()
