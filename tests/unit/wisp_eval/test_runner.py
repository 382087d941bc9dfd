import pytest

from agent.ranking.anytime import PARTIAL
from agent.ranking.runner import FIRST_PASS, SEARXNG_ORDER
from wisp_eval.dataset import Query
from wisp_eval.report import markdown, plot, summarize, write_json
from wisp_eval.runner import evaluate
from wisp_eval.targets import Answer

QUERIES = [Query("q1", "c", "first", ("alpha",)), Query("q2", "c", "second", ("beta",)),
           Query("q3", "u", "third", ("ABSTAIN",))]
QRELS = {"q1": {"good.org/1": 3, "ok.org/1": 1}, "q2": {"good.org/2": 2}}


class Scripted:
    """A target answering from a script, recording when it was asked."""

    def __init__(self, name: str, answers: dict[str, Answer], calls: list[str]) -> None:
        self.name, self._answers, self._calls = name, answers, calls

    def ask(self, query: Query) -> Answer:
        self._calls.append(f"{query.qid}:{self.name}")
        return self._answers[query.qid]


@pytest.fixture
def rows():
    calls: list[str] = []
    keyword = Scripted("keyword", {
        "q1": Answer(["ok.org/1", "good.org/1"], "nothing here", latency_ms=100, timings_ms={"searxng": 90}),
        "q2": Answer(["good.org/2"], "beta is here", latency_ms=120, timings_ms={"searxng": 100}),
        "q3": Answer(["x.org"], "something", latency_ms=80, timings_ms={"searxng": 70}),
    }, calls)
    better = Scripted("better", {
        "q1": Answer(["good.org/1"], "ALPHA!", latency_ms=300),
        "q2": Answer(error="HTTP 502: down", latency_ms=5),
        "q3": Answer([], "", abstained=True, latency_ms=200),
    }, calls)
    result = evaluate(QUERIES, QRELS, [keyword, better], k=5)
    return result, calls


def test_targets_take_turns_first(rows) -> None:
    _, calls = rows
    assert calls == ["q1:keyword", "q1:better", "q2:better", "q2:keyword", "q3:keyword", "q3:better"]


def test_rows_score_each_answer(rows) -> None:
    result, _ = rows
    by = {(r.qid, r.mode): r for r in result}
    # grades 3 against the ideal 3, 1: 7 / (7 + 1/log2(3))
    assert by[("q1", "better")].ndcg == pytest.approx(0.9173, abs=1e-4) and by[("q1", "better")].answerable
    assert by[("q1", "keyword")].grades == [1, 3] and not by[("q1", "keyword")].answerable
    failed = by[("q2", "better")]
    assert failed.error == "HTTP 502: down" and failed.ndcg == 0.0 and failed.answerable is False
    assert by[("q3", "keyword")].ndcg is None and by[("q3", "keyword")].answerable is None
    assert by[("q3", "better")].abstained


def test_summary_and_sign_tests(rows) -> None:
    result, _ = rows
    keyword, better = summarize(result, "keyword", 5)
    assert keyword["mode"] == "keyword" and keyword["judged"] == 2
    assert keyword["ndcg@5"] == pytest.approx((ndcg_q1_keyword() + 1.0) / 2, abs=1e-4)
    assert keyword["answerable"] == 0.5 and keyword["abstention_on_unanswerable"] == 0.0
    assert better["abstention_on_unanswerable"] == 1.0 and better["errors"] == 1
    assert better["vs_baseline"]["ndcg@5"] == {"wins": 1, "losses": 1, "ties": 0, "p": 1.0}
    assert better["vs_baseline"]["answerable"] == {"wins": 1, "losses": 1, "ties": 0, "p": 1.0}
    assert keyword["latency_ms"] == {"p50": 100.0, "p95": 118.0}
    assert keyword["stages_ms"]["searxng"]["p50"] == 90.0
    assert better["latency_ms"]["p50"] == 250.0  # the failed request is left out of latency


def ndcg_q1_keyword() -> float:
    import math

    return (1 + 7 / math.log2(3)) / (7 + 1 / math.log2(3))


def test_outputs(rows, tmp_path) -> None:
    result, _ = rows
    summary = summarize(result, "keyword", 5)
    meta = {"queries_file": "q.tsv", "queries": 3, "judged_queries": 2, "unanswerable_queries": 1, "limit": 10}
    table = markdown(meta, summary, result, "keyword", 5)
    # better: nDCG (0.9173 + 0) / 2; success 1 of 2; answer 1 of 2; abstained on q3; latencies 300, 200
    assert "| better | 0.459 | 0.500 | 0.500 | 1.000 | 250 | 295 | 1/1/0 (1.00) | 1/1/0 (1.00) | 1 |" in table
    assert "| q3 | third | answered (should abstain) | abstained |" in table
    write_json(tmp_path / "r.json", meta, summary, result)
    plot(tmp_path / "p.png", summary, 5)
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert '"rows"' in (tmp_path / "r.json").read_text()


def test_ranked_answers_that_fell_back_are_counted() -> None:
    calls: list[str] = []
    hybrid = Scripted("hybrid", {
        "q1": Answer(["good.org/1"], "alpha", warning=f"semantic-svc failed (timeout): {SEARXNG_ORDER}"),
        "q2": Answer(["good.org/2"], "beta", warning=f"{PARTIAL}: ranked with 3 of 20 scored"),
        "q3": Answer(["good.org/3"], "gamma", warning=f"semantic-svc failed (timeout): {FIRST_PASS}"),
    }, calls)
    [summary] = summarize(evaluate(QUERIES, QRELS, [hybrid], k=5), "hybrid", 5)
    assert (summary["searxng_order"], summary["first_pass"], summary["partial_ranking"]) == (1, 1, 1)
