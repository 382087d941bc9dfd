import pytest
from wisp_text.bm25 import bm25_scores, tokenize


def test_tokenize() -> None:
    assert tokenize("PRAGMA wal_checkpoint(TRUNCATE); git-rebase __init__") == [
        "pragma", "wal_checkpoint", "wal", "checkpoint", "truncate", "git", "rebase", "__init__", "init"]


def test_an_identifier_matches_the_words_it_is_made_of_and_itself_best() -> None:
    scores = bm25_scores("foreign key", ["PRAGMA foreign_keys = ON", "nothing relevant here"])
    assert scores[0] > 0 == scores[1]
    exact, words = bm25_scores("select_related", ["use select_related here", "select the related rows"])
    assert exact > words > 0


def test_matching_terms_rank_first_and_rare_terms_weigh_more() -> None:
    passages = ["sqlite checkpoint of the wal", "the cat sat", "sqlite is a database", "sqlite sqlite sqlite"]
    scores = bm25_scores("sqlite checkpoint", passages)
    assert scores.index(max(scores)) == 0 and scores[1] == 0.0
    assert scores[0] > scores[3] > scores[2]  # checkpoint is rare; repeating sqlite saturates


def test_longer_passages_are_normalized() -> None:
    short, long = bm25_scores("wal", ["wal mode", "wal mode " + "padding words " * 30])
    assert short > long > 0


def test_empty() -> None:
    assert bm25_scores("q", []) == []
    assert bm25_scores("", ["text"]) == [pytest.approx(0.0)]


def test_a_repeated_part_counts_once() -> None:
    assert tokenize("a_a") == ["a_a", "a"]
