from pathlib import Path

import pytest

from wisp_eval.dataset import DatasetError, check_consistency, load_qrels, load_queries


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_queries_with_alternative_answer_keys_and_abstention(tmp_path: Path) -> None:
    queries = load_queries(write(tmp_path, "q.tsv", "# qid\tcategory\tquery\tanswer_key\n"
                                 "q1\tcode\tpython gather\treturn_exceptions || asyncio.TaskGroup\n"
                                 "q2\tunanswerable\tk8s hpa\tABSTAIN\n\nq3\tmisc\tno key\n"))
    assert [q.qid for q in queries] == ["q1", "q2", "q3"]
    assert queries[0].answer_keys == ("return_exceptions", "asyncio.TaskGroup") and not queries[0].unanswerable
    assert queries[1].unanswerable and queries[2].answer_keys == ()


def test_duplicate_query_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"q.tsv:3: duplicate query id 'q1' \(first on line 1\)"):
        load_queries(write(tmp_path, "q.tsv", "q1\tc\tfirst\tk\nq2\tc\tsecond\tk\nq1\tc\tthird\tk\n"))


@pytest.mark.parametrize("text", ["q1\tonly two\n", "\tc\tquery\n", "", "# only a comment\n"])
def test_malformed_query_files(tmp_path: Path, text: str) -> None:
    with pytest.raises(DatasetError):
        load_queries(write(tmp_path, "q.tsv", text))


def test_qrels_strip_fragments_keeping_the_best_grade(tmp_path: Path) -> None:
    qrels = load_qrels(write(tmp_path, "r.tsv", "# header\nq1\ta.org/p.html#one\t1\nq1\ta.org/p.html#two\t3\n"
                             "q1\ta.org/q.html\t2\nq2\tb.org/x\t0\n"))
    assert qrels == {"q1": {"a.org/p.html": 3, "a.org/q.html": 2}, "q2": {"b.org/x": 0}}


def test_bad_grades_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="grade 'high'"):
        load_qrels(write(tmp_path, "r.tsv", "q1\ta.org\thigh\n"))
    with pytest.raises(DatasetError, match="cannot read"):
        load_queries(tmp_path / "missing.tsv")


def test_consistency(tmp_path: Path) -> None:
    queries = load_queries(write(tmp_path, "q.tsv", "q1\tc\tq\tk\nq2\tu\tq\tABSTAIN\n"))
    problems = check_consistency(queries, {"q1": {"a": 1}, "q2": {"b": 2}, "q9": {"c": 1}})
    assert problems == ["qrels judge unknown query 'q9'", "q2 is marked ABSTAIN but has judgments"]


def test_every_third_query_of_the_file_is_held_out_for_validation() -> None:
    from wisp_eval.dataset import load_queries, splits

    queries = load_queries(Path(__file__).parents[3] / "eval" / "data" / "dev" / "queries.tsv")
    split = splits(queries)
    assert [split[q.qid] for q in queries[:6]] == ["dev", "dev", "validation"] * 2
    held_out = [q for q in queries if split[q.qid] == "validation"]
    assert len(held_out) == 21 and sum(q.unanswerable for q in held_out) == 2
