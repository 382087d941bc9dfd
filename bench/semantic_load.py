"""semantic-svc's /rerank under concurrent clients, as agent-svc's ranked modes load it.

Each variant (embedding backend, embedding cache on or off) runs as its own semantic-svc under uvicorn on
loopback. 1, 4 and 8 clients send /rerank back to back for a bounded time, each request one of the ten
queries of bench/semantic_models.py with its own 16 chunks of real documentation (so a query's chunks repeat,
as a page's chunks do across modes). Each request may wait as long as agent-svc waits (SEMANTIC_TIMEOUT_S, 5 s)
and then gives up, as it does. Reported per variant and load: p50/p95 of the answered requests, passages/s
answered, timeouts, 503s and other errors, and (where the service has /stats) how many requests and texts
its model calls merged. Last, whether onnx-int8 ranks as torch does (top-1 and Spearman over ten queries).
With --baseline, the same variants (cache aside) of an older semantic-svc run beside these, so that a before
and after share the load of a busy machine:

    git archive HEAD semantic-svc | tar -x -C /tmp/baseline
    .venv/bin/python bench/semantic_load.py [--seconds 20] [--clients 1,4,8] [--baseline /tmp/baseline/semantic-svc]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
from semantic_models import QUERIES, passages, rerank_agreement

from offline_web.processes import Service
from offline_web.stack import semantic_service

ROOT = Path(__file__).parent.parent
PER_REQUEST = 16
VARIANTS = {
    "torch": {"EMBED_BACKEND": "sentence-transformers", "EMBED_CACHE_SIZE": "0"},
    "torch + cache": {"EMBED_BACKEND": "sentence-transformers"},
    "onnx-int8": {"EMBED_BACKEND": "onnx-int8", "EMBED_CACHE_SIZE": "0"},
}


@dataclass
class Tally:
    latencies_ms: list[float]
    timeouts: int = 0
    busy: int = 0  # 503: the model queue was full
    errors: int = 0


async def load(url: str, clients: int, seconds: float, timeout_s: float, texts: list[str]) -> Tally:
    """`clients` loops sending /rerank back to back until `seconds` have passed."""
    tally = Tally([])
    deadline = time.monotonic() + seconds

    async def client_loop(http: httpx.AsyncClient, client: int) -> None:
        sent = 0
        while time.monotonic() < deadline:
            q = (client + sent) % len(QUERIES)
            sent += 1
            body = {"query": QUERIES[q], "passages": texts[q * PER_REQUEST:(q + 1) * PER_REQUEST]}
            started = time.perf_counter()
            try:
                response = await http.post("/rerank", json=body)
            except httpx.TimeoutException:
                tally.timeouts += 1
                continue
            if response.status_code == 503:
                tally.busy += 1
            elif response.status_code != 200:
                tally.errors += 1
            else:
                tally.latencies_ms.append((time.perf_counter() - started) * 1000)

    async with httpx.AsyncClient(base_url=url, timeout=timeout_s) as http:
        await asyncio.gather(*(client_loop(http, c) for c in range(clients)))
    return tally


def drain(url: str) -> None:
    """Wait until the model queue is empty: a one-text /embed is answered after what is queued before it."""
    httpx.post(url + "/embed", json={"texts": ["drain"]}, timeout=600).raise_for_status()


def lane_counters(url: str) -> dict | None:
    response = httpx.get(url + "/stats", timeout=10)
    return response.json()["lane"] if response.status_code == 200 else None


def merged(before: dict | None, after: dict | None) -> dict | None:
    """Model calls of the lane between two /stats readings, and how many requests' jobs and texts each merged."""
    if before is None or after is None:
        return None
    batches = after["batches"] - before["batches"]
    return {"model_calls": batches, "skipped_jobs": after["skipped_jobs"] - before["skipped_jobs"],
            "jobs_per_call": round((after["jobs"] - before["jobs"]) / max(batches, 1), 2),
            "texts_per_call": round((after["items"] - before["items"]) / max(batches, 1), 2)}


def measure(service: Service, levels: list[int], seconds: float, timeout_s: float, texts: list[str]) -> list[dict]:
    drain(service.url)
    httpx.post(service.url + "/rerank", json={"query": QUERIES[0], "passages": texts[:PER_REQUEST]},
               timeout=120).raise_for_status()  # warm-up
    rows = []
    for clients in levels:
        counters = lane_counters(service.url)
        started = time.perf_counter()
        tally = asyncio.run(load(service.url, clients, seconds, timeout_s, texts))
        wall_s = time.perf_counter() - started
        drain(service.url)
        rows.append({"clients": clients, "answered": len(tally.latencies_ms), "timeouts": tally.timeouts,
                     "busy_503": tally.busy, "errors": tally.errors, **percentiles(tally.latencies_ms),
                     "passages_per_s": round(len(tally.latencies_ms) * PER_REQUEST / wall_s, 2),
                     "lane": merged(counters, lane_counters(service.url))})
    return rows


def percentiles(latencies_ms: list[float]) -> dict:
    """p50 and p95 of the answered requests; semantic_models.load_stats's nearest rank misleads on the few
    answers an overloaded service gives (its p95 of two answers is the faster one)."""
    if len(latencies_ms) < 2:
        return {"p50_ms": round(latencies_ms[0], 1) if latencies_ms else None, "p95_ms": None}
    return {"p50_ms": round(statistics.median(latencies_ms), 1),
            "p95_ms": round(statistics.quantiles(latencies_ms, n=20, method="inclusive")[18], 1)}


class ServiceReranker:
    """A running semantic-svc's /rerank with the `score(query, passages).scores` shape rerank_agreement reads."""

    @dataclass
    class Scores:
        scores: list[float]

    def __init__(self, url: str) -> None:
        self._url = url

    def score(self, query: str, passages: list[str]) -> Scores:
        response = httpx.post(self._url + "/rerank", json={"query": query, "passages": passages}, timeout=120)
        response.raise_for_status()
        return self.Scores(response.json()["scores"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20, help="how long each load runs")
    parser.add_argument("--clients", default="1,4,8", help="concurrent clients of each load")
    parser.add_argument("--timeout", type=float, default=5.0, help="how long a client waits (agent-svc: 5 s)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"some of: {', '.join(VARIANTS)}")
    parser.add_argument("--baseline", type=Path, help="folder of an older semantic-svc to measure alongside")
    parser.add_argument("--label", default="", help="suffix of the result file (before, after, …)")
    args = parser.parse_args()
    levels = [int(c) for c in args.clients.split(",")]
    variants = {}
    for name in args.variants.split(","):
        variants[name] = VARIANTS[name]
        if args.baseline and VARIANTS[name].get("EMBED_CACHE_SIZE") == "0":  # the old code has no cache
            # PYTHONPATH comes before the editable install of this checkout
            variants[f"baseline {name}"] = {**VARIANTS[name], "PYTHONPATH": str(args.baseline.resolve())}
    texts = passages(len(QUERIES) * PER_REQUEST)
    result: dict = {"cores": os.cpu_count(), "seconds": args.seconds, "timeout_s": args.timeout,
                    "passages_per_request": PER_REQUEST, "mean_chars": round(sum(map(len, texts)) / len(texts)),
                    "loads": {}}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as running:
        services = {}
        for i, (name, variant_env) in enumerate(variants.items()):
            workdir = Path(tmp) / f"variant-{i}"
            env = {**variant_env, "ONNX_CACHE": str(Path(tmp) / "onnx")}
            services[name] = running.enter_context(semantic_service(workdir, **env).started(timeout_s=300))
        for name, service in services.items():
            result["loads"][name] = measure(service, levels, args.seconds, args.timeout, texts)
        if {"torch", "onnx-int8"} <= services.keys():
            result["int8_vs_torch_hybrid_rerank"] = rerank_agreement(
                ServiceReranker(services["torch"].url), ServiceReranker(services["onnx-int8"].url), texts)
    print_table(result)
    out = ROOT / "bench" / "results" / f"semantic_load{'-' + args.label if args.label else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"\nresults: {out}")


def print_table(r: dict) -> None:
    print(f"\n/rerank of {r['passages_per_request']} passages ({r['mean_chars']} characters on average), "
          f"{r['cores']} cores, {r['seconds']:g} s per load, clients give up after {r['timeout_s']:g} s\n")
    print("| variant | clients | answered | timeouts | 503 | errors | p50 ms | p95 ms | passages/s "
          "| jobs / texts per model call |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, rows in r["loads"].items():
        for row in rows:
            lane = row["lane"]
            merging = "n/a" if not lane else "no model call" if not lane["model_calls"] else \
                f"{lane['jobs_per_call']} / {lane['texts_per_call']}"
            print(f"| {name} | {row['clients']} | {row['answered']} | {row['timeouts']} | {row['busy_503']} "
                  f"| {row['errors']} | {row['p50_ms']} | {row['p95_ms']} | {row['passages_per_s']} | {merging} |")
    if "int8_vs_torch_hybrid_rerank" in r:
        print(f"\nonnx-int8 against torch, hybrid /rerank of {len(QUERIES)} queries × {PER_REQUEST} passages: "
              f"{json.dumps(r['int8_vs_torch_hybrid_rerank'])}")


if __name__ == "__main__":
    main()
