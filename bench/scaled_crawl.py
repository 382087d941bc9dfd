"""Crawl throughput with one agent-svc and with three replicas on Redis behind HAProxy: pages/s of one crawl of
`--pages` pages, from the POST to its status "completed", polled through the balancer.

Brings up the offline web (its pages answer after `--site-delay-ms`, as a real site's do), a real searx and, in
turn, for each CRAWL_HOST_CONCURRENCY of `--host-concurrency` (2, the polite default; 16, what a crawl spread over
many hosts sees):

- sqlite: one agent-svc without REDIS_URL (jobs in SQLite, one task per crawl): the baseline;
- redis x1: one agent-svc on a real redis-server (one task per page on the shared queue), behind HAProxy;
- redis x3: three agent-svc replicas on that Redis, behind HAProxy (round-robin).

Each run checks what it measures: the crawl completed, with each URL once, and counts the pages the site served
more than once. No semantic-svc: the pages are not indexed (each replica notes it), so what is measured is
the crawl itself: the queue, the fetches, the extraction.

    .venv/bin/python bench/scaled_crawl.py [--sites eval/data/sites.tsv] [--seed docs.python.org/3/] [--pages 200] \
        [--site-delay-ms 150] [--host-concurrency 2,16] [--repeats 2] [--out bench/results/scaled_crawl.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from offline_web.stack import OfflineStack, offline_search_stack, scaled_agents, uvicorn_service

ROOT = Path(__file__).parent.parent
POLL_S = 0.2
LAYOUTS = ("sqlite", "redis x1", "redis x3")


@contextmanager
def agents(layout: str, offline: OfflineStack, workdir: Path, env: dict[str, str]) -> Iterator[str]:
    """The URL a client crawls through in this layout."""
    if layout == "sqlite":
        env = {**env, "SEARXNG_URL": offline.searx.url, "CRAWL_DB": str(workdir / "crawls.sqlite")}
        with uvicorn_service("agent-sqlite", "agent.app:app", workdir, env) as agent:
            yield agent.url
        return
    with scaled_agents(offline.searx.url, workdir, int(layout[-1]), env) as scaled:
        yield scaled.url


def crawl(client: httpx.Client, agent: str, offline: OfflineStack, seed: str, pages: int) -> dict:
    since, started = time.time(), time.monotonic()
    job = client.post(f"{agent}/v2/crawl", json={"url": f"{offline.web.url}/{seed}", "limit": pages}).json()
    while (status := client.get(f"{agent}/v2/crawl/{job['id']}", params={"limit": 1}).json())["status"] == "scraping":
        time.sleep(POLL_S)
    wall = time.monotonic() - started
    urls = documents(client, agent, job["id"])
    served = Counter(r["path"] for r in list(offline.web.requests) if r["t"] >= since)
    twice = sum(served[urlsplit(url).path] > 1 for url in urls)
    assert status["status"] == "completed" and len(urls) == len(set(urls)) == status["completed"], status
    return {"pages": len(urls), "fetched_twice": twice, "wall_s": round(wall, 2),
            "pages_per_s": round(len(urls) / wall, 2)}


def documents(client: httpx.Client, agent: str, job_id: str) -> list[str]:
    urls, skip = [], 0
    while True:
        page = client.get(f"{agent}/v2/crawl/{job_id}", params={"skip": skip, "limit": 100}).json()["data"]
        urls += [d["metadata"]["sourceURL"] for d in page]
        if not page:
            return urls
        skip += len(page)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--seed", default="docs.python.org/3/")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--site-delay-ms", type=int, default=150)
    parser.add_argument("--host-concurrency", default="2,16")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "scaled_crawl.json")
    args = parser.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="wisp-scaled-bench-") as tmp, \
            offline_search_stack(args.sites, Path(tmp) / "web", sitemaps=True) as offline, \
            httpx.Client(timeout=60) as client:
        offline.web.page_delay_ms = args.site_delay_ms
        for host_concurrency in args.host_concurrency.split(","):
            env = {"FETCH_ALLOW_HOSTS": "127.0.0.1", "CRAWL_HOST_DELAY_S": "0",
                   "CRAWL_HOST_CONCURRENCY": host_concurrency, "PAGE_CACHE": "off"}
            for layout in LAYOUTS:
                with agents(layout, offline, Path(tmp) / f"{layout}-{host_concurrency}".replace(" ", ""),
                            env) as agent:
                    for repeat in range(args.repeats):
                        rows.append({"layout": layout, "host_concurrency": int(host_concurrency), "repeat": repeat,
                                     **crawl(client, agent, offline, args.seed, args.pages)})
                        print(rows[-1], flush=True)
    print(f"\n{args.pages} pages of {args.seed}, each answering after {args.site_delay_ms} ms")
    print_table(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**{k: str(v) for k, v in vars(args).items()}, "rows": rows}, indent=1))
    print(f"results: {args.out}")


def print_table(rows: list[dict]) -> None:
    print("\n| CRAWL_HOST_CONCURRENCY | layout | pages | wall s (runs) | pages/s median | vs sqlite | fetched twice |")
    print("|---|---|---|---|---|---|---|")
    for key in dict.fromkeys((r["host_concurrency"], r["layout"]) for r in rows):
        runs = [r for r in rows if (r["host_concurrency"], r["layout"]) == key]
        base = [r["pages_per_s"] for r in rows if (r["host_concurrency"], r["layout"]) == (key[0], "sqlite")]
        median = statistics.median(r["pages_per_s"] for r in runs)
        walls = ", ".join(f"{r['wall_s']:g}" for r in runs)
        print(f"| {key[0]} | {key[1]} | {runs[0]['pages']} | {walls} "
              f"| {median:g} | {median / statistics.median(base):.2f}x | {sum(r['fetched_twice'] for r in runs)} |")


if __name__ == "__main__":
    main()
