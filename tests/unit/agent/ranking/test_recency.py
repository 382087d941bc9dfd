from datetime import UTC, datetime, timedelta

import pytest

from agent.ranking.recency import freshness, is_time_sensitive, recency_bonus


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


def test_the_bonus_is_at_most_its_scale() -> None:
    assert recency_bonus(datetime.now(UTC), 0.2) == pytest.approx(0.2, abs=1e-6)
    assert recency_bonus(None, 0.2) == 0.0
