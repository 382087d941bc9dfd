"""What a model says of some texts: a raw score each, for ordering, and each one's probability of relevance,
for floors that mean the same whichever model runs (semantic-svc's relevance calibration)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ratings:
    scores: tuple[float, ...]
    probabilities: tuple[float, ...] | None = None  # None: the model has no calibration

    def __len__(self) -> int:
        return len(self.scores)

    def best_probability(self) -> float | None:
        return max(self.probabilities, default=None) if self.probabilities is not None else None
