from wisp_text.chunking import Chunk

from agent.core.passage import Passage
from agent.ranking.pack import context_text, pack


def passage(url: str, score: float, size: int = 100, heading: str = "") -> Passage:
    return Passage(url, f"Title {url}", Chunk(0, "x" * size, heading), score)


def test_greedy_by_score_within_budget_and_per_page_cap() -> None:
    passages = [passage("a", 0.9), passage("a", 0.8), passage("a", 0.7), passage("a", 0.6), passage("b", 0.5),
                passage("c", 0.4, size=900), passage("d", 0.3)]
    packed = pack(passages, budget_chars=500, per_url=3)
    assert [(p.url, p.score) for p in packed] == [("a", 0.9), ("a", 0.8), ("a", 0.7), ("b", 0.5), ("d", 0.3)]
    assert sum(len(p.text) for p in packed) <= 500  # c did not fit; the smaller d still did


def test_context_numbers_each_page_once() -> None:
    text = context_text([passage("u1", 0.9, 5, "Setup"), passage("u2", 0.8, 5), passage("u1", 0.7, 5)])
    assert text.splitlines()[0] == "[1] Title u1 › Setup (u1)"
    assert "[2] Title u2 (u2)" in text and text.count("[1]") == 2
