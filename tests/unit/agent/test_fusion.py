import pytest

from agent.fusion import FUSIONS, blend, rrf


def test_rrf_blends_searxng_rank_with_the_score() -> None:
    # SearXNG order a, b, c, d; scores put d first: d rises, a (first for SearXNG) stays ahead of b and c
    assert rrf([0.5, 0.3, 0.2, 0.9], 0.5) == [0, 3, 1, 2]
    assert rrf([], 0.5) == []


def test_the_weight_moves_between_searxng_order_and_the_score() -> None:
    scores = [0.1, 0.2, 0.3, 0.4]
    assert rrf(scores, 1.0) == [3, 2, 1, 0]
    assert rrf(scores, 0.0) == [0, 1, 2, 3]
    assert blend(scores, 1.0) == [3, 2, 1, 0]
    assert blend(scores, 0.0) == [0, 1, 2, 3]


def test_blend_lets_a_clear_gap_overturn_searxng_order_where_rrf_does_not() -> None:
    scores = [0.30, 0.31, 0.29, 0.28, 0.95]  # the last candidate is far better than the rest
    assert blend(scores, 0.6)[0] == 4
    assert rrf(scores, 0.6).index(4) == 2  # rank fusion sees only that it beats the others


@pytest.mark.parametrize("name", sorted(FUSIONS))
def test_every_fusion_keeps_every_candidate_once(name: str) -> None:
    assert sorted(FUSIONS[name]([0.3, 0.1, 0.2], 0.5)) == [0, 1, 2]
    assert FUSIONS[name]([0.7], 0.5) == [0]
