"""Fit a monotone map from raw scores to a probability of relevance, and say how well it holds.

Two fits are tried, Platt (a logistic curve over the score) and isotonic regression (a step function through the
labels' running means), each scored by the Brier score of its predictions on queries it was not fitted on
(grouped folds); the better one is then fitted on every pair. Isotonic follows any shape but needs data; Platt
assumes a sigmoid and needs little. On the shipped set (293 pairs) MiniLM's cosine chose Platt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

Method = Literal["platt", "isotonic"]
FOLDS = 5
ECE_BINS = 10
# a model whose scores tell relevant from irrelevant no better than this (area under the ROC curve, on held-out
# queries) gets a warning: its probabilities are close to the base rate whatever it reads
WEAK_AUC = 0.6


@dataclass(frozen=True)
class RelevanceMap:
    """score → probability. Platt: `points` is ((a, b),), p = 1 / (1 + exp(−(a·s + b))); isotonic: `points` are
    the (score, probability) knots, interpolated between and held flat beyond."""

    method: Method
    points: tuple[tuple[float, float], ...]

    def probabilities(self, scores: Sequence[float]) -> list[float]:
        values = np.asarray(scores, dtype=float)
        if self.method == "platt":
            (a, b), = self.points
            return (1.0 / (1.0 + np.exp(-(a * values + b)))).round(4).tolist()
        xs, ys = zip(*self.points, strict=True)
        return np.interp(values, xs, ys).round(4).tolist()


@dataclass(frozen=True)
class FitQuality:
    pairs: int
    positives: int
    brier: float  # of held-out predictions (grouped folds): lower is better, the base rate's is p(1−p)
    ece: float  # expected calibration error of held-out predictions, over ECE_BINS equal-width bins
    auc: float  # how well the raw scores order relevant above irrelevant (0.5: not at all)
    candidates: dict[str, float]  # each method's held-out Brier score


@dataclass(frozen=True)
class Fitted:
    map: RelevanceMap
    quality: FitQuality

    def warning(self, model: str) -> str | None:
        if self.quality.auc >= WEAK_AUC:
            return None
        return (f"{model} barely tells relevant passages from irrelevant ones on the calibration set (AUC "
                f"{self.quality.auc:.2f}): its probabilities stay near the base rate, so floors will prune little "
                "or everything")


def fit(scores: Sequence[float], labels: Sequence[int], groups: Sequence[str]) -> Fitted:
    """The better of Platt and isotonic for these labelled scores (`groups`: the query of each pair, kept
    within one fold)."""
    x, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    held_out = {method: _held_out(method, x, y, np.asarray(groups)) for method in FITTERS}
    briers = {method: float(np.mean((p - y) ** 2)) for method, p in held_out.items()}
    best: Method = min(briers, key=briers.__getitem__)  # type: ignore[assignment]
    quality = FitQuality(len(y), int(y.sum()), round(briers[best], 4), round(_ece(held_out[best], y), 4),
                         round(float(roc_auc_score(y, x)), 4), {m: round(b, 4) for m, b in briers.items()})
    return Fitted(FITTERS[best](x, y), quality)


def _platt(x: np.ndarray, y: np.ndarray) -> RelevanceMap:
    model = LogisticRegression(C=1e4).fit(x.reshape(-1, 1), y)  # barely regularized: one slope, one bias
    return RelevanceMap("platt", ((float(model.coef_[0][0]), float(model.intercept_[0])),))


def _isotonic(x: np.ndarray, y: np.ndarray) -> RelevanceMap:
    model = IsotonicRegression(y_min=0.01, y_max=0.99, out_of_bounds="clip").fit(x, y)
    knots = zip(model.X_thresholds_.tolist(), model.y_thresholds_.tolist(), strict=True)
    return RelevanceMap("isotonic", tuple((float(s), float(p)) for s, p in knots))


FITTERS = {"platt": _platt, "isotonic": _isotonic}


def _held_out(method: str, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    predicted = np.zeros(len(y))
    for train, test in GroupKFold(min(FOLDS, len(set(groups)))).split(x, y, groups):
        predicted[test] = FITTERS[method](x[train], y[train]).probabilities(x[test])
    return predicted


def _ece(p: np.ndarray, y: np.ndarray) -> float:
    bins = np.minimum((p * ECE_BINS).astype(int), ECE_BINS - 1)
    return float(sum(abs(p[bins == b].mean() - y[bins == b].mean()) * (bins == b).sum()
                     for b in range(ECE_BINS) if (bins == b).any()) / len(y))
