"""Paragraph-packed chunks of about 1,200 characters, each carrying its nearest heading (seed 001)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from wisp_text.sentences import split_sentences

DEFAULT_MAX_CHARS = 1200
# an ATX heading line: its text is what follows the #s, less a closing run of #s (stripped in _heading). As one
# regex, `(.+?)\s*#*\s*$` tried every split of trailing spaces: "# a", 4,000 spaces and "b" took 78 s
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+)$")


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

    for block, heading_of_block in _blocks(text):
        if heading_of_block is not None:
            flush()
            heading = heading_of_block
            continue
        for piece in _pieces(block, max_chars):
            if packed and len(packed) + 2 + len(piece) > max_chars:
                flush()
            packed = f"{packed}\n\n{piece}" if packed else piece
    flush()
    return chunks


def _blocks(text: str) -> list[tuple[str, str | None]]:
    """Paragraphs separated by blank lines, each with None; a heading line is a block of its own even without
    blank lines, with its heading."""
    blocks: list[tuple[str, str | None]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if (heading := _heading(line)) is not None:
                if lines:
                    blocks.append(("\n".join(lines), None))
                    lines = []
                blocks.append((line.strip(), heading))
            elif line.strip():
                lines.append(line.rstrip())
        if lines:
            blocks.append(("\n".join(lines), None))
    return blocks


def _heading(line: str) -> str | None:
    """The text of a heading line (one line, no line break in it), None for any other line."""
    match = _HEADING.match(line)
    if match is None:
        return None
    text = match[1].rstrip()
    # without its closing #s; a heading of #s alone keeps one ("# ##" is the heading "#")
    return (text.rstrip("#").rstrip() or text[:1]).strip()


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
