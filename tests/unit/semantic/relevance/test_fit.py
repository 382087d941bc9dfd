"""The fit from raw scores to probabilities: monotone, chosen by held-out Brier score, honest about weak models."""

import itertools

import numpy as np
import pytest

from semantic.relevance.fit import RelevanceMap, fit


def labelled(count: int, separation: float, seed: int = 0) -> tuple[list[float], list[int], list[str]]:
    """Scores whose relevant pairs sit `separation` higher, in groups of 8 pairs (one query each)."""
    rng = np.random.default_rng(seed)
    labels = [int(i % 3 == 0) for i in range(count)]
    scores = [float(rng.normal(separation * label, 1.0)) for label in labels]
    return scores, labels, [f"q{i // 8}" for i in range(count)]


def test_a_discriminating_score_maps_to_rising_probabilities_near_the_labels_rates() -> None:
    scores, labels, groups = labelled(400, 2.5)
    fitted = fit(scores, labels, groups)
    grid = np.linspace(-3, 5, 50).tolist()
    probabilities = fitted.map.probabilities(grid)
    assert all(b >= a for a, b in itertools.pairwise(probabilities))
    assert probabilities[0] < 0.1 and probabilities[-1] > 0.9
    assert fitted.quality.auc > 0.9 and fitted.quality.brier < 0.15 and fitted.quality.ece < 0.1
    assert set(fitted.quality.candidates) == {"platt", "isotonic"}
    assert fitted.quality.brier == min(fitted.quality.candidates.values())
    assert fitted.warning("m") is None


def test_a_score_that_tells_nothing_gets_base_rate_probabilities_and_a_warning() -> None:
    scores, labels, groups = labelled(300, 0.0)
    fitted = fit(scores, labels, groups)
    assert fitted.quality.auc < 0.6
    assert max(fitted.map.probabilities([-2.0, 0.0, 2.0])) < 0.6
    assert "barely tells relevant passages from irrelevant ones" in fitted.warning("the reranker tiny")


@pytest.mark.parametrize(("relevance_map", "expected"), [
    (RelevanceMap("platt", ((2.0, -1.0),)), [0.1192, 0.5, 0.8808]),  # 1 / (1 + e^-(2s - 1))
    (RelevanceMap("isotonic", ((0.0, 0.1), (1.0, 0.9))), [0.1, 0.5, 0.9]),  # between the knots, held flat beyond
])
def test_each_map_reads_its_points(relevance_map: RelevanceMap, expected: list[float]) -> None:
    assert relevance_map.probabilities([-0.5, 0.5, 1.5]) == expected
