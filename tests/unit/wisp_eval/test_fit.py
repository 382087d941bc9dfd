import math

from wisp_eval.fit import Candidate, Judged, cross_validate, folds, linear_order, mean_ndcg, rrf_order


def candidate(rank: int, score: float, title: float, kept: bool = True) -> Candidate:
    return Candidate(f"p{rank}", rank, kept, {"score": score, "prior": -math.log(rank), "title": title,
                                              "pass1": 0.0})


def query(qid: str, relevant_rank: int) -> Judged:
    # the score is noise; the title feature points at the one relevant page, which SearXNG ranks low
    candidates = tuple(candidate(r, score=(r * 7 % 5) / 5, title=3.0 if r == relevant_rank else 0.0)
                       for r in range(1, 11))
    return Judged(qid, candidates, {f"p{relevant_rank}": 3})


JUDGED = [query(f"q{i}", relevant_rank=6 + i % 4) for i in range(20)]


def test_orders_keep_only_what_the_margin_kept() -> None:
    candidates = (candidate(1, 0.9, 0.0), candidate(2, 0.1, 0.0, kept=False), candidate(3, 0.5, 0.0))
    assert [c.page for c in linear_order(candidates, {"score": 1.0})] == ["p1", "p3"]
    assert [c.page for c in rrf_order(candidates, 0.0)] == ["p1", "p3"]


def test_folds_are_stable_and_cover_every_query_once() -> None:
    parts = folds(JUDGED, 5)
    assert [{j.qid for j in p} for p in parts] == [{j.qid for j in p} for p in folds(JUDGED[::-1], 5)]
    assert sorted(j.qid for p in parts for j in p) == sorted(j.qid for j in JUDGED)
    assert all(parts)


def test_cross_validation_finds_a_feature_that_predicts_relevance_on_held_out_queries() -> None:
    result = cross_validate(JUDGED, ["score", "prior", "title"], k=4)
    assert all(row["weights"]["title"] > 0 for row in result["folds"])
    assert result["held_out_ndcg"] == 1.0 > result["held_out_ndcg_rrf"]
    assert mean_ndcg(JUDGED, lambda c: rrf_order(c, 0.0)) < 0.5  # SearXNG's order buries the relevant page
