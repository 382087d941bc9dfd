"""The vector modes on the dev set: crawl some of the offline web's sites into the index, calibrate the
relevance floor, and compare keyword, hybrid, vector and hybrid_vector on the queries about those sites.

Brings up the offline web on the sites file, a real searx, semantic-svc and agent-svc (the floor off, so that
calibration sees every score), and crawls each prefix through POST /v2/crawl. Then:

- floor: the best indexed chunk's cosine for every dev query, on-topic (a page of grade 2 or more lies on a
  crawled site) against off-topic (the others: their answers are on sites the index does not hold); the floor
  chosen is the one that keeps the most on-topic queries while dropping the most off-topic ones (Youden's J);
- quality: wisp_eval's nDCG@5, success and answerability on the on-topic queries, every mode interleaved per
  query, through a second agent-svc that runs with the chosen floor.

Prints both tables and writes JSON (and wisp_eval's report.md beside it).

    .venv/bin/python bench/vector_eval.py [--sites eval/data/sites.tsv] [--limit 1000]
        [--prefixes www.sqlite.org,git-scm.com/docs,www.mkdocs.org] [--index-dir DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from offline_web.stack import uvicorn_service, wisp_stack
from wisp_eval.dataset import Query, load_qrels, load_queries
from wisp_eval.report import markdown, summarize
from wisp_eval.runner import evaluate
from wisp_eval.targets import AgentMode

ROOT = Path(__file__).parent.parent
DEV = ROOT / "eval" / "data" / "dev"
MODES = ["keyword", "hybrid", "vector", "vector+rerank", "hybrid_vector", "hybrid_vector+norerank"]


def main() -> None:
    args = _parser().parse_args()
    prefixes = [p.strip().strip("/") for p in args.prefixes.split(",") if p.strip()]
    queries, qrels = load_queries(DEV / "queries.tsv"), load_qrels(DEV / "qrels.tsv")
    on_topic = [q for q in queries if _about(qrels.get(q.qid, {}), prefixes)]
    kept = args.index_dir / "crawls.json" if args.index_dir else None
    earlier = json.loads(kept.read_text()) if kept and kept.exists() else None
    semantic_env = {"QDRANT_PATH": str(args.index_dir / "qdrant")} if args.index_dir else {}
    # an index kept from an earlier run holds that run's page URLs: the offline web serves on the same port again
    with tempfile.TemporaryDirectory() as tmp, \
            wisp_stack(args.sites, Path(tmp), with_semantic=True, agent_env={"VECTOR_FLOOR": "-1"},
                       semantic_env=semantic_env, web_port=earlier["web_port"] if earlier else 0) as stack:
        web = stack.offline.web.url
        if earlier:
            crawls = [{**c, "reused": True} for c in earlier["crawls"]]
        else:
            crawls = [_crawl(stack.agent.url, f"{web}/{prefix}/", args.limit) for prefix in prefixes]
            if kept:
                kept.write_text(json.dumps({"web_port": urlsplit(web).port, "crawls": crawls}))
        assert stack.semantic is not None
        best = {q.qid: _best_cosine(stack.semantic.url, q.text) for q in queries}
        floor = _chosen_floor([best[q.qid] for q in on_topic],
                              [best[q.qid] for q in queries if q not in on_topic])
        env = {"SEARXNG_URL": stack.offline.searx.url, "FETCH_ALLOW_HOSTS": "127.0.0.1",
               "SEMANTIC_SVC_URL": stack.semantic.url, "VECTOR_FLOOR": str(floor["floor"]),
               "CRAWL_DB": str(Path(tmp) / "floored.sqlite")}
        with uvicorn_service("agent-floored", "agent.app:app", Path(tmp), env) as agent, \
                httpx.Client(timeout=120) as client:
            targets = [AgentMode(mode, agent.url, client, 10) for mode in MODES]
            rows = evaluate(on_topic, qrels, targets, 5)
    summary = summarize(rows, "keyword", 5)
    meta = {"queries_file": f"{DEV / 'queries.tsv'} (on the crawled sites)", "queries": len(on_topic),
            "judged_queries": len(on_topic), "unanswerable_queries": 0, "limit": 10}
    report = markdown(meta, summary, rows, "keyword", 5)
    _print(crawls, floor, best, queries, on_topic, report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"prefixes": prefixes, "crawls": crawls, "floor": floor,
                                    "best_cosine": best, "on_topic": [q.qid for q in on_topic],
                                    "summary": summary, "rows": [r.__dict__ for r in rows]}, indent=1, default=str))
    args.out.with_suffix(".md").write_text(report)
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")


def _about(judged: dict[str, int], prefixes: list[str]) -> bool:
    return any(grade >= 2 and any(page.startswith(p + "/") or page == p for p in prefixes)
               for page, grade in judged.items())


def _crawl(agent_url: str, seed: str, limit: int, timeout_s: float = 3600) -> dict:
    started = time.monotonic()
    job = httpx.post(agent_url + "/v2/crawl", json={"url": seed, "limit": limit}, timeout=30).json()
    while True:
        status = httpx.get(f"{agent_url}/v2/crawl/{job['id']}", params={"limit": 1}, timeout=30).json()
        if status["status"] != "scraping":
            break
        if time.monotonic() - started > timeout_s:
            raise SystemExit(f"the crawl of {seed} did not end within {timeout_s} s: {status}")
        time.sleep(1)
    wall = time.monotonic() - started
    return {"seed": seed, "status": status["status"], "pages": status["completed"], **status["index"],
            "wall_s": round(wall, 1), "pages_per_s": round(status["completed"] / wall, 2),
            "warning": status.get("warning")}


def _best_cosine(semantic_url: str, text: str) -> float:
    """The best cosine among the chunks the index answers with (in its fused order, the first is not always it)."""
    results = httpx.post(semantic_url + "/index/search", json={"query": text, "limit": 40}, timeout=60).json()
    return max((float(r["score"]) for r in results["results"]), default=-1.0)


def _chosen_floor(on_topic: list[float], off_topic: list[float]) -> dict:
    best = _floor(on_topic, off_topic)
    return {"floor": round(best, 3), "held_out_errors": _held_out_errors(on_topic, off_topic),
            "on_topic_kept": sum(s >= best for s in on_topic), "on_topic": len(on_topic),
            "off_topic_dropped": sum(s < best for s in off_topic), "off_topic": len(off_topic),
            "on_topic_range": [round(min(on_topic), 3), round(max(on_topic), 3)],
            "off_topic_range": [round(min(off_topic), 3), round(max(off_topic), 3)],
            "on_topic_median": round(statistics.median(on_topic), 3),
            "off_topic_median": round(statistics.median(off_topic), 3)}


def _floor(on_topic: list[float], off_topic: list[float]) -> float:
    """The threshold with the best Youden's J (on-topic kept minus off-topic kept), midway between scores."""
    cuts = sorted(set(on_topic + off_topic))
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(cuts)] or [0.0]

    def j(cut: float) -> float:
        return (sum(s >= cut for s in on_topic) / len(on_topic)) - (sum(s >= cut for s in off_topic) / len(off_topic))

    return max(candidates, key=lambda c: (j(c), -abs(c - statistics.median(candidates))))


def _held_out_errors(on_topic: list[float], off_topic: list[float]) -> int:
    """Leave-one-out: the queries the floor chosen without them puts on the wrong side."""
    wrong = 0
    for group, other, keep in ((on_topic, off_topic, True), (off_topic, on_topic, False)):
        for i, score in enumerate(group):
            rest = group[:i] + group[i + 1:]
            cut = _floor(rest, other) if keep else _floor(other, rest)
            wrong += (score >= cut) != keep
    return wrong


def _print(crawls: list[dict], floor: dict, best: dict[str, float], queries: list[Query], on_topic: list[Query],
           report: str) -> None:
    print("| seed | pages | indexed | chunks | not indexed | wall s | pages/s |\n|---|---|---|---|---|---|---|")
    for c in crawls:
        print(f"| {c['seed']} | {c['pages']} | {c['indexed']} | {c['chunks']} | {c['notIndexed']} | {c['wall_s']} "
              f"| {c['pages_per_s']} |")
    print(f"\nfloor {floor['floor']}: keeps {floor['on_topic_kept']}/{floor['on_topic']} on-topic queries "
          f"(best cosine {floor['on_topic_range'][0]}–{floor['on_topic_range'][1]}, median "
          f"{floor['on_topic_median']}), drops {floor['off_topic_dropped']}/{floor['off_topic']} off-topic "
          f"({floor['off_topic_range'][0]}–{floor['off_topic_range'][1]}, median {floor['off_topic_median']}); "
          f"left out one at a time, {floor['held_out_errors']} queries fall on the wrong side")
    on = {q.qid for q in on_topic}
    for q in sorted(queries, key=lambda q: -best[q.qid]):
        print(f"  {'ON ' if q.qid in on else 'off'} {best[q.qid]:.3f} {q.qid} {q.text}")
    print()
    print(report)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--prefixes", default="www.sqlite.org,git-scm.com/docs,www.mkdocs.org")
    parser.add_argument("--limit", type=int, default=1000, help="most pages per crawled site")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "vector_eval.json")
    parser.add_argument("--index-dir", type=Path, help="keep the index here, and reuse it on the next run (the "
                        "crawls take about 20 minutes; the offline web must be free to serve on the same port)")
    return parser


if __name__ == "__main__":
    main()
