"""What the ranked modes score: passages, each a chunk of a page (or a result's snippet) with its score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wisp_text.bm25 import bm25_scores
from wisp_text.chunking import Chunk


@dataclass(frozen=True)
class Passage:
    url: str
    title: str
    chunk: Chunk
    score: float = 0.0

    @property
    def heading(self) -> str:
        return self.chunk.heading

    @property
    def text(self) -> str:
        return self.chunk.text

    def as_json(self) -> dict[str, str | float]:
        return {"heading": self.heading, "text": self.text, "score": round(self.score, 4)}

    @property
    def scored_text(self) -> str:
        """What a model scores: the chunk with its heading."""
        return self.chunk.with_heading


def snippet_chunk(title: str, snippet: str) -> Chunk | None:
    """A result's SearXNG snippet as the one chunk it offers without its page; None when it has no text."""
    text = snippet or title
    return Chunk(0, text, title) if text.strip() else None


def bm25_order(query: str, passages: Sequence[Passage]) -> list[int]:
    """Indices of `passages`, best BM25 match to the query first (ties keep their order)."""
    lexical = bm25_scores(query, [p.scored_text for p in passages])
    return sorted(range(len(passages)), key=lambda i: lexical[i], reverse=True)
