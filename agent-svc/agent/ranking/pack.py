"""Stage 4 input, pack: the best passages, greedily, into a character budget, at most N per page (seed 001)."""

from __future__ import annotations

from collections import Counter

from agent.core.passage import Passage


def pack(passages: list[Passage], budget_chars: int, per_url: int | None = None) -> list[Passage]:
    """Passages in score order that fit the budget, skipping a page's passages past `per_url` (None: no such
    bound) so that the context stays diverse; a passage that does not fit is skipped, not cut, and smaller ones
    may still fit."""
    packed: list[Passage] = []
    used, per_page = 0, Counter[str]()
    for passage in sorted(passages, key=lambda p: p.score, reverse=True):
        if (per_url is not None and per_page[passage.url] >= per_url) or used + len(passage.text) > budget_chars:
            continue
        packed.append(passage)
        per_page[passage.url] += 1
        used += len(passage.text)
    return packed


def context_text(packed: list[Passage]) -> str:
    """The packed passages as one string, each page numbered once ([1], [2], …) for citing."""
    return "\n\n".join(f"{header}\n{passage.text}" for header, passage in zip(headers(packed), packed, strict=True))


def headers(packed: list[Passage]) -> list[str]:
    """Each packed passage's header line: its page's number, title, heading and URL."""
    numbers: dict[str, int] = {}
    lines = []
    for passage in packed:
        number = numbers.setdefault(passage.url, len(numbers) + 1)
        heading = f" › {passage.heading}" if passage.heading and passage.heading != passage.title else ""
        lines.append(f"[{number}] {passage.title}{heading} ({passage.url})")
    return lines
