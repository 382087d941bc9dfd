"""Where a sentence ends: the one rule of every Wisp stage that cuts text into sentences, so that they agree.

A sentence ends at `.`, `!` or `?` followed by whitespace or by the end of the text. That is a heuristic: an
abbreviation (`e.g. this`) ends a sentence too, and a closing quote after the stop (`… stop." Then`) hides the
end. Its users:

- chunking (`chunking.py`) cuts a paragraph too long for one chunk at sentence ends, and only there: a line
  break inside a paragraph is hard wrapping, not the end of a sentence;
- the offline web's snippets (`offline_web.index.first_sentence`) end at a sentence end (`sentence_ends`);
- agent-svc's rich answers (`agent.answers.synthesis.sentences`) make a claim of each sentence of the LLM's answer and
  check it against the sentences of its sources, with `at_line_breaks=True`: a line of an answer (a list item,
  a heading) or of a packed passage is a sentence of its own whether or not it ends with a stop.
"""

from __future__ import annotations

import re

# the stop stays with its sentence; the whitespace after it goes (a zero-width match at the end of the text)
_SENTENCE_END = re.compile(r"(?<=[.!?])(?:\s+|\Z)")


def sentence_ends(text: str) -> list[int]:
    """The offset just past each sentence's final `.`, `!` or `?` in `text`, in order (`text[:end]` is the text
    up to and with that sentence)."""
    return [match.start() for match in _SENTENCE_END.finditer(text)]


def split_sentences(text: str, at_line_breaks: bool = False) -> list[str]:
    """The sentences of `text` in order, without the whitespace around them; no empty ones.

    With `at_line_breaks`, a line break (`\\n`) ends a sentence too, for text whose lines stand alone (an LLM's
    answer, list items); without it, a sentence may span lines (wrapped prose), and the line breaks inside it stay.
    """
    parts = text.split("\n") if at_line_breaks else [text]
    return [sentence.strip() for part in parts for sentence in _SENTENCE_END.split(part) if sentence.strip()]
