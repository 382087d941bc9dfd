"""What a research job holds and where its time goes: multi-hop questions of the dev split (eval/data/research) as
research jobs (POST /v2/agent, one at a time) at each effort, on the offline web with a real searx, semantic-svc
and the test LLM (SmolLM2-135M under llama.cpp, one thread), or none with `--no-llm`.

Per job, from its trace (each step's end, seconds from the start; a step's time is the time since the step before
it): search (a hybrid search, its pages fetched and read), plan and reflect (the LLM's queries and the follow-ups),
write (the report and its claim check). Memory: the characters of the notes the job keeps (its evidence, as the
report without an LLM lists them; a job writes its report from these) against the characters of the pages those
notes come from (each page read whole, as the search read it; the notes are counted with --no-llm, where the
report is the evidence itself), and agent-svc's resident memory after each job:
notes, not pages, so it stays flat however much a job reads. Prints tables of medians and writes JSON.

    .venv/bin/python bench/research_jobs.py [--questions 8] [--efforts low,medium,high] [--no-llm]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from offline_web.stack import wisp_stack
from wisp_eval.multihop import load_multihop

ROOT = Path(__file__).parent.parent
DATA = ROOT / "eval" / "data" / "research"
KINDS = ("search", "plan", "reflect", "write")


def run_job(http: httpx.Client, question: str, effort: str) -> dict:
    """One job, polled to its end: its wall time, its steps' time by kind, its notes' and sources' sizes."""
    started = time.monotonic()
    job_id = http.post("/v2/agent", json={"prompt": question, "effort": effort, "mode": "chat"}).json()["id"]
    while (status := http.get(f"/v2/agent/{job_id}").json())["status"] == "processing":
        time.sleep(0.5)
    wall = time.monotonic() - started
    events = http.get(f"/v2/agent/{job_id}/trace").json()["events"]
    split = dict.fromkeys(KINDS, 0.0)
    previous = 0.0
    # between run.started and run.finished, each step recorded as it ends ("end": once the report is written)
    for event in events[1:-1]:
        kind = event["message"].split(":", 1)[0]
        kind = "write" if kind == "end" else kind
        at = _seconds(event, events)
        if kind in split:
            split[kind] += at - previous
        previous = at
    return {"wall_s": round(wall, 2), "split_s": {k: round(v, 2) for k, v in split.items()},
            "searches": sum(e.get("message", "").startswith("search:") for e in events),
            "sources": [s["url"] for s in status.get("sources", [])], "llm_calls": status.get("llmCalls"),
            "text_chars": len(status.get("message") or status.get("partial") or ""), "status": status["status"]}


def _seconds(event: dict, events: list[dict]) -> float:
    """Seconds from the job's start to this step's end (the trace's instants are milliseconds apart)."""
    from datetime import datetime

    first = datetime.fromisoformat(events[0]["occurredAt"].replace("Z", "+00:00"))
    return (datetime.fromisoformat(event["occurredAt"].replace("Z", "+00:00")) - first).total_seconds()


def page_chars(http: httpx.Client, urls: list[str]) -> int:
    return sum(len(http.get(url).text) for url in urls)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=8, help="dev questions, the first N")
    parser.add_argument("--efforts", default="low,medium,high")
    parser.add_argument("--no-llm", action="store_true", help="no LLM: the report is the evidence")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "research_jobs.json")
    args = parser.parse_args()
    questions = [q.text for q in load_multihop(DATA / "questions.tsv", DATA / "hops.tsv") if q.split == "dev"]
    questions = questions[:args.questions]
    efforts = [e.strip() for e in args.efforts.split(",") if e.strip()]
    results: dict = {"questions": len(questions), "llm": None if args.no_llm else "SmolLM2-135M", "efforts": {}}
    with tempfile.TemporaryDirectory(prefix="wisp-bench-research-") as tmp, \
            wisp_stack(ROOT / "eval" / "data" / "sites.tsv", Path(tmp), with_semantic=True,
                       with_llm=not args.no_llm, agent_env={"LLM_BASE_URL": ""} if args.no_llm else None) as stack, \
            httpx.Client(base_url=stack.agent.url, timeout=600) as http:
        pid = stack.agent.process.pid
        rss = [rss_mb(pid)]
        for effort in efforts:
            jobs = []
            for question in questions:
                jobs.append(run_job(http, question, effort))
                rss.append(rss_mb(pid))
                print(f"{effort:6} {jobs[-1]['wall_s']:6.1f} s {jobs[-1]['split_s']}", flush=True)
            results["efforts"][effort] = _summary(jobs)
            results["efforts"][effort]["jobs"] = jobs
        measured = results["efforts"][efforts[-1]]["jobs"]
        read = [page_chars(http, job["sources"]) for job in measured]
        # without an LLM the report is the evidence: every note the job kept, cited
        kept = [job["text_chars"] for job in measured] if args.no_llm else []
        results["memory"] = {"effort": efforts[-1], "notes_chars_median": statistics.median(kept) if kept else None,
                             "pages_read_chars_median": statistics.median(read),
                             "agent_rss_mb": [round(r, 1) for r in rss]}
    _print(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"\nwrote {args.out}")


def _summary(jobs: list[dict]) -> dict:
    return {"wall_s_median": round(statistics.median(j["wall_s"] for j in jobs), 1),
            "split_s_median": {k: round(statistics.median(j["split_s"][k] for j in jobs), 2) for k in KINDS},
            "searches_median": statistics.median(j["searches"] for j in jobs),
            "sources_median": statistics.median(len(j["sources"]) for j in jobs),
            "completed": sum(j["status"] == "completed" for j in jobs)}


def _print(results: dict) -> None:
    print(f"\n{results['questions']} multi-hop questions, LLM: {results['llm']}, medians\n")
    print("| effort | job s | search s | plan s | reflect s | write s | searches | sources | completed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for effort, s in results["efforts"].items():
        split = s["split_s_median"]
        print(f"| {effort} | {s['wall_s_median']} | {split['search']} | {split['plan']} | {split['reflect']} | "
              f"{split['write']} | {s['searches_median']} | {s['sources_median']} | {s['completed']} |")
    memory = results["memory"]
    kept = "n/a (run with --no-llm)" if memory["notes_chars_median"] is None else f"{memory['notes_chars_median']:,}"
    print(f"\n{memory['effort']} effort: notes a job keeps: {kept} chars (median); the pages they come from: "
          f"{memory['pages_read_chars_median']:,} chars; agent-svc RSS after each job (MB): {memory['agent_rss_mb']}")


if __name__ == "__main__":
    main()
