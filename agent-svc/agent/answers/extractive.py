"""The extractive answer: the packed sources' own sentences closest to the question, each cited by its source's
number. What a rich answer says when no claim of the LLM's answer is supported (a small model's prose that cites
nothing): sentences copied from what they cite, judged by the same claim check as the LLM's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from wisp_text.bm25 import bm25_scores
from wisp_text.sentences import split_sentences
from wisp_text.terms import content_terms

from agent.answers.synthesis import Draft, Source, draft, marker_spans

SENTENCES = 3  # as long as the LLM's answers tend to be (its rules allow five)
MIN_WORDS = 4  # shorter ones are labels and headings
MAX_CHARS = 400  # a longer "sentence" is a table, a code block or a page's boilerplate run together
# a block of its own: after a blank line, and each list item, quote or table row
_BLOCK_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+>|]|\d{1,3}[.)])\s)")
_LIST_MARK = re.compile(r"^(?:[-*+>]|\d{1,3}[.)])\s+")
# prose, not code, a table row or a piece of a sentence: a capital (or a code span, a number) first, a stop last,
# no code fence (a code block runs into the sentence after it) and no table's bar
_PROSE = re.compile(r"(?!```)[A-Z0-9`\"'(](?:(?!```)[^|])*[.!?][\"')`*_]?")


def extractive_draft(question: str, sources: Sequence[Source]) -> Draft:
    """The SENTENCES sentences of `sources` that BM25 scores highest for the question's content words (each
    sentence one document; ties go to the better-ranked source), best first, one a line, each followed by its
    source's marker; a draft without claims when no sentence shares a word with the question."""
    first_source: dict[str, int] = {}  # a sentence two pages share is quoted once, from the better-ranked
    for source in sources:
        for text in source.texts:
            for sentence in filter(_quotable, _sentences(text)):
                first_source.setdefault(sentence, source.number)
    candidates = list(first_source.items())
    scores = bm25_scores(" ".join(content_terms(question)), [sentence for sentence, _ in candidates])
    ranked = sorted(range(len(candidates)), key=lambda i: -scores[i])
    chosen = [candidates[i] for i in ranked if scores[i] > 0][:SENTENCES]
    return draft("\n".join(f"{sentence} [{number}]" for sentence, number in chosen), sources)


def _sentences(text: str) -> Iterator[str]:
    """The sentences of a passage's blocks, each on one line: passages keep their pages' hard wrapping, so a
    line is often a piece of a sentence."""
    for block in _BLOCK_BREAK.split(text):
        for sentence in split_sentences(_LIST_MARK.sub("", block.strip())):
            yield " ".join(sentence.split())


def _quotable(sentence: str) -> bool:
    """Prose, long enough to say something, short enough to be one sentence, and with no bracketed number the
    claim check would read as a citation (`[3]` of a wiki, `a[1]` of code)."""
    return (len(sentence.split()) >= MIN_WORDS and len(sentence) <= MAX_CHARS and _PROSE.fullmatch(sentence) is not None
            and not marker_spans(sentence))
