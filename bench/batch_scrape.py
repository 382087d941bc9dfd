"""Batch scrape throughput: pages/s of one POST /v2/batch/scrape over `--urls` offline-web pages, beside the same
pages scraped one at a time with POST /v2/scrape.

Brings up the offline web, a real searx and agent-svc on loopback (no semantic-svc: a batch indexes nothing),
then, `--repeats` times each:

- batch: the URLs in one request (markdown), polled with GET /v2/batch/scrape/{id}?limit=1 until it is no
  longer "scraping"; wall time from the POST to the last poll, pages/s, errors. Every URL is on one host (the
  offline web), so the shared per-host gate bounds it: CRAWL_HOST_CONCURRENCY requests at once (2 by default,
  the polite setting), and `--host-concurrency` runs a second agent-svc with more;
- sequential: the same URLs through /v2/scrape one after the other, the baseline a client without batch has.

The pages are the first `--urls` of the sites file's pages in path order (sites-mini has 61), so every run
scrapes the same ones.

    .venv/bin/python bench/batch_scrape.py [--sites tests/fixtures/sites-mini.tsv] [--urls 80] [--repeats 2] \
        [--host-concurrency 8] [--site-delay-ms 150] [--out bench/results/batch_scrape.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.corpus import site_dir
from offline_web.sites import load_sites
from offline_web.stack import offline_search_stack, uvicorn_service

ROOT = Path(__file__).parent.parent
POLL_S = 0.2


def page_urls(web_url: str, sites_path: Path, cache: Path, count: int) -> list[str]:
    """The first `count` pages the offline web serves, as its sitemaps list them."""
    urls = []
    for site in load_sites(sites_path):
        root = site_dir(cache, site)
        pages = sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))
        urls += [f"{web_url}/{site.prefix}/{page}" for page in pages if site.includes(page)]
    return urls[:count]


def batch(client: httpx.Client, agent: str, urls: list[str]) -> dict:
    started = time.monotonic()
    job = client.post(f"{agent}/v2/batch/scrape", json={"urls": urls, "formats": ["markdown"]}).json()
    while True:
        status = client.get(f"{agent}/v2/batch/scrape/{job['id']}", params={"limit": 1}).json()
        if status["status"] != "scraping":
            break
        time.sleep(POLL_S)
    wall = time.monotonic() - started
    errors = client.get(f"{agent}/v2/batch/scrape/{job['id']}/errors").json()["errors"]
    return {"status": status["status"], "pages": status["completed"], "errors": len(errors),
            "wall_s": round(wall, 2), "pages_per_s": round(status["completed"] / wall, 2)}


def sequential(client: httpx.Client, agent: str, urls: list[str]) -> dict:
    started = time.monotonic()
    ok = sum(client.post(f"{agent}/v2/scrape", json={"url": url}).status_code == 200 for url in urls)
    wall = time.monotonic() - started
    return {"status": "completed", "pages": ok, "errors": len(urls) - ok, "wall_s": round(wall, 2),
            "pages_per_s": round(ok / wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--urls", type=int, default=80)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--host-concurrency", type=int, default=8)
    parser.add_argument("--site-delay-ms", type=int, default=0,
                        help="each page's answer held this long (the offline web's ?delay_ms=), as a real site's")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "batch_scrape.json")
    args = parser.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="wisp-batch-bench-") as tmp:
        workdir = Path(tmp)
        with offline_search_stack(args.sites, workdir) as offline:
            urls = [f"{url}?delay_ms={args.site_delay_ms}" if args.site_delay_ms else url
                    for url in page_urls(offline.web.url, args.sites, offline.web.cache, args.urls)]
            runs = [("batch", "2"), ("batch", str(args.host_concurrency)), ("sequential /v2/scrape", "2")]
            for host_concurrency in dict.fromkeys(h for _, h in runs):
                env = {"SEARXNG_URL": offline.searx.url, "FETCH_ALLOW_HOSTS": "127.0.0.1", "CRAWL_HOST_DELAY_S": "0",
                       "CRAWL_DB": str(workdir / f"crawls-{host_concurrency}.sqlite"),
                       "CRAWL_HOST_CONCURRENCY": host_concurrency}
                with uvicorn_service(f"agent-svc-{host_concurrency}", "agent.app:app", workdir, env) as agent, \
                        httpx.Client(timeout=60) as client:
                    client.post(f"{agent.url}/v2/scrape", json={"url": urls[0]})  # warm: workers, connections
                    for how, hc in runs:
                        if hc != host_concurrency:
                            continue
                        for repeat in range(args.repeats):
                            run = batch if how == "batch" else sequential
                            rows.append({"how": how, "host_concurrency": int(hc), "repeat": repeat,
                                         "urls": len(urls), **run(client, agent.url, urls)})
    print(f"\npages answering after {args.site_delay_ms} ms")
    print_table(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"urls": args.urls, "repeats": args.repeats, "site_delay_ms": args.site_delay_ms,
                                    "rows": rows}, indent=1))
    print(f"results: {args.out}")


def print_table(rows: list[dict]) -> None:
    print("\n| how | CRAWL_HOST_CONCURRENCY | urls | pages | errors | wall s (runs) | pages/s median |")
    print("|---|---|---|---|---|---|---|")
    for key in dict.fromkeys((r["how"], r["host_concurrency"]) for r in rows):
        runs = [r for r in rows if (r["how"], r["host_concurrency"]) == key]
        walls = ", ".join(f"{r['wall_s']:g}" for r in runs)
        print(f"| {key[0]} | {key[1]} | {runs[0]['urls']} | {runs[-1]['pages']} | {runs[-1]['errors']} | {walls} "
              f"| {statistics.median(r['pages_per_s'] for r in runs):g} |")


if __name__ == "__main__":
    main()
