"""What agent-svc adds over calling searx directly, for the same keyword query.

Brings up the offline web, a real Debian searx and agent-svc (uvicorn, as in production) on loopback,
then sends each query both ways, interleaved and alternating which goes first, so that load on this
shared machine hits both sides alike. Prints a table and writes JSON (every sample included).

`--baseline DIR` (repeatable) adds an agent-svc from another checkout of Wisp (`git worktree add /tmp/wisp-base
<commit>`), against the same searx and in the same rotation, so that a change is measured before and after in
one run rather than in two runs on a machine whose load drifts between them.

    .venv/bin/python bench/keyword_overhead.py [--rounds 15] [--sites tests/fixtures/sites-mini.tsv]
        [--baseline DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx

from offline_web.stack import agent_app, uvicorn_service, wisp_stack

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


def run(searx_url: str, agent_url: str, rounds: int, baselines: dict[str, str] | None = None) -> dict:
    """`baselines`: more agent-svcs by name, each sent every query too, in the same rotation."""
    agents = {"agent": agent_url, **(baselines or {})}
    samples = []
    with httpx.Client(timeout=30) as client:
        def direct(q: str) -> httpx.Response:
            return client.get(f"{searx_url}/search", params={"q": q, "format": "json", "categories": "general",
                                                             "language": "en-US", "pageno": "1"})

        def via(url: str) -> Callable[[str], httpx.Response]:
            return lambda q: client.post(f"{url}/v2/search", json={"query": q, "limit": 10})

        calls = [("direct", direct), *((name, via(url)) for name, url in agents.items())]
        for q in QUERIES[:3]:  # warm-up: connections, searx's and uvicorn's first requests
            for _, call in calls:
                call(q)
        for round_no in range(rounds):
            for i, q in enumerate(QUERIES):
                shift = (round_no * len(QUERIES) + i) % len(calls)  # with baselines: each side leads as often
                order = calls[shift:] + calls[:shift]
                if (round_no + i) % 2:
                    order.reverse()
                sample = {"query": q}
                for name, call in order:
                    ms, response = timed(lambda call=call, q=q: call(q))
                    response.raise_for_status()
                    sample[f"{name}_ms"] = ms
                    if name in agents:
                        sample[f"{name}_timings_ms"] = response.json()["timings_ms"]
                samples.append(sample)
    result = summarize(samples)
    for name in baselines or {}:
        result[name] = summarize(samples, name)
        result[name]["agent_minus_baseline_ms_paired"] = {
            "p50": statistics.median(s["agent_ms"] - s[f"{name}_ms"] for s in samples)}
    return result


def summarize(samples: list[dict], agent: str = "agent") -> dict:
    direct = [s["direct_ms"] for s in samples]
    via = [s[f"{agent}_ms"] for s in samples]
    added = [s[f"{agent}_ms"] - s["direct_ms"] for s in samples]
    internal = [s[f"{agent}_timings_ms"]["total"] - s[f"{agent}_timings_ms"]["searxng"] for s in samples]
    return {
        **({"samples": samples} if agent == "agent" else {}),
        "n": len(samples),
        "direct_searx_ms": {"p50": statistics.median(direct), "p95": percentile(direct, 0.95)},
        "via_agent_ms": {"p50": statistics.median(via), "p95": percentile(via, 0.95)},
        "added_ms_paired": {"p50": statistics.median(added), "p95": percentile(added, 0.95)},
        "agent_work_outside_searxng_ms": {"p50": statistics.median(internal), "p95": percentile(internal, 0.95)},
        "ratio_p50": statistics.median(via) / statistics.median(direct),
    }


def print_table(result: dict, title: str = "") -> None:
    rows = [("searx directly", result["direct_searx_ms"]), ("via agent-svc /v2/search", result["via_agent_ms"]),
            ("added by agent-svc (paired)", result["added_ms_paired"]),
            ("agent-svc's own work (timings_ms)", result["agent_work_outside_searxng_ms"])]
    print(f"\nkeyword mode, {result['n']} paired requests{title}\n")
    print(f"| {'':36} | {'p50 ms':>8} | {'p95 ms':>8} |\n|{'-' * 38}|{'-' * 10}|{'-' * 10}|")
    for label, stats in rows:
        print(f"| {label:36} | {stats['p50']:8.1f} | {stats['p95']:8.1f} |")
    print(f"\nratio agent/direct at p50: {result['ratio_p50']:.2f}")
    if "agent_minus_baseline_ms_paired" in result:
        print(f"this checkout's agent-svc minus this baseline's, paired p50: "
              f"{result['agent_minus_baseline_ms_paired']['p50']:+.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "keyword_overhead.json")
    parser.add_argument("--baseline", type=Path, action="append", default=[],
                        help="a checkout of Wisp whose agent-svc is measured alongside this one's (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp)) as stack, ExitStack() as running:
        baselines = {}
        for n, checkout in enumerate(args.baseline, 1):
            # its agent and wisp-obs packages ahead of this checkout's (a checkout without wisp-obs skips it)
            code = [checkout.resolve() / "agent-svc", checkout.resolve() / "wisp-obs"]
            env = {"SEARXNG_URL": stack.offline.searx.url, "CRAWL_DB": f"{tmp}/baseline{n}.sqlite",
                   "PYTHONPATH": os.pathsep.join(map(str, [*code, os.environ.get("PYTHONPATH", "")]))}
            baselines[f"baseline{n}"] = running.enter_context(
                uvicorn_service(f"agent-baseline{n}", agent_app(checkout.resolve()), Path(tmp), env)).url
        result = run(stack.offline.searx.url, stack.agent.url, args.rounds, baselines)
    print_table(result, " (this checkout)" if args.baseline else "")
    for n, checkout in enumerate(args.baseline, 1):
        print_table(result[f"baseline{n}"], f" (baseline{n}: {checkout})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"samples: {args.out}")


if __name__ == "__main__":
    main()
