"""A passage: a chunk of a page (or a result's snippet) with the score a model gave it; what ranking scores,
packing packs, and an answer cites."""

from __future__ import annotations

from dataclasses import dataclass

from wisp_text.chunking import Chunk


@dataclass(frozen=True)
class Passage:
    url: str
    title: str
    chunk: Chunk
    score: float = 0.0
    probability: float | None = None  # of relevance to the query, when a calibrated model scored it

    @property
    def heading(self) -> str:
        return self.chunk.heading

    @property
    def text(self) -> str:
        return self.chunk.text

    def as_json(self) -> dict[str, str | float | None]:
        known = {} if self.probability is None else {"probability": self.probability}
        return {"heading": self.heading, "text": self.text, "score": round(self.score, 4), **known}

    @property
    def scored_text(self) -> str:
        """What a model scores: the chunk with its heading."""
        return self.chunk.with_heading


def snippet_chunk(title: str, snippet: str) -> Chunk | None:
    """A result's SearXNG snippet as the one chunk it offers without its page; None when it has no text."""
    text = snippet or title
    return Chunk(0, text, title) if text.strip() else None
