from pathlib import Path

import pytest

from wisp_eval.claimcheck import cross_validate, folds, quality, report, score, table
from wisp_eval.claimset import load
from wisp_eval.dataset import DatasetError

DATA = Path(__file__).parents[3] / "eval" / "data" / "claims"


def write(tmp_path: Path, claims: str) -> tuple[Path, Path]:
    passages = tmp_path / "passages.tsv"
    passages.write_text("# pid\turl\tsentence\tpassage\n"
                        "p1\thttps://a.test/1\tPython 3.11 adds tomllib.\tIt is new. Python 3.11 adds tomllib.\n"
                        "p2\thttps://a.test/2\tRun git --amend.\tRun git --amend. It edits a commit.\n")
    path = tmp_path / "claims.tsv"
    path.write_text(claims)
    return passages, path


def similar(text: str, windows: list[str]) -> list[float]:
    """A stand-in for semantic-svc: the share of the claim's words in each window."""
    words = set(text.lower().split())
    return [len(words & set(w.lower().split())) / len(words) for w in windows]


def test_the_judged_set_has_a_third_of_each_kind_and_each_claim_names_a_passage() -> None:
    claims = load(DATA / "passages.tsv", DATA / "claims.tsv")
    kinds = [c.kind for c in claims]
    assert len(claims) >= 150 and kinds.count("copied") == kinds.count("paraphrased") == kinds.count("wrong")
    assert all(c.supported == (c.kind != "wrong") for c in claims)
    assert all(c.text == c.passage.sentence for c in claims if c.kind == "copied")


def test_a_claim_naming_an_unknown_passage_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="p9"):
        load(*write(tmp_path, "c1\tp9\tcopied\tPython 3.11 adds tomllib.\n"))


def test_the_lexical_check_catches_the_changed_number_similarity_lets_through(tmp_path: Path) -> None:
    scored = score(load(*write(tmp_path, "c1\tp1\tcopied\tPython 3.11 adds tomllib.\n"
                                         "c2\tp1\twrong\tPython 3.12 adds tomllib.\n"
                                         "c3\tp2\tparaphrased\tgit --amend edits a commit.\n"
                                         "c4\tp2\twrong\tRun git --fixup.\n")), similar)
    assert [s.missing for s in scored] == [(), ("3.12",), (), ("--fixup",)]
    assert quality(scored, "before", 0.5) == {"claims": 4, "precision": 0.5, "recall": 1.0, "f1": 0.6667}
    assert quality(scored, "after", 0.5) == {"claims": 4, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    result = report(scored, 0.55, k=2)
    assert result["after"]["cross_validated"]["supported_by_kind"]["wrong"] == 0.0
    assert "| after (cross-validated) |" in table(result)


def test_folds_keep_a_passages_claims_together_and_the_floor_is_chosen_without_the_fold(tmp_path: Path) -> None:
    scored = score(load(*write(tmp_path, "c1\tp1\tcopied\tPython 3.11 adds tomllib.\n"
                                         "c2\tp1\twrong\tPython 3.12 adds tomllib.\n"
                                         "c3\tp2\tcopied\tRun git --amend.\n")), similar)
    parts = folds(scored, 2)
    assert sorted(len(p) for p in parts) == [1, 2]
    assert all(len({s.claim.passage.pid for s in p}) == 1 for p in parts)
    assert len(cross_validate(scored, "after", k=2)["floors"]) == 2
