"""What a map costs: latency and links per second of POST /v2/map on offline-web sites, one request at a time,
for each way a client asks (everything, a `search`, the sitemap only, no sitemap).

Brings up the offline web (with robots.txt and sitemaps), a real Debian searx and agent-svc opened to loopback
fetching. Each site of the sites file and each way is asked `--rounds` times after one warm-up. Prints a
table and writes JSON.

    .venv/bin/python bench/map.py [--rounds 5] [--limit 5000] [--sites tests/fixtures/sites-mini.tsv]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.sites import load_sites
from offline_web.stack import offline_search_stack, uvicorn_service

ROOT = Path(__file__).parent.parent
WAYS = {"everything": {}, "search": {"search": "configuration options"}, "sitemap only": {"sitemap": "only"},
        "no sitemap": {"sitemap": "skip"}}


def measure(agent: str, site: str, body: dict, rounds: int, limit: int) -> dict:
    latencies, counts, warnings = [], [], 0
    with httpx.Client(base_url=agent, timeout=60) as http:
        for n in range(rounds + 1):
            started = time.perf_counter()
            response = http.post("/v2/map", json={"url": site, "limit": limit, **body})
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            if n == 0:
                continue  # warm-up: connections, the extraction workers' first pages
            latencies.append(elapsed * 1000)
            counts.append(len(response.json()["links"]))
            warnings += "warning" in response.json()
    return {"links": statistics.median(counts), "p50_ms": statistics.median(latencies), "max_ms": max(latencies),
            "links_per_s": sum(counts) / (sum(latencies) / 1000), "warned": warnings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=5000)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "map.json")
    args = parser.parse_args()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp, \
            offline_search_stack(args.sites, Path(tmp), robots_txt="User-agent: *\nDisallow:\n",
                                 sitemaps=True) as stack, \
            uvicorn_service("agent-map", "agent.app:app", Path(tmp), {
                "SEARXNG_URL": stack.searx.url, "CRAWL_DB": f"{tmp}/agent.sqlite",
                "FETCH_ALLOW_HOSTS": "127.0.0.1"}) as agent:
        for site in load_sites(args.sites):
            url = f"{stack.web.url}/{site.prefix}/"
            for way, body in WAYS.items():
                results[f"{site.prefix} | {way}"] = measure(agent.url, url, body, args.rounds, args.limit)
    print(f"\nPOST /v2/map, limit {args.limit}, {args.rounds} rounds each, one at a time\n")
    print(f"| {'site':24} | {'way':12} | {'links':>6} | {'p50 ms':>7} | {'max ms':>7} | {'links/s':>8} |")
    print(f"|{'-' * 26}|{'-' * 14}|{'-' * 8}|{'-' * 9}|{'-' * 9}|{'-' * 10}|")
    for name, r in results.items():
        site, way = name.split(" | ")
        print(f"| {site:24} | {way:12} | {r['links']:6.0f} | {r['p50_ms']:7.1f} | {r['max_ms']:7.1f} | "
              f"{r['links_per_s']:8.0f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                   indent=2))


if __name__ == "__main__":
    main()
