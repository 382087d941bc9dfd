import math

import pytest

from wisp_eval.metrics import contains_answer, dcg, ndcg_at_k, page_key, percentile, sign_test, success_at_k

JUDGED = {"a.org/1": 3, "a.org/2": 2, "a.org/3": 1}


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://127.0.0.1:8123/www.sqlite.org/wal.html#section", "www.sqlite.org/wal.html"),
        ("http://localhost:9/docs.python.org/3/library/os.html", "docs.python.org/3/library/os.html"),
        ("https://www.sqlite.org/wal.html", "www.sqlite.org/wal.html"),
        ("https://WWW.Example.org/a%20b?x=1#f", "www.example.org/a b?x=1"),
        ("http://127.0.0.1:8123/_test/status/500", "127.0.0.1/_test/status/500"),  # not a page of the offline web
    ],
)
def test_page_key(url: str, key: str) -> None:
    assert page_key(url) == key


def test_ndcg_by_hand() -> None:
    # ranking grades 1, 3, 0: DCG = 1/log2(2) + 7/log2(3) = 1 + 4.4165; ideal 3, 2, 1: 7 + 3/log2(3) + 1/2
    expected = (1 + 7 / math.log2(3)) / (7 + 3 / math.log2(3) + 0.5)
    assert ndcg_at_k(["a.org/3", "a.org/1", "x.org"], JUDGED) == pytest.approx(expected)
    assert ndcg_at_k(["a.org/1", "a.org/2", "a.org/3"], JUDGED) == pytest.approx(1.0)
    assert ndcg_at_k(["x.org"], JUDGED) == 0.0


def test_ndcg_cuts_at_k_and_counts_a_page_once() -> None:
    assert ndcg_at_k(["x", "x", "x", "x", "x", "a.org/1"], JUDGED) == 0.0
    repeated = ndcg_at_k(["a.org/1", "a.org/1", "a.org/2"], JUDGED)
    assert repeated == pytest.approx((7 + 3 / 2) / dcg([3, 2, 1]))


def test_no_relevant_judgment_means_no_ndcg() -> None:
    assert ndcg_at_k(["a"], {}) is None and ndcg_at_k(["a"], {"a": 0}) is None


def test_success_needs_grade_two_within_k() -> None:
    assert success_at_k(["x", "a.org/2"], JUDGED)
    assert not success_at_k(["a.org/3"], JUDGED)
    assert not success_at_k(["x1", "x2", "x3", "x4", "x5", "a.org/1"], JUDGED)


def test_answer_keys_ignore_case_and_whitespace() -> None:
    assert contains_answer("Use  git\nREBASE -i to squash", ("rebase --interactive", "git rebase -i"))
    assert not contains_answer("git rebase", ("git rebase -i",))


@pytest.mark.parametrize(
    ("wins", "losses", "p"),
    # the figures seed 001 reports for its own sign tests
    [(9, 2, 0.07), (11, 1, 0.006), (25, 18, 0.36), (17, 14, 0.72), (0, 0, 1.0), (5, 5, 1.0)],
)
def test_sign_test_matches_seed_figures(wins: int, losses: int, p: float) -> None:
    assert sign_test(wins, losses) == pytest.approx(p, abs=0.005)


def test_percentile() -> None:
    assert percentile([], 0.5) is None
    assert percentile([4, 1, 3, 2], 0.5) == 2.5
    assert percentile(list(range(1, 101)), 0.95) == pytest.approx(95.05)
