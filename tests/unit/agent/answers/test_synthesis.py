import pytest

from agent.answers.synthesis import Claim, Source, cited_numbers, draft

SOURCES = tuple(Source(n, f"https://example.test/{n}", f"page {n}", ("text",)) for n in (1, 2, 3))


@pytest.mark.parametrize(("marker", "numbers"), [("1", [1]), ("1, 2", [1, 2]), ("1-3", [1, 2, 3]),
                                                  ("1–2, 3", [1, 2, 3]), ("3-1", [3, 1])])
def test_a_marker_holds_its_numbers_lists_and_ranges(marker: str, numbers: list[int]) -> None:
    assert cited_numbers(marker) == numbers


@pytest.mark.parametrize("reply", ["WAL checkpoints at 1000 pages [1, 2].", "WAL checkpoints at 1000 pages [1-2].",
                                   "WAL checkpoints at 1000 pages. [1][2]", "WAL checkpoints at 1000 pages [1,2,9]."])
def test_lists_and_ranges_of_citations_cite_each_source(reply: str) -> None:
    answer = draft(reply, SOURCES)
    assert answer.claims == (Claim("WAL checkpoints at 1000 pages.", (1, 2)),)
    assert answer.text == "WAL checkpoints at 1000 pages [1][2]." or answer.text.endswith("pages. [1][2]")
    assert "9" not in answer.text


def test_e_g_and_i_e_end_no_claim() -> None:
    answer = draft("Pass a flag, e.g. --force, to skip it [1]. It checks all, i.e. every file [2].", SOURCES)
    assert answer.claims == (Claim("Pass a flag, e.g. --force, to skip it.", (1,)),
                             Claim("It checks all, i.e. every file.", (2,)))


@pytest.mark.parametrize(("reply", "claims"), [
    ("The command is this: [1][2].", [Claim("The command is this.", (1, 2))]),
    ("The command is this:\n. [1][2].", [Claim("The command is this.", (1, 2))]),
    ("It is done. [3]", [Claim("It is done.", (3,))]),
    ("It is done. [3].", [Claim("It is done.", (3,))]),
    ("Squash with x; [1].", [Claim("Squash with x.", (1,))]),
    ("Squash with x; [1]", [Claim("Squash with x;", (1,))]),
    ("First rebase: [1]. Then push [2]. Last, check: [3]", [Claim("First rebase.", (1,)), Claim("Then push.", (2,)),
                                                             Claim("Last, check:", (3,))]),
    ("Rebase [1]. . [2]", [Claim("Rebase.", (1, 2))]),
])
def test_markers_after_lone_punctuation_belong_to_the_sentence_before_them(reply: str, claims: list[Claim]) -> None:
    assert list(draft(reply, SOURCES).claims) == claims


def test_no_claim_is_only_punctuation_or_markers() -> None:
    # the first marker follows no sentence; the last follows lone punctuation on lines of their own
    assert draft(". [1] Squash them [2].\n;\n: [3]", SOURCES).claims == (Claim("Squash them.", (2, 3)),)
