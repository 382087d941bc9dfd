from datetime import UTC, datetime, timedelta

import pytest

from agent.errors import BadRequest
from agent.retrieval.tbs import covering_range, parse_tbs

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("tbs", "time_range", "span"),
    [
        ("qdr:h", "day", timedelta(hours=1)),
        ("qdr:h6", "day", timedelta(hours=6)),
        ("qdr:h48", "week", timedelta(hours=48)),
        ("qdr:d", "day", timedelta(days=1)),
        ("qdr:d3", "week", timedelta(days=3)),
        ("qdr:w", "week", timedelta(weeks=1)),
        ("qdr:w2", "month", timedelta(weeks=2)),
        ("qdr:m", "month", timedelta(days=31)),
        ("qdr:m6", "year", timedelta(days=186)),
        ("qdr:y", "year", timedelta(days=366)),
        ("qdr:y2", None, timedelta(days=732)),
        ("w", "week", timedelta(weeks=1)),  # upstream accepts a bare unit
        ("QDR:D", "day", timedelta(days=1)),
    ],
)
def test_recent_filters_ask_the_covering_range_and_keep_the_exact_window(tbs, time_range, span) -> None:
    parsed = parse_tbs(tbs, NOW)
    assert parsed.time_range == time_range
    assert parsed.since == NOW - span
    assert parsed.until is None


def test_custom_range_is_filtered_exactly_and_asks_the_smallest_range_reaching_back() -> None:
    parsed = parse_tbs("cdr:1,cd_min:11/20/2026,cd_max:11/25/2026", NOW)
    assert parsed.time_range == "month"
    assert parsed.since == datetime(2026, 11, 20, tzinfo=UTC)
    assert parsed.admits(datetime(2026, 11, 25, 23, 59, tzinfo=UTC))
    assert not parsed.admits(datetime(2026, 11, 26, 0, 1, tzinfo=UTC))
    assert not parsed.admits(datetime(2026, 11, 19, 23, 59, tzinfo=UTC))
    assert parsed.admits(None)  # an undated result cannot be shown to be out of range


def test_custom_range_older_than_a_year_asks_no_range() -> None:
    parsed = parse_tbs("cdr:1,cd_min:2022-01-01,cd_max:2022-12-31", NOW)
    assert parsed.time_range is None and parsed.until.year == 2022


def test_sort_by_date_combines_with_a_recent_filter() -> None:
    parsed = parse_tbs("sbd:1,qdr:w", NOW)
    assert parsed.sort_by_date and parsed.time_range == "week"
    assert parse_tbs("sbd:1", NOW).time_range is None and parse_tbs("sbd:1", NOW).sort_by_date


@pytest.mark.parametrize("tbs", [None, "", "  "])
def test_no_filter(tbs) -> None:
    parsed = parse_tbs(tbs, NOW)
    assert parsed.time_range is None and parsed.since is None and not parsed.sort_by_date


@pytest.mark.parametrize(
    "tbs",
    ["qdr:x", "qdr:d0", "li:1", "qdr:d,qdr:w", "cdr:1,cd_min:31/31/2026", "cdr:1,cd_min:2/1/2026,cd_max:1/1/2026",
     "cdr:1,cd_min:1/1/2026,foo:1"],
)
def test_unsupported_filters_are_refused_not_ignored(tbs) -> None:
    with pytest.raises(BadRequest, match="tbs"):
        parse_tbs(tbs, NOW)


def test_covering_range() -> None:
    assert covering_range(timedelta(hours=2)) == "day"
    assert covering_range(timedelta(days=7)) == "week"
    assert covering_range(timedelta(days=8)) == "month"
    assert covering_range(timedelta(days=400)) is None
