"""Markdown as text to score and to quote: backslash escapes removed outside code.

trafilatura's markdown escapes punctuation in prose (`foreign\\_keys`, `a\\*b`), which is right for a Markdown
reader and wrong for everything that reads the words: BM25 saw `_keys`, the models saw backslashes, and a
passage quoted `select\\_related` where the page says `select_related`.

One pass, left to right, so that an escaped backtick is consumed before it could open a code span. A fenced
block (``` to the next ```) or a code span (a run of backticks, closed by the next run of the same length) stays
as it is, since escapes are literal there; elsewhere a backslash before ASCII punctuation (CommonMark's escapes)
goes. A run that does not close is literal, and the rest of it is tried as a shorter run, backtick by backtick.

Linear in the text's length, for a page's text is hostile input: as one regex (a code span's `.*?` scanning for
its closer from every run that has none) it was quadratic, 40 s for 5 MB of runs of distinct lengths.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_RUN = re.compile(r"`+")
_NEXT = re.compile(r"`+|\\([!-/:-@\[-`{-~])")  # a run of backticks, or an escape (the escaped character)


def unescaped(markdown: str) -> str:
    runs: dict[int, list[int]] = {}  # a whole run's length → where the runs of that length start, in order
    for run in _RUN.finditer(markdown):
        runs.setdefault(run.end() - run.start(), []).append(run.start())
    pieces: list[str] = []
    position, no_fence_from = 0, len(markdown)  # no "```" starts at or after no_fence_from
    while match := _NEXT.search(markdown, position):
        pieces.append(markdown[position:match.start()])
        if match[1] is not None:
            pieces.append(match[1])
            position = match.end()
            continue
        start, end = match.span()
        position = end  # the whole run literal, unless one of its backticks opens code
        for opener in range(start, end):
            length = end - opener
            if length >= 3 and opener + 3 < no_fence_from:
                fence_end = markdown.find("```", opener + 3)
                if fence_end >= 0:
                    position = fence_end + 3
                    break
                no_fence_from = opener + 3
            closers = runs.get(length, [])
            # the next run of exactly this length, after at least one character of code
            if end < len(markdown) and (i := bisect_right(closers, end)) < len(closers):
                position = closers[i] + length
                break
        pieces.append(markdown[start:position])
    pieces.append(markdown[position:])
    return "".join(pieces)
