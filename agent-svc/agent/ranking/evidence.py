"""What the ranked modes score: passages, each a chunk of a page (or a result's snippet) with its score."""

from __future__ import annotations

from collections.abc import Sequence

from wisp_text.bm25 import bm25_scores

from agent.core.passage import Passage


def bm25_order(query: str, passages: Sequence[Passage]) -> list[int]:
    """Indices of `passages`, best BM25 match to the query first (ties keep their order)."""
    lexical = bm25_scores(query, [p.scored_text for p in passages])
    return sorted(range(len(passages)), key=lambda i: lexical[i], reverse=True)
