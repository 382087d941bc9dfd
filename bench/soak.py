"""Memory under a long mixed load: does agent-svc (with its extraction workers) and semantic-svc come back down?

Brings up the offline web, Debian searx, semantic-svc and agent-svc on loopback, then for `--minutes` runs
clients side by side: keyword searches, hybrid searches, keyword searches with scrapeOptions, /v2/scrape of
real pages, /v2/scrape of hostile pages (5 MB of tiny paragraphs, a gzip bomb), and one crawl into the vector
index at the start. The resident memory of each service's session is sampled every `--every` seconds, and
once more after a quiet minute. Prints a table and writes JSON.

    .venv/bin/python bench/soak.py [--minutes 10] [--every 15]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.memory import session_rss_mib
from offline_web.stack import WispStack, wisp_stack

ROOT = Path(__file__).parent.parent
QUERIES = ["sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal",
           "mkdocs theme configuration", "git stash changes", "vacuum database file", "cherry pick a commit"]
PAGES = ["www.sqlite.org/wal.html", "www.sqlite.org/atomiccommit.html", "git-scm.com/docs/git-rebase.html"]
HOSTILE = ["_test/tiny?kb=5120", "_test/bomb?mb=200"]


def workloads(web: str) -> dict[str, tuple[int, object]]:
    """name → (clients, a function of a counter that gives (path, body))."""
    queries, pages, hostile = itertools.cycle(QUERIES), itertools.cycle(PAGES), itertools.cycle(HOSTILE)
    return {
        "keyword": (4, lambda: ("/v2/search", {"query": next(queries), "limit": 10})),
        "hybrid": (2, lambda: ("/v2/search", {"query": next(queries), "limit": 5, "retrieval_mode": "hybrid"})),
        "keyword+scrape": (1, lambda: ("/v2/search", {"query": next(queries), "limit": 3,
                                                      "scrapeOptions": {"formats": ["markdown"]}})),
        "scrape": (1, lambda: ("/v2/scrape", {"url": f"{web}/{next(pages)}", "formats": ["markdown", "links"]})),
        "hostile scrape": (1, lambda: ("/v2/scrape", {"url": f"{web}/{next(hostile)}", "timeout": 8000})),
    }


async def soak(stack: WispStack, minutes: float, every_s: float) -> dict:
    web, agent = stack.offline.web.url, stack.agent.url
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    latencies: dict[str, list[float]] = collections.defaultdict(list)
    samples: list[dict] = []
    deadline = time.monotonic() + minutes * 60

    def memory(at: float) -> dict:
        assert stack.agent.process is not None and stack.semantic is not None and stack.semantic.process is not None
        return {"t_s": round(at, 1), "agent_mib": round(session_rss_mib(stack.agent.process.pid)),
                "semantic_mib": round(session_rss_mib(stack.semantic.process.pid))}

    async def client(http: httpx.AsyncClient, name: str, next_request) -> None:
        while time.monotonic() < deadline:
            path, body = next_request()
            started = time.perf_counter()
            try:
                response = await http.post(agent + path, json=body)
                counts[name][str(response.status_code)] += 1
                latencies[name].append((time.perf_counter() - started) * 1000)
            except httpx.HTTPError as e:
                counts[name][type(e).__name__] += 1

    async def sampler(began: float) -> None:
        while time.monotonic() < deadline:
            samples.append(memory(time.monotonic() - began))
            await asyncio.sleep(every_s)

    async with httpx.AsyncClient(timeout=60) as http:
        began = time.monotonic()
        samples.append(memory(0.0))
        crawl = await http.post(agent + "/v2/crawl", json={"url": f"{web}/www.sqlite.org/", "limit": 60})
        tasks = [client(http, name, make) for name, (n, make) in workloads(web).items() for _ in range(n)]
        await asyncio.gather(sampler(began), *tasks)
        crawl_status = (await http.get(f"{agent}/v2/crawl/{crawl.json()['id']}")).json()
        await asyncio.sleep(60)
        samples.append(memory(time.monotonic() - began))
    return {"samples": samples, "crawl": {k: crawl_status.get(k) for k in ("status", "completed", "total")},
            "requests": {name: dict(c) for name, c in counts.items()},
            "p50_ms": {name: round(statistics.median(v)) for name, v in latencies.items() if v}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=15.0)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "soak.json")
    args = parser.parse_args()
    os.environ.setdefault("EMBED_CACHE_SIZE", "0")
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp), with_semantic=True) as stack:
        result = asyncio.run(soak(stack, args.minutes, args.every))
    samples = result["samples"]
    agent, semantic = [s["agent_mib"] for s in samples], [s["semantic_mib"] for s in samples]
    result["summary"] = {"agent_mib": {"start": agent[0], "peak": max(agent), "end_of_load": agent[-2],
                                       "after_quiet_minute": agent[-1]},
                         "semantic_mib": {"start": semantic[0], "peak": max(semantic), "end_of_load": semantic[-2],
                                          "after_quiet_minute": semantic[-1]}}
    print(f"\n{args.minutes:g}-minute mixed soak; resident MiB of each service's session\n")
    print("| service | start | peak | end of load | after a quiet minute |\n|---|---|---|---|---|")
    for name, s in result["summary"].items():
        print(f"| {name.removesuffix('_mib')} | {s['start']} | {s['peak']} | {s['end_of_load']} | "
              f"{s['after_quiet_minute']} |")
    print("\n| workload | answers by status | p50 ms |\n|---|---|---|")
    for name, statuses in result["requests"].items():
        print(f"| {name} | {statuses} | {result['p50_ms'].get(name, '-')} |")
    print(f"\ncrawl: {result['crawl']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {"minutes": args.minutes, "every_s": args.every}, **result}, indent=2))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
