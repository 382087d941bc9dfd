"""The ranked modes under concurrent load, with fresh queries: how many answers the model ranked, how many the
first pass (BM25 and page features), how many kept SearXNG's order, and at what throughput and latency.

Brings up the offline web, a real searx, semantic-svc and two agent-svc processes on loopback: one with the first
pass and admission (`after`, the defaults), one with RANK_FIRST_PASS=false and SEMANTIC_ADMISSION=false
(`before`: every search waits for the model, and keeps SearXNG's order when it gets nothing). For each number
of clients and each mode, each variant in turn takes a slice of `--seconds`, the variants alternating their
order from one level to the next so that a change in the machine's load falls on both; between slices the
model lane is let drain. Each client
sends searches back to back, every one a query never sent before in the run (titles of the offline web's pages,
shuffled), and semantic-svc's embedding cache is off (EMBED_CACHE_SIZE=0 unless set), so that no answer is
cheaper for being seen before. How an answer was ranked is read from its warning. Beside each slice: the load
average, and the CPU that processes other than this benchmark's used meanwhile (in cores). Prints a table and
writes JSON:

    .venv/bin/python bench/ranked_load.py [--clients 1,2,4,8,16] [--seconds 45] [--modes hybrid,semantic] \
        [--variants before,after] [--sites eval/data/sites.tsv] [--out bench/results/ranked_load.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx

from agent.ranking.runner import FIRST_PASS, SEARXNG_ORDER
from offline_web.stack import prepare_index, uvicorn_service, wisp_stack

ROOT = Path(__file__).parent.parent
DEADLINE_MS = 8000  # PIPELINE_DEADLINE_S
VARIANTS = {"after": {"RANK_FIRST_PASS": "true", "SEMANTIC_ADMISSION": "true"},
            "before": {"RANK_FIRST_PASS": "false", "SEMANTIC_ADMISSION": "false"}}
# how an answer was ranked, by its warning; the first that matches
RANKED_BY = (("searxng_order", SEARXNG_ORDER), ("first_pass", FIRST_PASS), ("snippets", "ranked by snippets alone"),
             ("model_partial", "the deadline came before semantic-svc scored every text"))
# model_abstained: the model scored and no passage reached the relevance floor, so nothing is shown
KINDS = ("model", "model_partial", "model_abstained", "snippets", "first_pass", "searxng_order", "no_results", "error")
_SITE_SUFFIX = re.compile(r"\s+[-—|]\s+[^-—|]*$")  # " - cppreference.com", " — Python 3.11.2 documentation"
_SECTION_NUMBER = re.compile(r"^[\d.]+\s+")  # "34.7. Canceling Queries in Progress"


def fresh_queries(sites: Path, seed: int = 34) -> Iterator[str]:
    """Titles of the offline web's pages as queries, without site names or section numbers, each once, shuffled."""
    _, _, db = prepare_index(sites)
    with sqlite3.connect(db) as connection:
        titles = [row[0] for row in connection.execute("SELECT title FROM pages")]
    queries = {_SECTION_NUMBER.sub("", _SITE_SUFFIX.sub("", title)).strip() for title in titles}
    usable = sorted(q for q in queries if 2 <= len(q.split()) <= 8 and "<" not in q)
    random.Random(seed).shuffle(usable)
    return iter(usable)


def ranked_by(body: dict) -> str:
    if body.get("abstained"):
        return "model_abstained"
    if not body.get("data", {}).get("web"):
        return "no_results"
    warning = body.get("warning", "")
    return next((kind for kind, text in RANKED_BY if text in warning), "model")


class Cpu:
    """CPU time on this machine, all of it and this benchmark's (this process and everything it started)."""

    def __init__(self) -> None:
        self.ticks = os.sysconf("SC_CLK_TCK")

    def sample(self) -> tuple[float, float, float]:
        """(wall time, busy CPU seconds of the machine, CPU seconds of this benchmark's processes)."""
        with open("/proc/stat") as stat:
            fields = [int(f) for f in stat.readline().split()[1:]]
        busy = sum(fields) - fields[3] - fields[4]  # less idle and iowait
        return time.monotonic(), busy / self.ticks, self._own() / self.ticks

    def _own(self) -> int:
        parents, times = {}, {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:  # it ended meanwhile
                continue
            parents[int(entry.name)] = int(fields[1])
            # utime, stime, and those of its children that ended (extraction workers replaced)
            times[int(entry.name)] = sum(int(f) for f in fields[11:15])
        own, grown = {os.getpid()}, True
        while grown:
            more = {pid for pid, parent in parents.items() if parent in own} - own
            own |= more
            grown = bool(more)
        return sum(times[pid] for pid in own)


async def slice_of_load(agent: str, mode: str, clients: int, seconds: float, queries: Iterator[str]) -> dict:
    """`clients` loops sending `mode` searches back to back for `seconds`; each answer's latency and ranking."""
    answers: list[tuple[float, str]] = []
    stop = time.monotonic() + seconds

    async def client_loop(client: httpx.AsyncClient) -> None:
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                response = await client.post(f"{agent}/v2/search", json={"query": next(queries), "limit": 10,
                                                                         "retrieval_mode": mode})
                response.raise_for_status()
                kind = ranked_by(response.json())
            except httpx.HTTPError:
                kind = "error"
            answers.append(((time.perf_counter() - started) * 1000, kind))

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    began = time.monotonic()
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
    return summary(answers, time.monotonic() - began)


def summary(answers: list[tuple[float, str]], elapsed_s: float) -> dict:
    latencies = sorted(ms for ms, kind in answers if kind != "error")
    kinds = Counter(kind for _, kind in answers)
    return {
        "answers": len(latencies), "elapsed_s": round(elapsed_s, 1),
        "throughput_rps": round(len(latencies) / elapsed_s, 3),
        "p50_ms": round(statistics.median(latencies)) if latencies else None,
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))]) if latencies else None,
        "over_deadline": sum(ms > DEADLINE_MS for ms in latencies),
        **{kind: kinds[kind] for kind in KINDS},
    }


async def drained(semantic: str, client: httpx.AsyncClient, timeout_s: float = 30) -> None:
    """Until semantic-svc's model lane holds no job (the last slice's abandoned ones included)."""
    until = time.monotonic() + timeout_s
    while time.monotonic() < until and (await client.get(f"{semantic}/stats")).json()["lane"]["pending_jobs"]:
        await asyncio.sleep(0.5)
    await asyncio.sleep(1)


async def run(agents: dict[str, str], semantic: str, modes: list[str], levels: list[int], seconds: float,
              queries: Iterator[str]) -> list[dict]:
    cpu, rows = Cpu(), []
    async with httpx.AsyncClient(timeout=10) as client:
        for agent in agents.values():  # warm-up: connections, the model's measured speed, the page cache's files
            for mode in modes:
                await slice_of_load(agent, mode, 2, 5, queries)
        for i, clients in enumerate(levels):
            for mode in modes:
                for variant in (list(agents) if i % 2 == 0 else list(reversed(agents))):
                    await drained(semantic, client)
                    load, before = os.getloadavg()[0], cpu.sample()
                    result = await slice_of_load(agents[variant], mode, clients, seconds, queries)
                    after = cpu.sample()
                    others = (after[1] - before[1]) - (after[2] - before[2])
                    row = {"variant": variant, "mode": mode, "clients": clients, **result,
                           "load_1m_before": round(load, 2), "load_1m_after": round(os.getloadavg()[0], 2),
                           "others_cpu_cores": round(max(others, 0.0) / (after[0] - before[0]), 2)}
                    rows.append(row)
                    print(line(row), flush=True)
    return rows


HEADER = ("| variant | mode | clients | answers | req/s | p50 ms | p95 ms | model | of which partial, abstained "
          "| snippets | first pass | SearXNG order | no results | errors | load 1m | others' CPU |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def line(r: dict) -> str:
    return (f"| {r['variant']} | {r['mode']} | {r['clients']} | {r['answers']} | {r['throughput_rps']:.2f} "
            f"| {r['p50_ms']} | {r['p95_ms']} | {r['model'] + r['model_partial'] + r['model_abstained']} "
            f"| {r['model_partial']}, {r['model_abstained']} "
            f"| {r['snippets']} | {r['first_pass']} | {r['searxng_order']} | {r['no_results']} | {r['error']} "
            f"| {r['load_1m_before']} | {r['others_cpu_cores']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="1,2,4,8,16")
    parser.add_argument("--seconds", type=float, default=45.0, help="per slice: one variant, mode and level")
    parser.add_argument("--modes", default="hybrid,semantic")
    parser.add_argument("--variants", default="before,after", help=f"of {', '.join(VARIANTS)}")
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ranked_load.json")
    args = parser.parse_args()
    os.environ.setdefault("EMBED_CACHE_SIZE", "0")
    modes, levels = args.modes.split(","), [int(n) for n in args.clients.split(",")]
    variants = args.variants.split(",")
    queries = fresh_queries(args.sites)
    started = {"load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    print(f"load average at the start: {started['load_average']} on {started['cpus']} CPUs", flush=True)
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp), with_semantic=True,
                                                          agent_env=VARIANTS[variants[0]]) as stack, \
            ExitStack() as running:
        agents = {variants[0]: stack.agent.url}
        for name in variants[1:]:  # beside the stack's own agent-svc: the same environment, files of its own
            workdir = Path(tmp) / name
            env = {**stack.agent.env, **VARIANTS[name], "CRAWL_DB": str(workdir / "crawls.sqlite"),
                   "RESEARCH_DB": str(workdir / "research.sqlite"), "PAGE_CACHE_DIR": str(workdir / "page-cache")}
            agents[name] = running.enter_context(uvicorn_service(f"agent-svc-{name}", "agent.app:app", workdir,
                                                                 env)).url
        print(HEADER, flush=True)
        rows = asyncio.run(run(agents, stack.semantic.url, modes, levels, args.seconds, queries))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {"clients": levels, "seconds": args.seconds, "modes": modes,
                                             "variants": {v: VARIANTS[v] for v in variants}, "sites": str(args.sites)},
                                    "start": started, "rows": rows}, indent=2))
    print(f"results: {args.out}")


if __name__ == "__main__":
    main()
