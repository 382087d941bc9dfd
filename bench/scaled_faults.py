"""What the fault scenarios of the scaled stack cost, timed: three agent-svc replicas on a real redis-server behind
HAProxy, crawling the offline web (pages answering after `--site-delay-ms`) while

- kill: the replica running one of the crawl's pages is SIGKILLed;
- redis: Redis is SIGKILLed for `--outage-s`, then started again on its append-only file, while a client searches
  through the balancer every 100 ms (limits on, so every search asks Redis).

For each: whether the crawl completed with every page once, how long it took against the same crawl with no
fault (the baseline, same run), the pages the site served twice, the tasks handed over, and for the outage the
searches answered and refused and the job polls answered 503.

    .venv/bin/python bench/scaled_faults.py [--pages 24] [--site-delay-ms 250] [--outage-s 3] [--repeats 2] \
        [--out bench/results/scaled_faults.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from offline_web.stack import OfflineStack, ScaledAgents, offline_search_stack, scaled_agents

ROOT = Path(__file__).parent.parent
ENV = {"FETCH_ALLOW_HOSTS": "127.0.0.1", "CRAWL_HOST_DELAY_S": "0", "JOB_LEASE_S": "3", "JOB_SWEEP_S": "1",
       "RATE_LIMIT_PER_MIN": "100000", "RANKED_CONCURRENCY_PER_KEY": "4", "PAGE_CACHE": "off"}
SEED = "www.sqlite.org/"


def metric(agents: ScaledAgents, prefix: str) -> float:
    total = 0.0
    for replica in agents.replicas:
        try:
            lines = httpx.get(replica.url + "/metrics", timeout=5).text.splitlines()
        except httpx.HTTPError:
            continue  # the killed one
        total += sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith(prefix))
    return total


def crawl(agents: ScaledAgents, offline: OfflineStack, pages: int, fault: Callable[[ScaledAgents], dict]) -> dict:
    since, started = time.time(), time.monotonic()
    job = httpx.post(f"{agents.url}/v2/crawl", json={"url": f"{offline.web.url}/{SEED}", "limit": pages}).json()
    during = fault(agents)
    polls_503 = 0
    while True:
        response = httpx.get(f"{agents.url}/v2/crawl/{job['id']}", params={"limit": 100}, timeout=30)
        polls_503 += response.status_code == 503
        if response.status_code == 200 and response.json()["status"] != "scraping":
            break
        time.sleep(0.2)
    wall = time.monotonic() - started
    status = response.json()
    urls = [d["metadata"]["sourceURL"] for d in status["data"]]
    served = Counter(r["path"] for r in list(offline.web.requests) if r["t"] >= since)
    return {"status": status["status"], "pages": len(urls), "distinct": len(set(urls)),
            "served_twice": sum(served[urlsplit(u).path] > 1 for u in urls), "wall_s": round(wall, 2),
            "handed_over": metric(agents, "wisp_agent_queue_tasks_handed_over_total"),
            "polls_503_after": polls_503, **during}


def no_fault(agents: ScaledAgents) -> dict:
    return {}


def kill_a_page_holder(agents: ScaledAgents) -> dict:
    while True:
        for replica in agents.replicas:
            lines = httpx.get(replica.url + "/metrics").text.splitlines()
            if any(line.startswith('wisp_agent_queue_tasks_running{task="crawl.visit"}') and
                   float(line.rsplit(" ", 1)[1]) > 0 for line in lines):
                replica.process.kill()
                return {"killed": replica.name}
        time.sleep(0.05)


def redis_outage(outage_s: float) -> Callable[[ScaledAgents], dict]:
    def fault(agents: ScaledAgents) -> dict:
        statuses: list[int] = []
        stop = threading.Event()

        def search() -> None:
            with httpx.Client(base_url=agents.url, timeout=30) as client:
                while not stop.is_set():
                    statuses.append(client.post("/v2/search", json={"query": "sqlite write ahead log"}).status_code)
                    time.sleep(0.1)

        searching = threading.Thread(target=search)
        searching.start()
        time.sleep(1.0)
        agents.redis.kill()
        down = time.monotonic()
        time.sleep(min(1.0, outage_s))
        warned = all(httpx.get(f"{replica.url}/readyz").json().get("warnings") for replica in agents.replicas)
        time.sleep(max(outage_s - (time.monotonic() - down), 0))
        agents.redis.start()
        time.sleep(1.0)
        stop.set()
        searching.join()
        return {"searches": len(statuses), "searches_by_status": dict(Counter(statuses)),
                "readyz_warned": warned}
    return fault


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--site-delay-ms", type=int, default=250)
    parser.add_argument("--outage-s", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "scaled_faults.json")
    args = parser.parse_args()
    scenarios = {"none": no_fault, "kill": kill_a_page_holder, "redis": redis_outage(args.outage_s)}
    rows = []
    with tempfile.TemporaryDirectory(prefix="wisp-faults-") as tmp, \
            offline_search_stack(args.sites, Path(tmp) / "web", sitemaps=True) as offline:
        offline.web.page_delay_ms = args.site_delay_ms
        for repeat in range(args.repeats):
            for name, fault in scenarios.items():
                with scaled_agents(offline.searx.url, Path(tmp) / f"{name}-{repeat}", 3, ENV) as agents:
                    rows.append({"scenario": name, "repeat": repeat, **crawl(agents, offline, args.pages, fault)})
                    print(rows[-1], flush=True)
    print_table(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**{k: str(v) for k, v in vars(args).items()}, "rows": rows}, indent=1))
    print(f"results: {args.out}")


def print_table(rows: list[dict]) -> None:
    base = statistics.median(r["wall_s"] for r in rows if r["scenario"] == "none")
    print("\n| fault | completed | pages (distinct) | served twice | handed over | wall s (runs) | vs none |"
          " searches by status | job polls 503 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in dict.fromkeys(r["scenario"] for r in rows):
        runs = [r for r in rows if r["scenario"] == name]
        cells = [f"{sum(r['status'] == 'completed' for r in runs)}/{len(runs)}",
                 ", ".join(f"{r['pages']} ({r['distinct']})" for r in runs),
                 ", ".join(str(r["served_twice"]) for r in runs),
                 ", ".join(f"{r['handed_over']:g}" for r in runs),
                 ", ".join(f"{r['wall_s']:g}" for r in runs),
                 f"{statistics.median(r['wall_s'] for r in runs) / base:.2f}x",
                 "; ".join(json.dumps(r.get("searches_by_status", {})) for r in runs),
                 ", ".join(str(r["polls_503_after"]) for r in runs)]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
