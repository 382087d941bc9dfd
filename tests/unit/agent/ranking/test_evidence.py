from wisp_text.chunking import Chunk

from agent.core.passage import Passage, snippet_chunk
from agent.ranking.evidence import bm25_order, bm25_scored


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


def test_the_first_pass_keeps_each_candidates_best_passages_scored_over_all_of_them() -> None:
    def passages(*texts: str) -> tuple[Passage, ...]:
        return tuple(Passage("u", "T", Chunk(i, text, "")) for i, text in enumerate(texts))

    evidence = [passages("cats purr", "squash commits with git rebase", "rebase a branch"), passages("git squash"), ()]
    first, second, empty = bm25_scored("git rebase to squash commits", evidence, 2)
    assert [p.text for p in first] == ["squash commits with git rebase", "rebase a branch"]
    assert first[0].score > second[0].score > first[1].score > 0 and empty == ()
