"""The vector index: crawl-and-index throughput, the vector modes' latency, and the index's memory per 10k chunks.

Brings up the offline web, a real searx, a fresh semantic-svc (its embedded Qdrant in a new temporary folder, so
nothing is "unchanged") and agent-svc on loopback, then:

- crawl: one site through POST /v2/crawl, polled with GET /v2/crawl/{id}?limit=1 until it is no longer
  "scraping"; pages/s and chunks/s over the whole crawl and over its first and second half of pages (a rate that
  falls as the index grows is a cost per page that grows with the index);
- search: `--searches` sequential /v2/search requests per mode over a fixed list of queries about SQLite (a few
  off-topic), vector and hybrid_vector (no rerank) against keyword as the baseline, the modes taking turns on
  every query (the first mode rotates) so that noise from other jobs falls on all; p50/p95 of wall time and of
  timings_ms["index"], and the ratio of the medians to keyword's;
- memory: the Qdrant folder's size on disk per 10k chunks, beside the vectors' own bytes (chunks × dimension
  × 4); and semantic-svc's RSS (VmRSS of its process): before the crawl (models loaded and warmed) and after it,
  and, for the index alone, the RSS of semantic-svc restarted on the same folder (embedded Qdrant loads the
  collection into memory) minus the RSS of the fresh one before the crawl, both after the same warm-up. The
  growth during the crawl is mostly the embedder's working memory, not the index: embedding 3,133 sqlite.org
  chunks without storing them took RSS from 657 to 1,144 MiB, storing them then added 34 MiB. The restart also
  checks that the index survives one, and the searches run on the restarted process.

semantic-svc's embedding cache is off (EMBED_CACHE_SIZE=0 unless set): the queries repeat, and with the cache on
vector mode would be timed on cached query embeddings; and the cache keeps every chunk's vector it embedded
(up to 20,000 rows) in the process, which the RSS after the crawl would count as the index's.

    .venv/bin/python bench/index.py [--sites tests/fixtures/sites-mini.tsv] [--site-prefix www.sqlite.org] \
        [--limit 200] [--searches 60] [--out bench/results/index.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.processes import Service
from offline_web.stack import wisp_stack

ROOT = Path(__file__).parent.parent
MODES = ("vector", "keyword", "hybrid_vector")
POLL_S = 0.5
ON_TOPIC = [
    "sqlite wal checkpoint", "write-ahead logging readers and writers", "atomic commit rollback journal",
    "pragma journal_mode", "vacuum database file", "database file format b-tree pages",
    "locking states shared reserved pending exclusive", "isolation between database connections",
    "when to use sqlite instead of a client server database", "sqlite release 3.40 changes",
    "automatic checkpoint of the wal file", "foreign key constraints", "create index syntax",
    "busy timeout when the database is locked", "full text search fts5", "json functions",
]
OFF_TOPIC = ["git rebase interactive", "mkdocs theme configuration", "chocolate cake recipe",
             "football world cup results"]
QUERIES = ON_TOPIC + OFF_TOPIC


def crawl(client: httpx.Client, agent: str, seed: str, limit: int) -> dict:
    """Crawl `seed` to the end; the final status's counts, rates, and the progress samples."""
    started = time.monotonic()
    job = client.post(f"{agent}/v2/crawl", json={"url": seed, "limit": limit}).json()
    samples = []
    while True:
        status = client.get(f"{agent}/v2/crawl/{job['id']}", params={"limit": 1}).json()
        samples.append((time.monotonic() - started, status["completed"], status["index"]["chunks"]))
        if status["status"] != "scraping":
            break
        time.sleep(POLL_S)
    wall = time.monotonic() - started
    errors = client.get(f"{agent}/v2/crawl/{job['id']}/errors").json()
    documents = client.get(f"{agent}/v2/crawl/{job['id']}", params={"limit": 1000}).json()["data"]
    index = status["index"]
    return {"seed": seed, "status": status["status"], "total": status["total"], "pages": status["completed"],
            **index, "wall_s": round(wall, 1), "pages_per_s": round(status["completed"] / wall, 2),
            "chunks_per_s": round(index["chunks"] / wall, 1), "halves": _halves(samples),
            "errors": len(errors["errors"]), "error_codes": sorted({e["code"] for e in errors["errors"]}),
            "robots_blocked": len(errors["robotsBlocked"]), "warning": status.get("warning"),
            "error": status.get("error"), "urls": sorted(d["metadata"]["sourceURL"] for d in documents),
            "samples": samples}


def _halves(samples: list[tuple[float, int, int]]) -> dict:
    """Pages/s and chunks/s up to the sample where half the pages were done, and after it."""
    end_t, end_pages, end_chunks = samples[-1]
    mid = next((s for s in samples if s[1] >= end_pages / 2), samples[-1])
    first = {"pages_per_s": mid[1] / mid[0] if mid[0] else None, "chunks_per_s": mid[2] / mid[0] if mid[0] else None}
    rest_t = end_t - mid[0]
    second = {"pages_per_s": (end_pages - mid[1]) / rest_t if rest_t else None,
              "chunks_per_s": (end_chunks - mid[2]) / rest_t if rest_t else None}
    return {"first": first, "second": second}


def search(client: httpx.Client, agent: str, query: str, mode: str) -> dict:
    started = time.perf_counter()
    response = client.post(f"{agent}/v2/search", json={"query": query, "limit": 10, "retrieval_mode": mode})
    wall = (time.perf_counter() - started) * 1000
    body = response.json()
    timings = body.get("timings_ms", {})
    return {"query": query, "wall": wall, "status": response.status_code, "index": timings.get("index"),
            "searxng": timings.get("searxng"), "results": len(body.get("data", {}).get("web", [])),
            "warning": body.get("warning", ""), "on_topic": query in ON_TOPIC}


def searches(client: httpx.Client, agent: str, n: int) -> dict[str, list[dict]]:
    """`n` requests per mode, the modes in turn on each query, the first mode rotating."""
    for mode in MODES:  # warm: connections, searx's engines, the query path of the index
        search(client, agent, QUERIES[0], mode)
    rows: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for i in range(n):
        order = MODES[i % len(MODES):] + MODES[: i % len(MODES)]
        for mode in order:
            rows[mode].append(search(client, agent, QUERIES[i % len(QUERIES)], mode))
    return rows


def _p50_p95(values: list[float]) -> tuple[float | None, float | None]:
    ordered = sorted(v for v in values if v is not None)
    if not ordered:
        return None, None
    return round(statistics.median(ordered), 1), round(ordered[int(0.95 * (len(ordered) - 1))], 1)


def latency_summary(rows: list[dict]) -> dict:
    wall50, wall95 = _p50_p95([r["wall"] for r in rows])
    index50, index95 = _p50_p95([r["index"] for r in rows])
    searx50, _ = _p50_p95([r["searxng"] for r in rows])
    warnings: dict[str, int] = {}
    for r in rows:
        for w in filter(None, r["warning"].split("; ")):
            key = w.split(" (")[0] if "could not answer" in w else w
            warnings[key] = warnings.get(key, 0) + 1
    return {"n": len(rows), "errors": sum(r["status"] != 200 for r in rows),
            "wall_p50_ms": wall50, "wall_p95_ms": wall95, "index_p50_ms": index50, "index_p95_ms": index95,
            "searxng_p50_ms": searx50,
            "results_on_topic_median": _median([r["results"] for r in rows if r["on_topic"]]),
            "results_off_topic_median": _median([r["results"] for r in rows if not r["on_topic"]]),
            "warnings": warnings}


def _median(values: list[int]) -> float | None:
    return statistics.median(values) if values else None


def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {key: int(fields[key].split()[0]) for key in ("VmRSS", "VmHWM")}


def disk_bytes(folder: Path) -> dict[str, int]:
    """Allocated bytes (as du counts them) and apparent bytes of every file under `folder`."""
    allocated = apparent = 0
    for path in folder.rglob("*") if folder.exists() else ():
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            allocated += st.st_blocks * 512
            apparent += st.st_size
    return {"allocated": allocated, "apparent": apparent}


def warm_models(client: httpx.Client, semantic: str) -> None:
    """Let the embedder allocate what its first batches of passages and queries need, so that the RSS before the
    crawl holds the models at work and the RSS after adds the index."""
    passage = "SQLite writes changes to a write-ahead log and copies them back into the database file. " * 14
    for _ in range(2):
        client.post(f"{semantic}/embed", json={"texts": [passage] * 16, "kind": "passage"}).raise_for_status()
        client.post(f"{semantic}/embed", json={"texts": [QUERIES[0]], "kind": "query"}).raise_for_status()


def restart(service: Service) -> None:
    """Stop the service and start it again on the same port and environment (its Qdrant folder included)."""
    service.stop()
    service.start(timeout_s=180)


def memory(rss: dict[str, dict], disk: dict, stats: dict) -> dict:
    """Disk and RSS figures in bytes and KiB, and per 10k chunks in MiB."""
    chunks, dimension = stats.get("chunks") or 0, stats.get("dimension") or 0
    per_10k = 10_000 / chunks if chunks else 0.0
    vectors = chunks * dimension * 4
    before = rss["before_crawl"]["VmRSS"]
    return {"chunks": chunks, "documents": stats.get("documents"), "dimension": dimension,
            "disk_allocated_bytes": disk["allocated"], "disk_apparent_bytes": disk["apparent"],
            "disk_mib_per_10k": round(disk["allocated"] * per_10k / 2**20, 1),
            "rss_kib": rss,
            "crawl_growth_mib_per_10k": round((rss["after_crawl"]["VmRSS"] - before) * per_10k / 1024, 1),
            "index_rss_mib_per_10k": round((rss["restarted"]["VmRSS"] - before) * per_10k / 1024, 1),
            "vector_bytes": vectors, "vector_mib_per_10k": round(vectors * per_10k / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--site-prefix", default="www.sqlite.org", help="the site crawled (offline web path)")
    parser.add_argument("--limit", type=int, default=200, help="most pages of the crawl")
    parser.add_argument("--searches", type=int, default=60, help="requests per mode")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "index.json")
    args = parser.parse_args()
    os.environ.setdefault("EMBED_CACHE_SIZE", "0")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, wisp_stack(args.sites, Path(tmp), with_semantic=True) as stack, \
            httpx.Client(timeout=120) as client:
        assert stack.semantic is not None and stack.semantic.process is not None
        semantic_pid, qdrant = stack.semantic.process.pid, Path(tmp) / "qdrant"  # the first process
        warm_models(client, stack.semantic.url)
        rss = {"before_crawl": rss_kib(semantic_pid)}
        crawled = crawl(client, stack.agent.url, f"{stack.offline.web.url}/{args.site_prefix.strip('/')}/", args.limit)
        rss["after_crawl"] = rss_kib(semantic_pid)
        disk = disk_bytes(qdrant)
        stats = client.get(f"{stack.agent.url}/v2/index/stats").json()
        restart(stack.semantic)
        warm_models(client, stack.semantic.url)
        rss["restarted"] = rss_kib(stack.semantic.process.pid)
        restarted_stats = client.get(f"{stack.agent.url}/v2/index/stats").json()
        rows = searches(client, stack.agent.url, args.searches)
        rss["after_searches"] = rss_kib(stack.semantic.process.pid)
        lane = client.get(f"{stack.semantic.url}/stats").json()
    latency = {mode: latency_summary(rows[mode]) for mode in MODES}
    ratios = {f"{mode}_over_keyword_p50": round(latency[mode]["wall_p50_ms"] / latency["keyword"]["wall_p50_ms"], 2)
              for mode in MODES if mode != "keyword"}
    mem = {**memory(rss, disk, stats), "chunks_after_restart": restarted_stats.get("chunks")}
    load = {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()]}
    print_tables(crawled, latency, ratios, mem, load, args.searches, args.limit)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "args": {"sites": str(args.sites), "site_prefix": args.site_prefix, "limit": args.limit,
                 "searches": args.searches, "embed_cache_size": os.environ["EMBED_CACHE_SIZE"]},
        "crawl": crawled, "latency": latency, "ratios": ratios, "memory": mem, "semantic_stats": lane,
        "load_average": load, "queries": {"on_topic": ON_TOPIC, "off_topic": OFF_TOPIC},
        "rows": rows}, indent=1))
    print(f"results: {args.out}")


def print_tables(c: dict, latency: dict, ratios: dict, m: dict, load: dict, n: int, limit: int) -> None:
    first, second = c["halves"]["first"], c["halves"]["second"]
    print(f"\ncrawl of {c['seed']} (limit {limit}; status total {c['total']})\n")
    print("| status | pages | indexed | chunks | not indexed | errors | wall s | pages/s | chunks/s "
          "| pages/s 1st half | pages/s 2nd half |\n|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {c['status']} | {c['pages']} | {c['indexed']} | {c['chunks']} | {c['notIndexed']} | {c['errors']} "
          f"| {c['wall_s']} | {c['pages_per_s']} | {c['chunks_per_s']} | {_fmt(first['pages_per_s'])} "
          f"| {_fmt(second['pages_per_s'])} |")
    if c["warning"]:
        print(f"warning: {c['warning']}")
    print(f"\n{n} sequential searches per mode, modes in turn on each query, limit 10\n")
    print("| mode | wall p50 ms | wall p95 ms | index p50 ms | index p95 ms | searxng p50 ms | p50 / keyword "
          "| results on/off-topic | errors |\n|---|---|---|---|---|---|---|---|---|")
    for mode, r in latency.items():
        ratio = ratios.get(f"{mode}_over_keyword_p50", 1.0)
        print(f"| {mode} | {r['wall_p50_ms']} | {r['wall_p95_ms']} | {_fmt(r['index_p50_ms'])} "
              f"| {_fmt(r['index_p95_ms'])} | {_fmt(r['searxng_p50_ms'])} | {ratio:.2f} "
              f"| {r['results_on_topic_median']}/{r['results_off_topic_median']} | {r['errors']} |")
    for mode, r in latency.items():
        for warning, count in r["warnings"].items():
            print(f"  {mode}: {count}× {warning}")
    print(f"\nindex: {m['chunks']} chunks of {m['documents']} pages, dimension {m['dimension']}; "
          f"{m['chunks_after_restart']} chunks after semantic-svc's restart\n")
    print("| per 10k chunks | MiB |\n|---|---|")
    print(f"| Qdrant folder on disk | {m['disk_mib_per_10k']} |")
    rss = {k: v["VmRSS"] // 1024 for k, v in m["rss_kib"].items()}
    print(f"| semantic-svc RSS, restarted on the index − fresh ({rss['restarted']} − {rss['before_crawl']} MiB) "
          f"| {m['index_rss_mib_per_10k']} |")
    print(f"| semantic-svc RSS growth during the crawl ({rss['before_crawl']} → {rss['after_crawl']} MiB, "
          f"mostly the embedder's working memory) | {m['crawl_growth_mib_per_10k']} |")
    print(f"| vectors alone (chunks × dimension × 4 B) | {m['vector_mib_per_10k']} |")
    print(f"\nload average (1, 5, 15 min) before {load['before']}, after {load['after']}")


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


if __name__ == "__main__":
    main()
