import pytest

from agent.ranking.admission import LaneFull, admit

# a first batch of 8 texts of 1,250 characters at 50 ms per 1,000: 0.5 s of model time


def test_a_search_goes_to_the_lane_when_its_first_texts_can_be_scored_before_its_deadline() -> None:
    admit(wait_s=3.0, ms_per_kchar=50.0, text_chars=1250, left_s=3.6)


def test_a_search_is_turned_away_when_the_queued_work_and_its_first_texts_outlast_its_deadline() -> None:
    with pytest.raises(LaneFull, match=r"would not reach this search's texts in time \(3.0 s of work queued, 3.4 s"):
        admit(wait_s=3.0, ms_per_kchar=50.0, text_chars=1250, left_s=3.4)


def test_before_the_model_is_measured_only_the_queued_work_counts() -> None:
    admit(wait_s=3.0, ms_per_kchar=None, text_chars=1250, left_s=3.1)
    with pytest.raises(LaneFull):
        admit(wait_s=3.0, ms_per_kchar=None, text_chars=1250, left_s=2.9)


def test_a_search_that_waits_once_a_pass_meets_the_queue_at_each() -> None:
    admit(wait_s=3.0, ms_per_kchar=None, text_chars=1250, left_s=6.1, waits=2)
    with pytest.raises(LaneFull, match=r"\(3.0 s of work queued before each of its 2 passes, 5.9 s left to score\)"):
        admit(wait_s=3.0, ms_per_kchar=None, text_chars=1250, left_s=5.9, waits=2)
