"""Summaries per mode, and the three outputs: JSON (every row), a Markdown table, a PNG plot."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent.ranking.anytime import PARTIAL
from agent.ranking.runner import FIRST_PASS, SEARXNG_ORDER
from wisp_eval.metrics import percentile, sign_test
from wisp_eval.runner import Row


def summarize(rows: list[Row], baseline: str, k: int) -> list[dict[str, Any]]:
    """One summary per mode, in the order the modes were given, each compared with `baseline` per query."""
    by_mode: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_mode[row.mode].append(row)
    return [_summary(mode, mode_rows, by_mode.get(baseline, []), k) for mode, mode_rows in by_mode.items()]


def _summary(mode: str, rows: list[Row], baseline_rows: list[Row], k: int) -> dict[str, Any]:
    judged = [r.ndcg for r in rows if r.ndcg is not None]
    with_keys = [r.answerable for r in rows if r.answerable is not None]
    unanswerable = [r.abstained for r in rows if r.unanswerable]
    answerable_queries = [r.abstained for r in rows if not r.unanswerable]
    latencies = [r.latency_ms for r in rows if r.error is None]
    stages: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for stage, ms in r.timings_ms.items():
            stages[stage].append(ms)
    return {
        "mode": mode,
        "queries": len(rows),
        "judged": len(judged),
        f"ndcg@{k}": _mean(judged),
        f"success@{k}": _mean([r.success for r in rows if r.success is not None]),
        "answerable": _mean(with_keys),
        "abstention_on_unanswerable": _mean(unanswerable),
        "abstention_on_answerable": _mean(answerable_queries),
        "errors": sum(r.error is not None for r in rows),
        # ranked modes under load: answers in SearXNG's order (nothing scored, no page fetched), ranked by the
        # first pass (the model not waited for), and ranked from part of the texts
        "searxng_order": sum(SEARXNG_ORDER in r.warning for r in rows),
        "first_pass": sum(FIRST_PASS in r.warning for r in rows),
        "partial_ranking": sum(PARTIAL in r.warning for r in rows),
        "latency_ms": _spread(latencies),
        "stages_ms": {stage: _spread(values) for stage, values in sorted(stages.items())},
        "vs_baseline": {
            f"ndcg@{k}": _paired(rows, baseline_rows, lambda r: r.ndcg),
            "answerable": _paired(rows, baseline_rows, lambda r: r.answerable),
        },
    }


def _paired(rows: list[Row], baseline_rows: list[Row], value) -> dict[str, Any]:
    """Wins, losses and ties per query against the baseline, with the two-sided sign test's p."""
    theirs = {r.qid: value(r) for r in baseline_rows}
    wins = losses = ties = 0
    for row in rows:
        mine, other = value(row), theirs.get(row.qid)
        if mine is None or other is None:
            continue
        wins += mine > other
        losses += mine < other
        ties += mine == other
    return {"wins": wins, "losses": losses, "ties": ties, "p": round(sign_test(wins, losses), 4)}


def _mean(values: list) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _spread(values: list[float]) -> dict[str, float | None]:
    return {"p50": _round(percentile(values, 0.5)), "p95": _round(percentile(values, 0.95))}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def write_json(path: Path, meta: dict[str, Any], summary: list[dict], rows: list[Row]) -> None:
    path.write_text(json.dumps({"meta": meta, "summary": summary, "rows": [r.as_dict() for r in rows]}, indent=2))


def markdown(meta: dict[str, Any], summary: list[dict], rows: list[Row], baseline: str, k: int) -> str:
    lines = [
        f"# Evaluation: {meta['queries_file']}", "",
        f"{meta['queries']} queries ({meta['judged_queries']} judged, {meta['unanswerable_queries']} unanswerable), "
        f"k = {k}, limit = {meta['limit']}, modes interleaved per query; sign tests against `{baseline}`; "
        f"{meta.get('busy_loops', 0)} busy loops beside the stack.", "",
        f"| mode | nDCG@{k} | success@{k} | answerable | abstained (unanswerable) | p50 ms | p95 ms "
        f"| nDCG@{k} vs {baseline} W/L/T (p) | answerable vs {baseline} W/L/T (p) | errors "
        "| SearXNG order | first pass | partial ranking |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['mode']} | {fmt(s[f'ndcg@{k}'])} | {fmt(s[f'success@{k}'])} | {fmt(s['answerable'])} "
            f"| {fmt(s['abstention_on_unanswerable'])} | {fmt(s['latency_ms']['p50'], 0)} "
            f"| {fmt(s['latency_ms']['p95'], 0)} | {versus(s, f'ndcg@{k}', baseline)} "
            f"| {versus(s, 'answerable', baseline)} | {s['errors']} | {s['searxng_order']} "
            f"| {s['first_pass']} | {s['partial_ranking']} |"
        )
    lines += ["", "## Time per stage (from `timings_ms`)", "",
              "| mode | stage | p50 ms | p95 ms |", "|---|---|---|---|"]
    for s in summary:
        for stage, spread in s["stages_ms"].items():
            lines.append(f"| {s['mode']} | {stage} | {fmt(spread['p50'], 1)} | {fmt(spread['p95'], 1)} |")
    modes = [s["mode"] for s in summary]
    lines += ["", f"## Per query: nDCG@{k} / answer found", "", "| qid | query | " + " | ".join(modes) + " |",
              "|---|---|" + "---|" * len(modes)]
    cells = {(r.qid, r.mode): r for r in rows}
    for qid, text in dict.fromkeys((r.qid, r.query) for r in rows):
        marks = [_cell(cells[(qid, m)]) for m in modes]
        lines.append(f"| {qid} | {text} | " + " | ".join(marks) + " |")
    return "\n".join(lines) + "\n"


def plot(path: Path, summary: list[dict], k: int) -> None:
    """Quality against median latency, one point per mode: nDCG@k and answerability side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    # from zero, so that close latencies look close; room on the right for the labels
    slowest = max((s["latency_ms"]["p50"] or 0 for s in summary), default=0) or 1
    for axis, metric, label in ((axes[0], f"ndcg@{k}", f"nDCG@{k}"), (axes[1], "answerable", "answerability")):
        for s in summary:
            x, y = s["latency_ms"]["p50"], s[metric]
            if x is None or y is None:
                continue
            axis.scatter([x], [y], s=60)
            axis.annotate(s["mode"], (x, y), textcoords="offset points", xytext=(6, 4))
        axis.set(xlabel="p50 latency (ms)", ylabel=label, xlim=(0, slowest * 1.35), ylim=(0, 1.05),
                 title=f"{label} vs latency")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def versus(summary: dict, metric: str, baseline: str) -> str:
    """A summary's wins/losses/ties against the baseline on `metric`, with the sign test's p, as a table cell."""
    if summary["mode"] == baseline:
        return "baseline"
    t = summary["vs_baseline"][metric]
    return f"{t['wins']}/{t['losses']}/{t['ties']} ({t['p']:.2f})"


def _cell(row: Row) -> str:
    if row.error:
        return "error"
    if row.unanswerable:
        return "abstained" if row.abstained else "answered (should abstain)"
    ndcg = "–" if row.ndcg is None else f"{row.ndcg:.2f}"
    found = {True: "yes", False: "no", None: "–"}[row.answerable]
    return f"{ndcg} / {found}"


def fmt(value: float | None, digits: int = 3) -> str:
    """A number as a table cell, a dash for none."""
    return "–" if value is None else f"{value:.{digits}f}"
