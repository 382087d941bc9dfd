from agent.ranking.prune import within_margin


def test_within_margin_is_relative_to_the_best() -> None:
    assert within_margin([0.9, 0.5, 0.44, 0.2], 0.45) == [True, True, False, False]
    assert within_margin([-3.0, -3.5], 0.1) == [True, False]  # the best survives whatever its value
    assert within_margin([], 0.45) == []
