"""Rich answers with the demo's LLM: of the answerable dev queries, how many rich answers carry at least one
supported (so cited) claim, with the extractive fallback on or off (RICH_EXTRACTIVE_FALLBACK).

Brings up the offline web, searx, semantic-svc (the offline models), the demo's LLM (SmolLM2-135M-Instruct under
llama.cpp, one thread) and agent-svc on loopback, and asks each answerable query once, `search_type: "rich"` with
`explain`, one at a time. With the fallback on, an extractive answer keeps the LLM's draft and its verdicts
(`answer.llm_draft`), so the same run also counts the LLM's own answers with a supported claim: what the fallback
off would return, the model being deterministic (temperature 0). Also counted: answers whose text holds one of
the query's answer keys, and the load average while it ran (other work on the machine slows the LLM). Prints a
table and writes JSON.

    .venv/bin/python bench/rich_supported.py [--fallback on|off] [--first N] [--query TEXT ...]
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

from offline_web.stack import wisp_stack
from wisp_eval.dataset import Query, load_queries

ROOT = Path(__file__).parent.parent


def ask(http: httpx.Client, query: Query) -> dict:
    """One rich answer, reduced to what is counted."""
    started = time.monotonic()
    response = http.post("/v2/search", json={"query": query.text, "search_type": "rich", "limit": 5,
                                             "explain": True})
    wall_s = time.monotonic() - started
    body = response.json()
    answer = body.get("answer") or {}
    claims = answer.get("claims") or []
    draft = answer.get("llm_draft")
    # the LLM's own claims: its draft's when the extractive answer replaced it, else the answer's
    draft_claims = ((draft or {}).get("claims") or []) if answer.get("extractive") else claims
    text = answer.get("text") or ""
    return {"qid": query.qid, "query": query.text, "status": response.status_code, "wall_s": round(wall_s, 1),
            "answered": bool(answer), "abstained": bool(answer.get("abstained")),
            "extractive": bool(answer.get("extractive")),
            "claims": len(claims), "supported": sum(bool(c["supported"]) for c in claims),
            "llm_supported": sum(bool(c["supported"]) for c in draft_claims),
            "answer_key": any(key.lower() in text.lower() for key in query.answer_keys),
            "llm_ms": (answer.get("timings_ms") or {}).get("llm"), "text": text,
            "llm_draft": (draft or {}).get("text"), "warning": body.get("warning"),
            "load": round(os.getloadavg()[0], 2)}


def summary(rows: list[dict]) -> dict:
    loads = [r["load"] for r in rows]
    return {"queries": len(rows),
            "answered": sum(r["answered"] and not r["abstained"] for r in rows),
            "abstained": sum(r["abstained"] for r in rows),
            "with_supported_claim": sum(r["supported"] > 0 for r in rows),
            "llm_draft_with_supported_claim": sum(r["llm_supported"] > 0 for r in rows),
            "extractive": sum(r["extractive"] for r in rows),
            "answer_key_in_text": sum(r["answer_key"] for r in rows),
            "wall_s_median": round(statistics.median(r["wall_s"] for r in rows), 1),
            "load_average_1m": {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}}


def table(result: dict) -> str:
    s = result["summary"]
    n = s["queries"]
    rows = [("rich answers with ≥ 1 supported claim", s["with_supported_claim"]),
            ("  the LLM's own answer with ≥ 1 supported claim", s["llm_draft_with_supported_claim"]),
            ("  extractive answers", s["extractive"]),
            ("answered (not abstained)", s["answered"]), ("abstained", s["abstained"]),
            ("answer key in the answer's text", s["answer_key_in_text"])]
    lines = [f"RICH_EXTRACTIVE_FALLBACK={result['fallback']}, {n} answerable queries, median "
             f"{s['wall_s_median']} s an answer, load average (1 min) {s['load_average_1m']}",
             "| | queries | share |", "|---|---|---|"]
    lines += [f"| {label} | {count} | {count / n:.2f} |" for label, count in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=Path, default=ROOT / "eval" / "data" / "dev" / "queries.tsv")
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--fallback", choices=("on", "off"), default="on")
    parser.add_argument("--first", type=int, default=0, help="the first N answerable queries (0: all)")
    parser.add_argument("--query", action="append", default=[], help="ask this instead of the dev set (repeatable)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    queries = [q for q in load_queries(args.queries) if not q.unanswerable]
    queries = queries[:args.first] if args.first else queries
    queries = [Query(f"x{n}", "", text, ()) for n, text in enumerate(args.query, 1)] or queries
    fallback = "true" if args.fallback == "on" else "false"
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="wisp-bench-rich-") as tmp, \
            wisp_stack(args.sites, Path(tmp), with_semantic=True, with_llm=True,
                       agent_env={"RICH_EXTRACTIVE_FALLBACK": fallback}) as stack, \
            httpx.Client(base_url=stack.agent.url, timeout=300) as http:
        for query in queries:
            rows.append(ask(http, query))
            r = rows[-1]
            print(f"[{len(rows)}/{len(queries)}] {query.qid} {r['wall_s']:5.1f} s supported {r['supported']}/"
                  f"{r['claims']} llm {r['llm_supported']} extractive {r['extractive']} load {r['load']}", flush=True)
    result = {"fallback": fallback, "queries_file": str(args.queries), "summary": summary(rows), "rows": rows}
    print(table(result))
    out = args.out or ROOT / "bench" / "results" / f"rich_supported_{args.fallback}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
