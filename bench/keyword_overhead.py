"""What agent-svc adds over calling searx directly, for the same keyword query.

Brings up the offline web, a real Debian searx and agent-svc (uvicorn, as in production) on loopback,
then sends each query both ways, interleaved and alternating which goes first, so that load on this
shared machine hits both sides alike. Prints a table and writes JSON (every sample included).

    .venv/bin/python bench/keyword_overhead.py [--rounds 15] [--sites tests/fixtures/sites-mini.tsv]
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
QUERIES = [
    "sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal", "mkdocs theme configuration",
    "sqlite release 3.40", "git stash changes", "vacuum database file", "deploying your docs",
    "isolation between connections", "cherry pick a commit",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(call) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = call()
    return (time.perf_counter() - started) * 1000, response


def run(searx_url: str, agent_url: str, rounds: int) -> dict:
    samples = []
    with httpx.Client(timeout=30) as client:
        def direct(q: str) -> httpx.Response:
            return client.get(f"{searx_url}/search", params={"q": q, "format": "json", "categories": "general",
                                                             "language": "en-US", "pageno": "1"})

        def via_agent(q: str) -> httpx.Response:
            return client.post(f"{agent_url}/v2/search", json={"query": q, "limit": 10})

        for q in QUERIES[:3]:  # warm-up: connections, searx's and uvicorn's first requests
            direct(q), via_agent(q)
        for round_no in range(rounds):
            for i, q in enumerate(QUERIES):
                order = [("direct", direct), ("agent", via_agent)]
                if (round_no + i) % 2:
                    order.reverse()
                sample = {"query": q}
                for name, call in order:
                    ms, response = timed(lambda call=call, q=q: call(q))
                    response.raise_for_status()
                    sample[f"{name}_ms"] = ms
                    if name == "agent":
                        sample["agent_timings_ms"] = response.json()["timings_ms"]
                samples.append(sample)
    return summarize(samples)


def summarize(samples: list[dict]) -> dict:
    direct = [s["direct_ms"] for s in samples]
    agent = [s["agent_ms"] for s in samples]
    added = [s["agent_ms"] - s["direct_ms"] for s in samples]
    internal = [s["agent_timings_ms"]["total"] - s["agent_timings_ms"]["searxng"] for s in samples]
    return {
        "samples": samples,
        "n": len(samples),
        "direct_searx_ms": {"p50": statistics.median(direct), "p95": percentile(direct, 0.95)},
        "via_agent_ms": {"p50": statistics.median(agent), "p95": percentile(agent, 0.95)},
        "added_ms_paired": {"p50": statistics.median(added), "p95": percentile(added, 0.95)},
        "agent_work_outside_searxng_ms": {"p50": statistics.median(internal), "p95": percentile(internal, 0.95)},
        "ratio_p50": statistics.median(agent) / statistics.median(direct),
    }


def print_table(result: dict) -> None:
    rows = [("searx directly", result["direct_searx_ms"]), ("via agent-svc /v2/search", result["via_agent_ms"]),
            ("added by agent-svc (paired)", result["added_ms_paired"]),
            ("agent-svc's own work (timings_ms)", result["agent_work_outside_searxng_ms"])]
    print(f"\nkeyword mode, {result['n']} paired requests\n")
    print(f"| {'':36} | {'p50 ms':>8} | {'p95 ms':>8} |\n|{'-' * 38}|{'-' * 10}|{'-' * 10}|")
    for label, stats in rows:
        print(f"| {label:36} | {stats['p50']:8.1f} | {stats['p95']:8.1f} |")
    print(f"\nratio agent/direct at p50: {result['ratio_p50']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "keyword_overhead.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp)) as stack:
        result = run(stack.offline.searx.url, stack.agent.url, args.rounds)
    print_table(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"samples: {args.out}")


if __name__ == "__main__":
    main()
