"""How a ranked mode's candidates are ordered at the end: its scores combined with SearXNG's order (and, for
`linear`, other cheap page features), one function per strategy behind one signature.

On the first dev set, cosine alone left pages SearXNG had right behind pages with better snippets, and fusing
with SearXNG's rank rescued it; rank fusion also caps how far a page SearXNG ranked low can rise, which is what
`linear` (calibrated blending of z-scored features) does not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from statistics import fmean, pstdev
from typing import Annotated

from pydantic import AfterValidator

from agent.ranking.features import FEATURES, Columns

RRF_K = 10  # the default of RRF_K (RankingSettings.rrf_k): small pools want a smaller k than the usual 60

# the fused value of each candidate, from its feature columns, the weights and rank fusion's k: the results go in
# its descending order
Fusion = Callable[[Columns, Mapping[str, float], int], list[float]]


def rrf(columns: Columns, weights: Mapping[str, float], k: int = RRF_K) -> list[int]:
    """The candidates' indices in rrf_values' descending order."""
    return descending(rrf_values(columns, weights, k))


def linear(columns: Columns, weights: Mapping[str, float]) -> list[int]:
    """The candidates' indices in linear_values' descending order."""
    return descending(linear_values(columns, weights))


def rrf_values(columns: Columns, weights: Mapping[str, float], k: int = RRF_K) -> list[float]:
    """Weighted reciprocal rank fusion of SearXNG's order and the score's order. `weights["score"]` and
    `weights["prior"]` weigh them (only their ratio counts); without `prior`, the score's weight is its share
    (1: the score alone, 0: SearXNG's order). Other features have no rank to fuse."""
    weight = weights.get("score", 0.5)
    scores, prior = columns["score"], columns["prior"]
    fused = [0.0] * len(scores)
    for column, share in ((prior, weights.get("prior", 1 - weight)), (scores, weight)):
        for rank, i in enumerate(descending(column), 1):
            fused[i] += share / (k + rank)
    return fused


def linear_values(columns: Columns, weights: Mapping[str, float], k: int = RRF_K) -> list[float]:
    """The weighted sum of the z-scored features named in `weights`, so a clear gap in one can overturn
    SearXNG's order, where rank fusion only sees that one page beats another (`k` has no part in it)."""
    size = len(columns["score"])
    fused = [0.0] * size
    for name, weight in weights.items():
        for i, value in enumerate(z_scores(columns[name])):
            fused[i] += weight * value
    return fused


def z_scores(values: list[float]) -> list[float]:
    spread = pstdev(values) if len(values) > 1 else 0.0
    mean = fmean(values) if values else 0.0
    return [(v - mean) / spread if spread > 0 else 0.0 for v in values]


def merged_lists(lists: list[list[str]], weights: list[float], k: int = RRF_K) -> list[str]:
    """Weighted reciprocal rank fusion of ranked lists of keys (each key once per list): a key in several
    lists gains from each; ties keep the first list's order."""
    return [key for key, _ in merged_scores(lists, weights, k)]


def merged_scores(lists: list[list[str]], weights: list[float], k: int = RRF_K) -> list[tuple[str, float]]:
    """merged_lists' keys, best first, each with its fused score."""
    fused: dict[str, float] = {}
    for keys, weight in zip(lists, weights, strict=True):
        for rank, key in enumerate(keys, 1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda item: item[1], reverse=True)


def descending(values: list[float]) -> list[int]:
    return sorted(range(len(values)), key=lambda i: values[i], reverse=True)  # stable: ties keep SearXNG's order


FUSIONS: dict[str, Fusion] = {"rrf": rrf_values, "linear": linear_values}


# `wisp_eval fit` on the 56 answerable dev queries (offline reranker): every fold chose these for hybrid mode,
# held-out nDCG@5 0.658 against rrf's 0.637; semantic mode's folds disagreed, and these hold for it too
FITTED_WEIGHTS = {"score": 1.0, "prior": 0.5}


def _registered_fusion(name: str) -> str:
    if name not in FUSIONS:
        raise ValueError(f"{name!r} is not a registered fusion; available: {', '.join(FUSIONS)}")
    return name


def _registered_features(weights: dict[str, float]) -> dict[str, float]:
    if unknown := [name for name in weights if name not in FEATURES]:
        raise ValueError(f"{', '.join(map(repr, unknown))} not a page feature; available: {', '.join(FEATURES)}")
    return weights


# a mode's settings name their fusion and its weights with these, so that a typo fails the start (pydantic names
# the variable), not the first request
FusionName = Annotated[str, AfterValidator(_registered_fusion)]
FusionWeights = Annotated[dict[str, float], AfterValidator(_registered_features)]
