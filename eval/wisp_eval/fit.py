"""Fit the weights of a ranked mode's `linear` fusion on judged queries, with cross-validation by query.

Each query runs once with `explain`, which lists every candidate with its page features (agent-svc's
features.py: score, prior, title, pass1) and whether the margin kept it. Any weighting can then be scored
offline, the way the pipeline orders: features z-scored over the scored candidates, the kept ones ordered by
the weighted sum (agent-svc's own fusion functions), nDCG@k of the first k. Weights are chosen on k−1 folds
and scored on the held-out fold, so the folds' test figures, not the training fit, say what the weights are
worth on queries they did not see.
"""

from __future__ import annotations

import hashlib
import itertools
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import httpx

from agent.ranking.features import FEATURES
from agent.ranking.fusion import linear, rrf
from wisp_eval.dataset import Query
from wisp_eval.metrics import ndcg_at_k, page_key

GRID = {"prior": (0.0, 0.25, 0.5, 0.75, 1.0, 1.5), "title": (0.0, 0.1, 0.25, 0.5, 0.75, 1.0),
        "pass1": (0.0, 0.25, 0.5, 1.0)}
Order = Callable[[Sequence["Candidate"]], list["Candidate"]]


@dataclass(frozen=True)
class Candidate:
    page: str
    rank: int  # SearXNG's
    kept: bool
    features: Mapping[str, float]


@dataclass(frozen=True)
class Judged:
    qid: str
    candidates: tuple[Candidate, ...]
    grades: Mapping[str, int]


def collect(client: httpx.Client, agent_url: str, mode: str, queries: list[Query],
            qrels: dict[str, dict[str, int]], limit: int = 10) -> list[Judged]:
    """Every judged, answerable query's candidates with their features, as one explain run gives them."""
    judged = []
    for query in (q for q in queries if qrels.get(query_id := q.qid) and not q.unanswerable):
        body = client.post(f"{agent_url}/v2/search", json={"query": query.text, "limit": limit,
                                                           "retrieval_mode": mode, "explain": True}).json()
        candidates = tuple(Candidate(page_key(r["url"]), r["searxng_rank"], r["decision"] == "kept", r["features"])
                           for r in body.get("explain") or [] if r.get("features"))
        judged.append(Judged(query_id, candidates, qrels[query_id]))
    return judged


def load_judged(rows: list[dict]) -> list[Judged]:
    """Judged queries as an earlier fit wrote them (its JSON's `judged`)."""
    return [Judged(r["qid"], tuple(Candidate(**c) for c in r["candidates"]), r["grades"]) for r in rows]


def linear_order(candidates: Sequence[Candidate], weights: Mapping[str, float]) -> list[Candidate]:
    """The kept candidates as agent-svc's `linear` fusion orders them."""
    return _kept(candidates, linear(_columns(candidates), weights))


def rrf_order(candidates: Sequence[Candidate], weight: float) -> list[Candidate]:
    """The kept candidates as agent-svc's `rrf` fusion orders them."""
    return _kept(candidates, rrf(_columns(candidates), {"score": weight}))


def mean_ndcg(judged: Sequence[Judged], order: Order, k: int = 5) -> float:
    values = [ndcg_at_k([c.page for c in order(j.candidates)], dict(j.grades), k) for j in judged]
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else 0.0


def weightings(features: Sequence[str]) -> list[dict[str, float]]:
    """The grid: the score's weight fixed at 1 (only ratios matter), each other feature over its values."""
    names = [f for f in features if f in GRID]
    return [{"score": 1.0, **dict(zip(names, values, strict=True))}
            for values in itertools.product(*(GRID[n] for n in names))]


def folds(judged: Sequence[Judged], k: int) -> list[list[Judged]]:
    """k folds of near-equal size, dealt in the order of a hash of the query id: stable across runs and
    independent of file order."""
    parts: list[list[Judged]] = [[] for _ in range(k)]
    for i, j in enumerate(sorted(judged, key=lambda j: hashlib.sha256(j.qid.encode()).hexdigest())):
        parts[i % k].append(j)
    return parts


def cross_validate(judged: Sequence[Judged], features: Sequence[str], k: int = 5, current_weight: float = 0.5
                   ) -> dict:
    """Per fold: the weights best on the other folds, their nDCG on this fold, and today's rrf on this fold."""
    grid = weightings(features)
    rows = []
    for i, test in enumerate(folds(judged, k)):
        train = [j for n, part in enumerate(folds(judged, k)) if n != i for j in part]
        best = max(grid, key=lambda w: mean_ndcg(train, partial(linear_order, weights=w)))
        rows.append({"fold": i, "queries": len(test), "weights": best,
                     "train_ndcg": round(mean_ndcg(train, partial(linear_order, weights=best)), 4),
                     "test_ndcg": round(mean_ndcg(test, partial(linear_order, weights=best)), 4),
                     "test_ndcg_rrf": round(mean_ndcg(test, partial(rrf_order, weight=current_weight)), 4),
                     "test_ndcg_searxng": round(mean_ndcg(test, partial(rrf_order, weight=0.0)), 4)})
    overall = max(grid, key=lambda w: mean_ndcg(judged, partial(linear_order, weights=w)))
    held_out = _weighted(rows, "test_ndcg")
    return {"folds": rows, "held_out_ndcg": held_out, "held_out_ndcg_rrf": _weighted(rows, "test_ndcg_rrf"),
            "held_out_ndcg_searxng_order": _weighted(rows, "test_ndcg_searxng"),
            "weights_fitted_on_all": overall,
            "rrf_by_weight": {w: round(mean_ndcg(judged, partial(rrf_order, weight=w)), 4)
                              for w in (0.0, 0.25, 0.5, 0.75, 1.0)}}


def _weighted(rows: list[dict], key: str) -> float:
    total = sum(r["queries"] for r in rows)
    return round(sum(r[key] * r["queries"] for r in rows) / total, 4) if total else 0.0


def _columns(candidates: Sequence[Candidate]) -> dict[str, list[float]]:
    return {name: [c.features[name] for c in candidates] for name in FEATURES}


def _kept(candidates: Sequence[Candidate], order: list[int]) -> list[Candidate]:
    return [candidates[i] for i in order if candidates[i].kept]
