"""The ranked modes' cost beyond SearXNG, and the rerank stage for 16 and 50 chunks.

Brings up the offline web (the full corpus by default), searx, semantic-svc and agent-svc on loopback. For
each query, hybrid and semantic mode run with 8 pages fetched; the time beyond SearXNG is `total − searxng`
from `timings_ms`, with every stage's median beside it. The rerank stage is then timed alone through
semantic-svc's /rerank for 16 and 50 chunks of about 1,200 characters taken from the fetched pages.

    .venv/bin/python bench/ranked_modes.py [--sites eval/data/sites.tsv] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.stack import wisp_stack

ROOT = Path(__file__).parent.parent
QUERIES = ["postgres logical replication slot", "python asyncio run tasks concurrently",
           "sqlite WAL mode checkpoint", "apache redirect all http requests to https",
           "rust send data between threads with a channel", "git squash last few commits into one",
           "django nested atomic blocks savepoint rollback", "node.js read a file line by line",
           "debian configure a static IP address", "c++ vector reserve vs resize"]


def mode_costs(client: httpx.Client, agent: str, mode: str, rounds: int) -> tuple[dict, list[str]]:
    rows, chunks = [], []
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            body = client.post(f"{agent}/v2/search", json={"query": query, "limit": 10, "retrieval_mode": mode,
                                                           "fetch_top": 8}).json()
            wall = (time.perf_counter() - started) * 1000
            timings = body["timings_ms"]
            rows.append({"wall": wall, "beyond_searxng": timings["total"] - timings["searxng"], **timings})
            chunks += [p["text"] for w in body["data"]["web"] for p in w.get("passages", [])]
    stages = sorted({k for r in rows for k in r})
    return {stage: round(statistics.median([r.get(stage, 0.0) for r in rows]), 1) for stage in stages}, chunks


def rerank_costs(client: httpx.Client, semantic: str, chunks: list[str], runs: int = 5) -> dict:
    long_chunks = [c for c in chunks if 900 <= len(c) <= 1300] or chunks
    result = {}
    for n in (16, 50):
        passages = (long_chunks * (n // max(len(long_chunks), 1) + 1))[:n]
        times = []
        for i in range(runs + 1):
            started = time.perf_counter()
            client.post(f"{semantic}/rerank", json={"query": QUERIES[i % len(QUERIES)], "passages": passages})
            times.append((time.perf_counter() - started) * 1000)
        result[str(n)] = {"median_ms": round(statistics.median(times[1:]), 1),
                          "mean_chars": round(statistics.fmean(map(len, passages)))}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ranked_modes.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp), with_semantic=True) as stack, \
            httpx.Client(timeout=120) as client:
        client.post(f"{stack.agent.url}/v2/search", json={"query": QUERIES[0], "retrieval_mode": "hybrid"})  # warm
        result = {}
        chunks: list[str] = []
        for mode in ("hybrid", "semantic"):
            result[mode], mode_chunks = mode_costs(client, stack.agent.url, mode, args.rounds)
            chunks += mode_chunks
        result["rerank_stage"] = rerank_costs(client, stack.semantic.url, chunks)
    print(f"\n{len(QUERIES) * args.rounds} queries per mode, 8 pages fetched, medians in ms\n")
    for mode in ("hybrid", "semantic"):
        print(f"{mode}: beyond SearXNG {result[mode]['beyond_searxng']} (wall {result[mode]['wall']}); "
              + ", ".join(f"{k} {v}" for k, v in result[mode].items() if k not in ("wall", "beyond_searxng")))
    for n, r in result["rerank_stage"].items():
        print(f"rerank {n} chunks of {r['mean_chars']} characters: {r['median_ms']} ms")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
