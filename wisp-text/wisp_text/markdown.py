"""Markdown as text to score and to quote: backslash escapes removed outside code.

trafilatura's markdown escapes punctuation in prose (`foreign\\_keys`, `a\\*b`), which is right for a Markdown
reader and wrong for everything that reads the words: BM25 saw `_keys`, the models saw backslashes, and a
passage quoted `select\\_related` where the page says `select_related`.
"""

from __future__ import annotations

import re

# one pass, left to right, so that an escaped backtick is consumed before it could open a code span:
# a fenced block or a code span (any run of backticks, closed by the same run) stays as it is, since escapes
# are literal there; elsewhere a backslash before ASCII punctuation (CommonMark's escapes) goes
_TOKEN = re.compile(r"(```.*?```|(`+)[^`].*?(?<!`)\2(?!`))|\\([!-/:-@\[-`{-~])", re.DOTALL)


def unescaped(markdown: str) -> str:
    return _TOKEN.sub(lambda m: m[1] or m[3], markdown)
