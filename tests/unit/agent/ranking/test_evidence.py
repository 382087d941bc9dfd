from wisp_text.chunking import Chunk

from agent.core.passage import Passage, snippet_chunk
from agent.ranking.evidence import bm25_order


def test_a_scored_text_carries_its_heading_once() -> None:
    assert Passage("u", "T", Chunk(0, "Run it.", "Usage")).scored_text == "Usage\nRun it."
    assert Passage("u", "T", Chunk(0, "Run it.", "")).scored_text == "Run it."
    # a result without a snippet offers its title, and the title is not scored twice
    assert Passage("u", "T", snippet_chunk("Git rebase", "")).scored_text == "Git rebase"


def test_a_result_without_text_offers_no_snippet() -> None:
    assert snippet_chunk("", " ") is None


def test_bm25_order_puts_the_matching_passage_first() -> None:
    passages = [Passage("u", "T", Chunk(i, text, "")) for i, text in
                enumerate(["cats purr", "squash commits with git rebase", "rebase a branch"])]
    assert bm25_order("git squash commits", passages)[0] == 1
