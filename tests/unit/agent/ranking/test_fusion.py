import math

import pytest

from agent.ranking.fusion import FUSIONS, RRF_K, descending, linear, merged_lists, rrf, z_scores


def columns(scores: list[float], **more: list[float]) -> dict[str, list[float]]:
    return {"score": scores, "prior": [-math.log(r) for r in range(1, len(scores) + 1)], **more}


def test_rrf_blends_searxng_rank_with_the_score() -> None:
    # SearXNG order a, b, c, d; scores put d first: d rises, a (first for SearXNG) stays ahead of b and c
    assert rrf(columns([0.5, 0.3, 0.2, 0.9]), {"score": 0.5}) == [0, 3, 1, 2]
    assert rrf(columns([]), {"score": 0.5}) == []


def test_the_weights_move_between_searxng_order_and_the_score() -> None:
    scores = columns([0.1, 0.2, 0.3, 0.4])
    assert rrf(scores, {"score": 1.0}) == [3, 2, 1, 0]
    assert rrf(scores, {"score": 0.0}) == [0, 1, 2, 3]
    assert rrf(scores, {"score": 1.0, "prior": 0.0}) == [3, 2, 1, 0]
    assert rrf(scores, {"score": 1.0, "prior": 1.0}) == rrf(scores, {"score": 0.5})  # only the ratio counts
    assert linear(scores, {"score": 1.0}) == [3, 2, 1, 0]
    assert linear(scores, {"prior": 1.0}) == [0, 1, 2, 3]


def test_linear_lets_a_clear_gap_overturn_searxng_order_where_rrf_does_not() -> None:
    scores = columns([0.30, 0.31, 0.29, 0.28, 0.95])  # the last candidate is far better than the rest
    assert linear(scores, {"score": 0.6, "prior": 0.4})[0] == 4
    assert rrf(scores, {"score": 0.6}).index(4) == 2  # rank fusion sees only that it beats the others


def test_linear_combines_any_feature() -> None:
    both = columns([0.5, 0.5, 0.5], title=[0.0, 0.0, 3.0])
    assert linear(both, {"score": 1.0, "title": 0.5})[0] == 2


def test_z_scores_of_equal_values_are_zero() -> None:
    assert z_scores([2.0, 2.0]) == [0.0, 0.0] and z_scores([]) == []


@pytest.mark.parametrize("name", sorted(FUSIONS))
def test_every_fusion_gives_every_candidate_one_value_that_orders_it(name: str) -> None:
    values = FUSIONS[name](columns([0.3, 0.1, 0.2]), {"score": 1.0})
    assert len(values) == 3 and descending(values) == [0, 2, 1]
    assert len(FUSIONS[name](columns([0.7]), {"score": 0.5})) == 1


def test_merged_lists_lift_a_key_found_in_several_lists() -> None:
    assert merged_lists([["a", "b", "c"], ["c"]], [1.0, 1.0]) == ["c", "a", "b"]
    assert merged_lists([["a", "b"], ["x", "b"]], [1.0, 1.0]) == ["b", "a", "x"]


def test_merged_lists_ties_keep_the_first_lists_order() -> None:
    assert merged_lists([["a"], ["b"]], [1.0, 1.0]) == ["a", "b"]
    assert merged_lists([["b"], ["a"]], [1.0, 1.0]) == ["b", "a"]
    assert merged_lists([["a", "b"], ["c", "d"]], [1.0, 1.0]) == ["a", "c", "b", "d"]


def test_merged_lists_weigh_each_list() -> None:
    assert merged_lists([["a"], ["b"]], [1.0, 2.0]) == ["b", "a"]
    assert merged_lists([["a", "b"], ["c"]], [1.0, 0.0]) == ["a", "b", "c"]  # a weightless list's keys come last


def test_merged_lists_k_sets_how_decisive_the_top_ranks_are() -> None:
    lists, weights = [["a", "x", "b"], ["b"]], [1.0, 0.5]
    assert merged_lists(lists, weights) == merged_lists(lists, weights, k=RRF_K) == ["b", "a", "x"]
    assert merged_lists(lists, weights, k=0) == ["a", "b", "x"]  # b's two middling ranks no longer beat a's first


def test_merged_lists_keep_every_key_once_and_need_one_weight_per_list() -> None:
    assert merged_lists([], []) == [] and merged_lists([[], ["a"]], [1.0, 1.0]) == ["a"]
    assert sorted(merged_lists([["a", "b"], ["b", "c"], ["c", "a"]], [1.0, 1.0, 1.0])) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        merged_lists([["a"], ["b"]], [1.0])
