"""Paragraph-packed chunks of about 1,200 characters, each carrying its nearest heading (seed 001)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from wisp_text.sentences import split_sentences

DEFAULT_MAX_CHARS = 1200
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    heading: str  # the nearest heading above the chunk ("" before the first one)

    @property
    def with_heading(self) -> str:
        """The text a model should see: the heading gives a chunk the context its paragraphs lack."""
        return f"{self.heading}\n{self.text}" if self.heading and not self.text.startswith(self.heading) else self.text


def chunk_text(text: str, max_chars: int = DEFAULT_MAX_CHARS, title: str = "") -> list[Chunk]:
    """Split markdown or plain text into chunks of at most `max_chars`, packing whole paragraphs.

    A heading line (`# …`) starts a new chunk and becomes the heading of the chunks below it; a paragraph
    longer than `max_chars` is cut at sentence ends (`split_sentences`, not at its line breaks), and a sentence
    longer than that at `max_chars`.
    `title` is the heading of what comes before the first heading.
    """
    chunks: list[Chunk] = []
    heading, packed = title.strip(), ""

    def flush() -> None:
        nonlocal packed
        if packed.strip():
            chunks.append(Chunk(len(chunks), packed.strip(), heading))
        packed = ""

    for block in _blocks(text):
        if match := _HEADING.match(block):
            flush()
            heading = match.group(1).strip()
            continue
        for piece in _pieces(block, max_chars):
            if packed and len(packed) + 2 + len(piece) > max_chars:
                flush()
            packed = f"{packed}\n\n{piece}" if packed else piece
    flush()
    return chunks


def _blocks(text: str) -> list[str]:
    """Paragraphs separated by blank lines; a heading line is a block of its own even without blank lines."""
    blocks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if _HEADING.match(line):
                if lines:
                    blocks.append("\n".join(lines))
                    lines = []
                blocks.append(line.strip())
            elif line.strip():
                lines.append(line.rstrip())
        if lines:
            blocks.append("\n".join(lines))
    return blocks


def _pieces(block: str, max_chars: int) -> list[str]:
    if len(block) <= max_chars:
        return [block]
    pieces, current = [], ""
    for sentence in split_sentences(block):
        while len(sentence) > max_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:max_chars])
            sentence = sentence[max_chars:]
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces
