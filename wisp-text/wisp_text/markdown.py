"""Markdown as text to score and to quote: backslash escapes removed outside code.

trafilatura's markdown escapes punctuation in prose (`foreign\\_keys`, `a\\*b`), which is right for a Markdown
reader and wrong for everything that reads the words: BM25 saw `_keys`, the models saw backslashes, and a
passage quoted `select\\_related` where the page says `select_related`.
"""

from __future__ import annotations

import re

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)  # fenced blocks and code spans: escapes are literal there
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation


def unescaped(markdown: str) -> str:
    parts = _CODE.split(markdown)
    parts[::2] = [_ESCAPE.sub(r"\1", part) for part in parts[::2]]
    return "".join(parts)
