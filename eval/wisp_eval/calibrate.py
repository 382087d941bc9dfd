"""Calibrate a ranked mode's pruning margin the way seed 000 did: look at how far below the top score the
relevant and the irrelevant candidates fall, and pick a margin between the two.

Each query runs with `explain`, which lists every candidate with its final score; the judgments say which are
relevant. The margin kept is the smallest that keeps at least `keep_share` of the relevant (grade ≥ 2) pages.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from wisp_eval.dataset import Query
from wisp_eval.metrics import page_key, percentile

MARGINS = [round(0.05 * i, 2) for i in range(1, 61)]


@dataclass
class Gap:
    qid: str
    page: str
    grade: int
    gap: float  # top score − this candidate's score
    evidence: str  # "ok" when its page content was scored, else why the snippet stood in


def collect_gaps(client: httpx.Client, agent_url: str, mode: str, queries: list[Query],
                 qrels: dict[str, dict[str, int]]) -> list[Gap]:
    gaps: list[Gap] = []
    for query in (q for q in queries if qrels.get(q.qid) and not q.unanswerable):
        body = client.post(f"{agent_url}/v2/search", json={"query": query.text, "limit": 10, "retrieval_mode": mode,
                                                           "explain": True}).json()
        rows = [r for r in body.get("explain") or [] if r.get("score") is not None]
        if not rows:
            continue
        top = max(r["score"] for r in rows)
        gaps += [Gap(query.qid, page_key(r["url"]), qrels[query.qid].get(page_key(r["url"]), 0), top - r["score"],
                     r.get("fetch") or "not fetched") for r in rows]
    return gaps


def margin_table(gaps: list[Gap], margins: list[float] | None = None) -> list[dict]:
    """For each margin: the share of relevant (grade ≥ 2) and of irrelevant candidates it keeps."""
    relevant = [g.gap for g in gaps if g.grade >= 2]
    irrelevant = [g.gap for g in gaps if g.grade == 0]
    return [{"margin": m,
             "relevant_kept": _share(relevant, m), "irrelevant_kept": _share(irrelevant, m)}
            for m in margins or MARGINS]


def recommend(gaps: list[Gap], keep_share: float = 1.0) -> float | None:
    """The smallest margin that keeps `keep_share` of the relevant candidates."""
    for row in margin_table(gaps):
        if row["relevant_kept"] is not None and row["relevant_kept"] >= keep_share:
            return row["margin"]
    return None


def distribution(gaps: list[Gap]) -> dict[str, dict]:
    groups = {"grade >= 2": [g.gap for g in gaps if g.grade >= 2], "grade 1": [g.gap for g in gaps if g.grade == 1],
              "grade 0": [g.gap for g in gaps if g.grade == 0],
              "snippet stood in": [g.gap for g in gaps if g.evidence != "ok"]}
    return {name: {"n": len(v), **{f"p{int(q * 100)}": _r(percentile(v, q)) for q in (0.1, 0.5, 0.9)},
                   "max": _r(max(v) if v else None)} for name, v in groups.items()}


def _share(values: list[float], margin: float) -> float | None:
    return round(sum(v <= margin for v in values) / len(values), 3) if values else None


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
