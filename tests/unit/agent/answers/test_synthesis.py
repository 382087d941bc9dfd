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
