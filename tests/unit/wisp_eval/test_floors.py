"""Choosing the floor and margin from what a mode said: the tables `wisp_eval floors` prints."""

from wisp_eval.floors import Seen, floor_table, margin_table

SEEN = [
    Seen("a1", False, ("wal_checkpoint",), ((0.7, "PRAGMA wal_checkpoint runs one"), (0.2, "cats"))),
    Seen("a2", False, ("git rebase",), ((0.45, "use git rebase -i"), (0.4, "squash"))),
    Seen("a3", False, ("--fixup",), ((0.38, "unrelated"), (0.1, "git commit --fixup"))),
    Seen("u1", True, ("ABSTAIN",), ((0.3, "terraform? no"),)),
    Seen("u2", True, ("ABSTAIN",), ((0.42, "close but no"),)),
]


def test_each_floor_counts_the_abstentions_it_would_cause_and_the_answers_they_lose() -> None:
    rows = {row["floor"]: row for row in floor_table(SEEN)}
    assert rows[0.35] == {"floor": 0.35, "unanswerable_abstained": 1, "unanswerable": 2, "answerable_abstained": 0,
                          "answers_lost": 0, "answerable": 3}
    assert (rows[0.4]["answerable_abstained"], rows[0.4]["answers_lost"]) == (1, 1)  # a3's answer was there
    assert rows[0.5]["unanswerable_abstained"] == 2 and rows[0.5]["answers_lost"] == 2


def test_each_margin_counts_the_answers_still_in_a_kept_passage() -> None:
    rows = {row["margin"]: row for row in margin_table(SEEN)}
    assert rows[0.1]["answer_in_kept_passage"] == 2 and rows[0.3]["answer_in_kept_passage"] == 3
    assert rows[0.1]["kept_passages"] == 4 and rows[1.0]["kept_passages"] == 6
