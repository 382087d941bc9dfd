"""Anytime scoring against a model that is deliberately slow: one text at a time on a fake clock, no sleeps."""

import asyncio

import pytest

from agent.core.ratings import Ratings
from agent.errors import Degraded
from agent.ranking.anytime import MIN_BATCH, score_in_time


class SlowModel:
    """semantic-svc with one model lane: batches run one after another, each costing `ms_per_kchar` per 1,000
    characters on a fake clock; a batch that would end past its caller's timeout fails as the HTTP call would."""

    def __init__(self, ms_per_kchar: float, known: bool = True, others_s: float = 0.0) -> None:
        self.ms_per_kchar = ms_per_kchar
        self.known = known  # whether semantic-svc has reported its speed yet
        self.others_s = others_s  # other searches' work queued ahead of the first batch
        self.now = 0.0
        self.batches: list[list[str]] = []
        self._lane = asyncio.Lock()

    def clock(self) -> float:
        return self.now

    def pace(self) -> float | None:
        return self.ms_per_kchar if self.known else None

    async def score(self, texts: list[str], budget_s: float) -> Ratings:
        asked_at = self.now
        async with self._lane:
            self.now += 0.0 if self.batches else self.others_s
            self.batches.append(texts)
            self.now += sum(map(len, texts)) * self.ms_per_kchar / 1e6
            self.known = True
        if self.now > asked_at + budget_s:
            raise Degraded(f"semantic-svc did not answer within {budget_s:.1f} s")
        return Ratings(tuple(float(text.count("x")) for text in texts), tuple(text.count("x") / 20 for text in texts))


TEXTS = ["x" * k + "." * (1000 - k) for k in range(20, 0, -1)]  # 1,000 characters each, best first


def scored(model: SlowModel, until: float, texts: list[str] = TEXTS, ahead_s: float = 0.0):
    return asyncio.run(score_in_time(texts, model.score, until, model.pace, ahead_s=ahead_s, clock=model.clock))


def test_a_model_fast_enough_scores_everything_in_one_call() -> None:
    model = SlowModel(ms_per_kchar=10)  # 200 ms for all twenty: the set goes as one call, as it would unhurried
    partial = scored(model, until=8.0)
    assert partial.complete and partial.note() is None
    assert list(partial.scores) == [float(k) for k in range(20, 0, -1)]
    assert model.batches == [TEXTS]


def test_work_queued_ahead_leaves_less_time_and_the_texts_go_in_batches_that_come_back() -> None:
    # 4 s for all twenty would fit the 8 s in one call, but 5 s of other searches' work comes first
    with pytest.raises(Degraded, match=r"did not answer within 8\.0 s"):  # planned as if the lane were free
        scored(SlowModel(ms_per_kchar=200, others_s=5), until=8.0)
    model = SlowModel(ms_per_kchar=200, others_s=5)
    partial = scored(model, until=8.0, ahead_s=5)
    assert len(model.batches) > 1 and partial.scored >= MIN_BATCH


def test_a_model_that_needs_more_than_three_quarters_of_the_time_left_gets_batches() -> None:
    model = SlowModel(ms_per_kchar=350)  # 7 s for all twenty, against 8 s
    partial = scored(model, until=8.0)
    assert partial.complete and len(model.batches) > 1


def test_a_slow_model_gives_the_best_texts_scored_by_the_deadline_and_says_how_many() -> None:
    model = SlowModel(ms_per_kchar=500)  # 0.5 s a text: 10 s for all twenty, against 4 s
    partial = scored(model, until=4.0)
    assert 0 < partial.scored < len(TEXTS) and model.now <= 4.0
    # what was scored is the head of the priority order, never a later text before an earlier one
    assert all(s is not None for s in partial.scores[: partial.scored])
    assert all(s is None for s in partial.scores[partial.scored:])
    assert partial.scored >= 6  # batches planned to fit: at most one batch's work is lost to the deadline
    assert f"ranked with {partial.scored} of 20 texts scored" in partial.note()


def test_no_batch_is_sent_that_could_not_come_back_in_time() -> None:
    model = SlowModel(ms_per_kchar=500)
    partial = scored(model, until=4.0)
    assert sum(map(len, model.batches)) == partial.scored  # the model never worked on a text it could not return


def test_before_the_speed_is_known_the_first_batch_is_the_least_worth_a_call() -> None:
    model = SlowModel(ms_per_kchar=10, known=False)
    partial = scored(model, until=8.0)
    assert partial.complete and len(model.batches[0]) == MIN_BATCH


def test_no_batch_is_smaller_than_worth_a_call_while_texts_remain() -> None:
    model = SlowModel(ms_per_kchar=380)  # 7.6 s for all twenty, against 8 s: batches of what fits half the room
    scored(model, until=8.0)
    assert all(len(batch) >= MIN_BATCH for batch in model.batches[:-1])


def test_nothing_scored_is_a_degradation_not_a_partial_ranking() -> None:
    model = SlowModel(ms_per_kchar=5000)  # 5 s for the first text, against 1 s
    with pytest.raises(Degraded, match="did not answer"):
        scored(model, until=1.0)


def test_a_deadline_already_past_asks_nothing() -> None:
    model = SlowModel(ms_per_kchar=10)
    model.now = 9.0
    with pytest.raises(Degraded, match="before semantic-svc could score a text"):
        scored(model, until=8.0)
    assert model.batches == []
