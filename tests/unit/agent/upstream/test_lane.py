"""The wait in semantic-svc's model lane as one process sees it: the last report, drained, and its calls since."""

import pytest

from agent.upstream.lane import LaneWait

from .test_engine_health import Clock


def test_before_any_report_every_call_out_counts() -> None:
    clock = Clock()
    lane = LaneWait(clock)
    with lane.sending(300), lane.sending(200):
        assert lane.wait_s() == 0.5
    assert lane.wait_s() == 0


def test_a_report_drains_as_the_clock_runs_and_never_below_nothing() -> None:
    clock = Clock()
    lane = LaneWait(clock)
    lane.reported(4000)
    clock.now += 1.5
    assert lane.wait_s() == pytest.approx(2.5)
    clock.now += 10
    assert lane.wait_s() == 0


def test_calls_sent_before_the_report_are_in_it_and_those_sent_after_come_on_top() -> None:
    clock = Clock()
    lane = LaneWait(clock)
    with lane.sending(900):  # queued when semantic-svc answered another call: its report counts it
        clock.now += 0.1
        lane.reported(2000)
        clock.now += 0.1
        with lane.sending(500):
            assert lane.wait_s() == pytest.approx(1.9 + 0.5)
        assert lane.wait_s() == pytest.approx(1.9)
