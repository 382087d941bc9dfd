"""What the ranked modes score: passages, each a chunk of a page (or a result's snippet) with its score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from wisp_text.bm25 import bm25_scores

from agent.core.passage import Passage


def bm25_scored(query: str, evidence: Sequence[Sequence[Passage]], most: int) -> list[tuple[Passage, ...]]:
    """Each candidate's `most` best passages by BM25 against the query, best first, with their BM25 scores: the
    first pass, which ranks when the model cannot. The collection (IDF, length) is every candidate's evidence."""
    passages = [p for candidate in evidence for p in candidate]
    scores = iter(bm25_scores(query, [p.scored_text for p in passages]))
    scored = [[replace(p, score=next(scores)) for p in candidate] for candidate in evidence]
    return [tuple(sorted(candidate, key=lambda p: p.score, reverse=True)[:most]) for candidate in scored]


def bm25_order(query: str, passages: Sequence[Passage]) -> list[int]:
    """Indices of `passages`, best BM25 match to the query first (ties keep their order)."""
    lexical = bm25_scores(query, [p.scored_text for p in passages])
    return sorted(range(len(passages)), key=lambda i: lexical[i], reverse=True)
