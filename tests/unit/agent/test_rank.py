from datetime import UTC, datetime, timedelta

import pytest

from agent.rank import freshness, fused_order, is_time_sensitive, within_margin


def test_within_margin_is_relative_to_the_best() -> None:
    assert within_margin([0.9, 0.5, 0.44, 0.2], 0.45) == [True, True, False, False]
    assert within_margin([-3.0, -3.5], 0.1) == [True, False]  # the best survives whatever its value
    assert within_margin([], 0.45) == []


def test_fused_order_blends_searxng_rank_with_the_score() -> None:
    # SearXNG order a, b, c, d; scores put d first: d rises, a (first for SearXNG) stays ahead of b and c
    scores = {"a": 0.5, "b": 0.3, "c": 0.2, "d": 0.9}
    assert fused_order(list("abcd"), scores.get) == ["a", "d", "b", "c"]
    assert fused_order(list("abcd"), {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}.get)[0] in ("a", "d")
    assert fused_order([], lambda c: 0.0) == []


@pytest.mark.parametrize(
    ("query", "tbs", "expected"),
    [("latest sqlite release", None, True), ("python 3.12 changes in 2024", None, True),
     ("git rebase", "qdr:w", True), ("git rebase", None, False), ("sqlite 3.40.0 release", None, False)],
)
def test_time_sensitive_queries(query: str, tbs: str | None, expected: bool) -> None:
    assert is_time_sensitive(query, tbs) is expected


def test_freshness_halves_every_year_and_ignores_undated_pages() -> None:
    now = datetime(2026, 12, 2, tzinfo=UTC)
    assert freshness(now, now) == 1.0
    assert freshness(now - timedelta(days=365), now) == pytest.approx(0.5)
    assert freshness(None, now) == 0.0
    assert freshness(datetime(2027, 1, 1), now) == 1.0  # a naive or future date counts as new
