"""What the page cache saves a scrape: /v2/scrape of N offline-web pages, first with `maxAge` (a miss: fetched,
extracted, kept), then again (hits: read, decompressed, extracted), and with `maxAge` 0 (fetched again, kept).
Then, in-process, what the cache itself costs per page: the lookup of a kept copy, and zlib's levels on the
pages kept (size against time).

Brings up the offline web, a real Debian searx (to find the pages) and agent-svc on loopback, its page cache in a
temporary directory. The offline web answers from local files in about a millisecond: a real site's fetch costs
tens to hundreds more, so the miss/hit ratio at `--site-delay-ms 0` is the least the cache saves; the offline
web's `?delay_ms=` holds each page's answer as long as a real site's would take. Requests go one at a time.
Prints a table of medians and writes JSON.

    .venv/bin/python bench/page_cache.py [--pages 40] [--hits 3] [--site-delay-ms 150]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import zlib
from pathlib import Path

import httpx

from agent.pages.cache import PageCache
from agent.state.page_cache.disk import DiskStore
from offline_web.stack import offline_search_stack, uvicorn_service

ROOT = Path(__file__).parent.parent
HOUR_MS = 3_600_000
QUERIES = ["sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal",
           "mkdocs theme configuration", "git stash changes", "vacuum database file", "sqlite pragma",
           "git branch merge", "mkdocs plugins", "sqlite json functions"]


def pages_of(http: httpx.Client, wanted: int) -> list[str]:
    """Distinct result URLs of keyword searches, up to `wanted`."""
    urls: dict[str, None] = {}
    for query in QUERIES:
        for result in http.post("/v2/search", json={"query": query, "limit": 10}).json()["data"]["web"]:
            urls[result["url"]] = None
    return list(urls)[:wanted]


def scrape_ms(http: httpx.Client, url: str, max_age_ms: int, state: str | None, store: bool = True) -> float:
    started = time.perf_counter()
    response = http.post("/v2/scrape", json={"url": url, "formats": ["markdown"], "maxAge": max_age_ms,
                                             "storeInCache": store})
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    assert response.json()["data"]["metadata"].get("cacheState") == state, (url, response.json()["data"]["metadata"])
    return elapsed


def lookup_ms(cache_dir: Path, urls: list[str]) -> float:
    """The median time to read one kept copy back (disk read and decompression, in a thread as agent-svc does)."""
    cache = PageCache(DiskStore(cache_dir, 10**12), 0)

    async def timed() -> list[float]:
        times = []
        for url in urls * 3:
            started = time.perf_counter()
            assert await cache.get(url, HOUR_MS) is not None
            times.append((time.perf_counter() - started) * 1000)
        return times
    return statistics.median(asyncio.run(timed()))


def compression(bodies: list[bytes]) -> dict:
    """Per zlib level: how much the pages shrink, and the median ms to pack and unpack one."""
    levels = {}
    for level in (1, 6, 9):
        packed, pack_ms, unpack_ms = [], [], []
        for body in bodies:
            started = time.perf_counter()
            blob = zlib.compress(body, level)
            pack_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            zlib.decompress(blob)
            unpack_ms.append((time.perf_counter() - started) * 1000)
            packed.append(len(blob))
        levels[level] = {"ratio": sum(map(len, bodies)) / sum(packed), "pack_ms": statistics.median(pack_ms),
                         "unpack_ms": statistics.median(unpack_ms)}
    return {"pages": len(bodies), "median_page_bytes": statistics.median(map(len, bodies)), "levels": levels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--hits", type=int, default=3, help="hits measured per page")
    parser.add_argument("--site-delay-ms", type=int, default=0, help="each page's answer held this long")
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "page_cache.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, offline_search_stack(args.sites, Path(tmp)) as stack:
        cache_dir = Path(tmp) / "page-cache"
        agent = uvicorn_service("agent-svc", "agent.app:app", Path(tmp), {
            "SEARXNG_URL": stack.searx.url, "CRAWL_DB": f"{tmp}/crawls.sqlite", "FETCH_ALLOW_HOSTS": "127.0.0.1",
            "PAGE_CACHE_DIR": str(cache_dir)})
        with agent, httpx.Client(base_url=agent.url, timeout=60) as http:
            urls = [f"{url}?delay_ms={args.site_delay_ms}" if args.site_delay_ms else url
                    for url in pages_of(http, args.pages)]
            scrape_ms(http, urls[0], 0, None, store=False)  # warm-up: the extraction workers' first page
            miss = [scrape_ms(http, url, HOUR_MS, "miss") for url in urls]
            hit = [statistics.median(scrape_ms(http, url, HOUR_MS, "hit") for _ in range(args.hits)) for url in urls]
            refetch = [scrape_ms(http, url, 0, None) for url in urls]
            bodies = [httpx.get(url).content for url in urls]
        results = {"pages": len(urls), "miss_ms": statistics.median(miss), "hit_ms": statistics.median(hit),
                   "refetch_ms": statistics.median(refetch), "lookup_ms": lookup_ms(cache_dir, urls),
                   "compression": compression(bodies)}
    results["miss_over_hit"] = results["miss_ms"] / results["hit_ms"]
    print(f"\n/v2/scrape of {results['pages']} offline-web pages answering after {args.site_delay_ms} ms, one at a "
          "time (medians)\n")
    print(f"| {'scrape':30} | {'ms':>7} |\n|{'-' * 32}|{'-' * 9}|")
    for name, key in (("miss (maxAge 1 h, first)", "miss_ms"), ("hit (maxAge 1 h, again)", "hit_ms"),
                      ("maxAge 0 (fetched, kept)", "refetch_ms"), ("the cache's lookup alone", "lookup_ms")):
        print(f"| {name:30} | {results[key]:7.1f} |")
    print(f"\nmiss/hit: {results['miss_over_hit']:.2f}")
    packing = results["compression"]
    print(f"\nzlib on the {packing['pages']} pages kept (median {packing['median_page_bytes'] / 1000:.0f} kB)\n")
    print("| level | ratio | pack ms | unpack ms |\n|-------|-------|---------|-----------|")
    for level, figures in packing["levels"].items():
        print(f"| {level:5} | {figures['ratio']:5.2f} | {figures['pack_ms']:7.2f} | {figures['unpack_ms']:9.2f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                   indent=2))


if __name__ == "__main__":
    main()
