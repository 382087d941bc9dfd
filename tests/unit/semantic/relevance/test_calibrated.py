"""A model's calibration on a pair set: fitted once, cached by model, role and set, read back the same."""

from pathlib import Path

import pytest

from semantic.relevance.calibrated import SHIPPED_PAIRS, Pairs, calibrated, grouped_pairs

ROWS = [("q1", 1, "when does sqlite checkpoint", "sqlite checkpoints the wal\\nat 1000 pages"),
        ("q1", 0, "when does sqlite checkpoint", "cats sleep all day"),
        ("q2", 1, "squash commits in git", "git rebase -i squashes commits; a back\\\\slash"),
        ("q2", 0, "squash commits in git", "the moon is not made of cheese")] * 6


def pair_file(path: Path, rows=ROWS) -> Path:
    lines = ["# qid\tlabel\tkind\turl\tquery\tpassage"]
    lines += [f"{qid}{i // 4}\t{label}\trelevant\thttps://x.test/\t{query}\t{passage}"
              for i, (qid, label, query, passage) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def overlap(query: str, passages: list[str]) -> list[float]:
    return [float(len(set(query.split()) & set(p.split()))) for p in passages]


def test_the_shipped_set_has_hundreds_of_labelled_pairs_with_hard_negatives() -> None:
    pairs = Pairs.load(SHIPPED_PAIRS)
    assert len(pairs.labels) >= 250 and 0.2 < sum(pairs.labels) / len(pairs.labels) < 0.5
    kinds = {line.split("\t")[2] for line in SHIPPED_PAIRS.read_text().splitlines() if not line.startswith("#")}
    assert kinds == {"relevant", "same_page", "same_site", "unanswerable"}
    assert len(set(pairs.groups)) >= 30 and any("\n" in p for p in pairs.passages)  # newlines restored


def test_escapes_come_back_as_written(tmp_path: Path) -> None:
    pairs = Pairs.load(pair_file(tmp_path / "pairs.tsv"))
    assert pairs.passages[0] == "sqlite checkpoints the wal\nat 1000 pages"
    assert pairs.passages[2].endswith("a back\\slash")


def test_a_calibration_is_fitted_once_then_read_from_the_cache(tmp_path: Path) -> None:
    pairs = Pairs.load(pair_file(tmp_path / "pairs.tsv"))
    asked: list[str] = []

    def counted(query: str, passages: list[str]) -> list[float]:
        asked.append(query)
        return overlap(query, passages)

    first = calibrated("reranker", "fake|overlap", "overlap", grouped_pairs(counted), pairs, tmp_path / "cache")
    again = calibrated("reranker", "fake|overlap", "overlap", grouped_pairs(counted), pairs, tmp_path / "cache")
    assert not first.cached and again.cached and sorted(asked) == sorted(set(pairs.queries))  # a call a query
    assert again.map == first.map and again.quality == first.quality
    assert again.probabilities([0.0, 3.0]) == first.probabilities([0.0, 3.0])
    assert first.probabilities([3.0])[0] > first.probabilities([0.0])[0]
    described = again.describe()
    assert described["pairs"] == 24 and described["set_version"] == pairs.version and described["cached"] is True


@pytest.mark.parametrize("changed", ["model", "set"])
def test_another_model_or_set_is_fitted_anew(tmp_path: Path, changed: str) -> None:
    pairs = Pairs.load(pair_file(tmp_path / "pairs.tsv"))
    calibrated("reranker", "fake|overlap", "overlap", grouped_pairs(overlap), pairs, tmp_path / "cache")
    if changed == "set":
        pairs = Pairs.load(pair_file(tmp_path / "other.tsv", ROWS[:16]))
    key = "fake|other" if changed == "model" else "fake|overlap"
    assert not calibrated("reranker", key, "overlap", grouped_pairs(overlap), pairs, tmp_path / "cache").cached


def test_an_unreadable_cache_is_fitted_again(tmp_path: Path) -> None:
    pairs = Pairs.load(pair_file(tmp_path / "pairs.tsv"))
    calibrated("reranker", "k", "overlap", grouped_pairs(overlap), pairs, tmp_path / "cache")
    for cached in (tmp_path / "cache").iterdir():
        cached.write_text("{not json")
    assert not calibrated("reranker", "k", "overlap", grouped_pairs(overlap), pairs, tmp_path / "cache").cached
