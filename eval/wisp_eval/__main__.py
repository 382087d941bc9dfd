"""Command line of the evaluation harness.

    python -m wisp_eval run --queries Q --qrels R --agent URL [--searx URL] --modes keyword,raw_searxng
    python -m wisp_eval offline --sites S --queries Q --qrels R --modes keyword,raw_searxng
    python -m wisp_eval check --sites S --queries Q --qrels R
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx

from wisp_eval.dataset import DatasetError, Query, check_consistency, load_qrels, load_queries
from wisp_eval.report import markdown, plot, summarize, write_json
from wisp_eval.runner import Row, evaluate
from wisp_eval.targets import make_targets


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
    except DatasetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for problem in check_consistency(queries, qrels):
        print(f"warning: {problem}", file=sys.stderr)
    if args.command == "offline":
        with _offline_stack(args.sites) as (agent_url, searx_url):
            return _run(args, queries, qrels, agent_url, searx_url)
    return _run(args, queries, qrels, args.agent, args.searx)


def _run(args: argparse.Namespace, queries: list[Query], qrels: dict, agent_url: str | None,
         searx_url: str | None) -> int:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    with httpx.Client(timeout=args.timeout) as client:
        try:
            targets = make_targets(modes, agent_url, searx_url, client, args.limit)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        started = time.monotonic()
        rows = evaluate(queries, qrels, targets, args.k, progress=_print_progress)
    meta = {
        "queries_file": str(args.queries), "qrels_file": str(args.qrels), "queries": len(queries),
        "judged_queries": sum(1 for q in queries if qrels.get(q.qid) and not q.unanswerable),
        "unanswerable_queries": sum(q.unanswerable for q in queries), "modes": modes, "k": args.k,
        "limit": args.limit, "agent": agent_url, "searx": searx_url, "baseline": args.baseline,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.monotonic() - started, 1),
    }
    summary = summarize(rows, args.baseline, args.k)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / "results.json", meta, summary, rows)
    table = markdown(meta, summary, rows, args.baseline, args.k)
    (args.out / "report.md").write_text(table)
    plot(args.out / "quality_latency.png", summary, args.k)
    print(table)
    print(f"wrote {args.out}/results.json, report.md, quality_latency.png", file=sys.stderr)
    return 0


def _print_progress(done: int, total: int, query: Query, rows: list[Row]) -> None:
    parts = []
    for r in rows:
        quality = "error" if r.error else ("–" if r.ndcg is None else f"{r.ndcg:.2f}")
        parts.append(f"{r.mode} {quality} {r.latency_ms:.0f}ms")
    print(f"[{done:>{len(str(total))}}/{total}] {query.qid:<8} " + " | ".join(parts), file=sys.stderr, flush=True)


def _check(args: argparse.Namespace) -> int:
    from offline_web.sites import load_sites
    from wisp_eval.check import check_judgments

    problems, warnings = check_judgments(load_sites(args.sites), load_queries(args.queries), args.qrels)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"{len(problems)} problems, {len(warnings)} warnings")
    return 1 if problems else 0


@contextmanager
def _offline_stack(sites: Path) -> Iterator[tuple[str, str]]:
    """The offline web, a real searx and agent-svc on loopback, for as long as the run lasts."""
    from offline_web.stack import wisp_stack

    with tempfile.TemporaryDirectory() as tmp, wisp_stack(sites, Path(tmp)) as stack:
        yield stack.agent.url, stack.offline.searx.url


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m wisp_eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("run", "evaluate a running agent-svc (and SearXNG)"),
                            ("offline", "start the offline web, searx and agent-svc, then evaluate them")):
        command = sub.add_parser(name, help=help_text)
        command.add_argument("--queries", type=Path, required=True, help="qid, category, query, answer_key")
        command.add_argument("--qrels", type=Path, required=True, help="qid, host/path[#fragment], grade")
        command.add_argument("--modes", default="keyword,raw_searxng",
                             help="comma-separated retrieval modes of agent-svc, and raw_searxng for SearXNG itself")
        command.add_argument("--baseline", default="keyword", help="the mode the sign tests compare against")
        command.add_argument("--k", type=int, default=5, help="cut-off of nDCG and success")
        command.add_argument("--limit", type=int, default=10, help="results asked for per query")
        command.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one answer")
        command.add_argument("--out", type=Path, default=Path("eval-results"))
        if name == "run":
            command.add_argument("--agent", help="agent-svc base URL, e.g. http://127.0.0.1:3002")
            command.add_argument("--searx", help="SearXNG base URL, for raw_searxng")
        else:
            command.add_argument("--sites", type=Path, required=True, help="sites file of the offline web")
    check = sub.add_parser("check", help="check judgments against the offline corpus")
    check.add_argument("--sites", type=Path, required=True)
    check.add_argument("--queries", type=Path, required=True)
    check.add_argument("--qrels", type=Path, required=True)
    return parser


if __name__ == "__main__":
    sys.exit(main())
