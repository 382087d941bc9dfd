"""The ranked modes' cost beyond SearXNG and beyond keyword mode, per stage, optionally against an older tree.

Brings up the offline web (the full corpus by default), searx, semantic-svc and agent-svc on loopback, and with
`--baseline-tree` a second agent-svc running an older checkout's code on the same stack (its packages first on
PYTHONPATH), so that before and after are measured in one run, on the same machine state. Every query runs in
keyword, hybrid and semantic mode on each agent, the agents taking turns first. Reported per agent and mode:
medians of the wall time, of `total − searxng`, of every stage in `timings_ms`, the hybrid and semantic p50
above keyword's p50, and how many answers fell back (a warning that SearXNG's order or snippets stood in). The
rerank stage is then timed alone through semantic-svc's /rerank for 16 and 50 chunks of about 1,200 characters.
semantic-svc's embedding cache is off (EMBED_CACHE_SIZE=0 unless set), so that every answer pays its model work.

    .venv/bin/python bench/ranked_modes.py [--queries eval/data/dev/queries.tsv] [--rounds 1] \
        [--baseline-tree /path/to/old/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from offline_web.stack import agent_app, uvicorn_service, wisp_stack
from wisp_eval.dataset import load_queries

ROOT = Path(__file__).parent.parent
MODES = ("keyword", "hybrid", "semantic")
PACKAGES = ("agent-svc", "wisp-text", "wisp-obs")
FALLBACKS = ("results keep SearXNG's order", "ranked by snippets alone")


def run_query(client: httpx.Client, agent: str, query: str, mode: str) -> dict:
    started = time.perf_counter()
    body = client.post(f"{agent}/v2/search", json={"query": query, "limit": 10, "retrieval_mode": mode,
                                                   "fetch_top": 8}).json()
    wall = (time.perf_counter() - started) * 1000
    timings = body["timings_ms"]
    return {"wall": wall, "beyond_searxng": timings["total"] - timings["searxng"], **timings,
            "fell_back": any(f in body.get("warning", "") for f in FALLBACKS),
            "chunks": [p["text"] for w in body["data"]["web"] for p in w.get("passages", [])]}


def summary(rows: list[dict]) -> dict:
    stages = sorted({k for r in rows for k in r} - {"fell_back", "chunks"})
    result = {stage: round(statistics.median([r.get(stage, 0.0) for r in rows]), 1) for stage in stages}
    result["p95_wall"] = round(statistics.quantiles([r["wall"] for r in rows], n=20)[-1], 1) if len(rows) > 1 else 0
    result["fallbacks"] = sum(r["fell_back"] for r in rows)
    result["n"] = len(rows)
    return result


def rerank_costs(client: httpx.Client, semantic: str, chunks: list[str], queries: list[str], runs: int = 5) -> dict:
    long_chunks = [c for c in chunks if 900 <= len(c) <= 1300] or chunks
    result = {}
    for n in (16, 50):
        passages = (long_chunks * (n // max(len(long_chunks), 1) + 1))[:n]
        times = []
        for i in range(runs + 1):
            started = time.perf_counter()
            client.post(f"{semantic}/rerank", json={"query": queries[i % len(queries)], "passages": passages})
            times.append((time.perf_counter() - started) * 1000)
        result[str(n)] = {"median_ms": round(statistics.median(times[1:]), 1),
                          "mean_chars": round(statistics.fmean(map(len, passages)))}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--queries", type=Path, default=ROOT / "eval" / "data" / "dev" / "queries.tsv")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline-tree", type=Path, help="an older checkout whose agent-svc runs beside this one")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ranked_modes.json")
    args = parser.parse_args()
    # Both agents ask semantic-svc about the same pages: with its embedding cache on, the second to ask would
    # be timed on cache hits. The cache's own gain is a separate question (bench/semantic_load.py).
    os.environ.setdefault("EMBED_CACHE_SIZE", "0")
    queries = [q.text for q in load_queries(args.queries)]
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp), with_semantic=True) as stack, \
            ExitStack() as running, httpx.Client(timeout=120) as client:
        agents = {"current": stack.agent.url}
        if args.baseline_tree:
            env = {"SEARXNG_URL": stack.offline.searx.url, "FETCH_ALLOW_HOSTS": "127.0.0.1",
                   "SEMANTIC_SVC_URL": stack.semantic.url,
                   "PYTHONPATH": ":".join(str(args.baseline_tree.resolve() / p) for p in PACKAGES)}
            baseline = uvicorn_service("agent-baseline", agent_app(args.baseline_tree.resolve()), Path(tmp), env)
            agents["baseline"] = running.enter_context(baseline.started(timeout_s=120)).url
        for url in agents.values():  # warm: worker processes, connections, models
            run_query(client, url, queries[0], "hybrid")
        rows: dict[tuple[str, str], list[dict]] = {(a, m): [] for a in agents for m in MODES}
        turn = 0
        for _ in range(args.rounds):
            for query in queries:
                names = list(agents)[turn % len(agents):] + list(agents)[: turn % len(agents)]
                turn += 1
                for name in names:
                    for mode in MODES:
                        rows[name, mode].append(run_query(client, agents[name], query, mode))
            print(f"round done: {len(queries)} queries", flush=True)
        result = {name: {mode: summary(rows[name, mode]) for mode in MODES} for name in agents}
        for name in agents:
            for mode in ("hybrid", "semantic"):
                result[name][mode]["above_keyword_p50"] = round(
                    result[name][mode]["wall"] - result[name]["keyword"]["wall"], 1)
        chunks = [c for r in rows["current", "hybrid"] for c in r["chunks"]]
        result["rerank_stage"] = rerank_costs(client, stack.semantic.url, chunks, queries)
    print_table(result, agents, len(queries) * args.rounds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"results: {args.out}")


def print_table(result: dict, agents: dict, n: int) -> None:
    print(f"\n{n} queries per mode and agent, 8 pages fetched, medians in ms\n")
    print("| agent | mode | wall p50 | wall p95 | above keyword p50 | beyond SearXNG | stages | fallbacks |")
    print("|---|---|---|---|---|---|---|---|")
    for name in agents:
        for mode in MODES:
            r = result[name][mode]
            stages = ", ".join(f"{k} {v}" for k, v in r.items() if k not in (
                "wall", "p95_wall", "beyond_searxng", "fallbacks", "n", "above_keyword_p50", "total"))
            print(f"| {name} | {mode} | {r['wall']} | {r['p95_wall']} | {r.get('above_keyword_p50', '')} | "
                  f"{r['beyond_searxng']} | {stages} | {r['fallbacks']}/{r['n']} |")
    for size, r in result["rerank_stage"].items():
        print(f"rerank {size} chunks of {r['mean_chars']} characters: {r['median_ms']} ms")


if __name__ == "__main__":
    main()
