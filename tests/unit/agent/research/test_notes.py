"""What a job keeps: notes cut short and bounded, one per page of a search; and the words a follow-up asks about."""

from wisp_text.chunking import Chunk

from agent.core.passage import Passage
from agent.research.notes import PER_SEARCH, Notebook, salient_terms


def passage(url: str, text: str, index: int = 0) -> Passage:
    return Passage(url, url, Chunk(index, text, ""))


def test_a_search_notes_one_passage_a_page_cut_short_and_the_notebook_stays_bounded() -> None:
    notebook = Notebook(max_notes=6, note_chars=40)
    found = [passage("https://a.test/", "word " * 30), passage("https://a.test/", "other", 1),
             *(passage(f"https://p{n}.test/", f"page {n}") for n in range(8))]
    notebook, added = notebook.noted(found, "q", 0)
    assert added == PER_SEARCH and [n.passage.url for n in notebook.notes][:2] == ["https://a.test/",
                                                                                   "https://p0.test/"]
    assert len(notebook.notes[0].passage.text) <= 42 and notebook.notes[0].passage.text.endswith("…")
    notebook, again = notebook.noted(found, "q2", 1)  # what it holds is not noted twice
    assert again == 1 and len(notebook.notes) == 6  # a.test/'s other passage reaches the bound of 6
    notebook, none = notebook.noted([passage("https://new.test/", "new")], "q3", 2)
    assert none == 0


def test_the_report_reads_every_searchs_best_note_first() -> None:
    notebook, _ = Notebook().noted([passage("https://a.test/", "a1"), passage("https://b.test/", "b1")], "q1", 0)
    notebook, _ = notebook.noted([passage("https://c.test/", "c1")], "q2", 1)
    assert [p.text for p in notebook.for_report()] == ["a1", "c1", "b1"]


def test_salient_terms_are_new_words_names_first() -> None:
    found = [passage("https://a.test/", "The directory is created by Falcon, a tool; the tool keeps it."),
             passage("https://b.test/", "Maintained as a tool of its own.")]
    assert salient_terms(found, ["tool", "directory"], 2) == ["falcon", "created"]
