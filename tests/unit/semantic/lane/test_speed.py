"""The measured speed: calibration seeds it, each model call moves it in proportion to its work."""

import pytest

from semantic.kinds import Speed
from semantic.lane.speed import HALF_LIFE_CHARS, HALF_LIFE_TEXTS, UNMEASURED, SpeedMeter


def test_a_kind_is_unmeasured_until_calibrated_or_called() -> None:
    meter = SpeedMeter()
    assert meter.speeds() == {"rerank": UNMEASURED, "embed": UNMEASURED}
    meter.observe("embed", ms=300, chars=6000, texts=12)
    assert meter.speed("embed") == Speed(50.0, 25.0, 1, "measured")  # the first call is the figure
    assert meter.speed("rerank") == UNMEASURED


def test_calibration_seeds_the_figure_and_calls_move_it_by_their_share_of_the_half_life() -> None:
    meter = SpeedMeter()
    meter.calibrate("rerank", ms=1000, chars=20_000, texts=40)
    assert meter.speed("rerank") == Speed(50.0, 25.0, 0, "calibration")
    # a call of one half-life's characters and texts, twice as slow: halfway there
    meter.observe("rerank", ms=100 * HALF_LIFE_CHARS / 1000, chars=HALF_LIFE_CHARS, texts=HALF_LIFE_TEXTS)
    speed = meter.speed("rerank")
    assert speed.ms_per_kchar == pytest.approx(75.0) and speed.calls == 1 and speed.source == "measured"
    assert speed.ms_per_text == pytest.approx(25 + (100 * HALF_LIFE_CHARS / 1000 / HALF_LIFE_TEXTS - 25) / 2)


def test_a_short_calls_overhead_barely_moves_the_per_character_figure() -> None:
    meter = SpeedMeter()
    meter.calibrate("embed", ms=500, chars=25_000, texts=28)
    meter.observe("embed", ms=10, chars=45, texts=1)  # one query: 222 ms per 1,000 characters
    assert meter.speed("embed").ms_per_kchar == pytest.approx(20, abs=0.2)
