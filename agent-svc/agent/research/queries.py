"""Search queries a job asks: from its prompt without an LLM (its clauses, each side of a comparison), and the
LLM's, validated: a JSON list of short queries, each about the question or what the notes found, none asked
before. Anything else is no queries, and the caller falls back."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from itertools import zip_longest

from wisp_text.terms import content_terms

MAX_QUERY_CHARS = 200
QUERIES_SCHEMA = {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
                  "required": ["queries"]}
# where a question's parts meet: punctuation (a joining word after it too), a sentence's end, the words that join
# clauses or list items
_SEGMENTS = re.compile(r"\s*(?:[,;:?]|\.(?=\s))\s*(?:(?:and|or|but)\s+)?|"
                       r"\s+(?:and then|and also|as well as|and|or|vs\.?|versus|whereas|while|but)\s+", re.I)
# a name: a capitalised word (not an acronym), or a word with code in it (subprocess.run(), shell=True, C++, --inspect)
_NAMED = re.compile(r"^(?:[A-Z](?![A-Z0-9]*$)|\S*\w[.+#=_(/]|\S*[+#]$|--?\w)")
SHORT_PART = 3  # content words of a part that is a list item ("the PostgreSQL server"), not a clause
CORE_WORDS = 8


def key(query: str) -> frozenset[str]:
    """What makes two queries the same search: their content words, in any order."""
    return frozenset(content_terms(query))


def decomposed(prompt: str) -> list[str]:
    """The prompt's parts as queries, the whole prompt first. A question that names several things (a comparison,
    a list, a constraint on two tools) is split where its parts meet, and each part is asked with the question's
    core (`_core`). "The deque type in Rust's std, in C++'s, and in
    Python's collections" asks "deque type Rust's std", "C++'s deque type" and "Python's collections deque
    type"; "Which of SQLite and PostgreSQL checkpoints automatically?" asks "Which of SQLite checkpoints
    automatically" and "PostgreSQL checkpoints automatically"."""
    whole = prompt.strip()[:MAX_QUERY_CHARS]
    segments = [s.strip(" .!\"'") for s in _SEGMENTS.split(prompt) if s and content_terms(s)]
    if len(segments) < 2:
        return fresh([whole], ())
    core = _core(prompt, segments)
    parts = [" ".join([segment, *(w for w in core if not set(content_terms(w)) & set(content_terms(segment)))])
             for segment in segments]
    return fresh([whole, *(part[:MAX_QUERY_CHARS] for part in parts)], ())


def _core(prompt: str, segments: list[str]) -> list[str]:
    """What each part is asked with: the head's words that are not names ("What TCP port does each of these
    listen on by default": TCP port each listen default), or when the head has fewer than two (a comparison's
    "Which of SQLite"), the question's words that are neither names nor in a list item."""
    words = _words(segments[0])
    head = [w for n, w in enumerate(dict.fromkeys(words)) if content_terms(w) and (n == 0 or not _NAMED.match(w))]
    if len(head) >= 2:
        return head[:CORE_WORDS]
    items = {t for s in segments if len(content_terms(s)) <= SHORT_PART for t in content_terms(s)}
    return [w for w in dict.fromkeys(_words(prompt)) if not _NAMED.match(w) and content_terms(w)
            and not set(content_terms(w)) & items][:CORE_WORDS]


def _words(text: str) -> list[str]:
    return [w.strip(",.;:!?\"'()") for w in text.split()]


def fresh(queries: Iterable[str], asked: Collection[frozenset[str]]) -> list[str]:
    """`queries` less those asked before (or twice here) and those with no content word, in order."""
    seen, kept = set(asked), []
    for query in queries:
        words = key(query)
        if words and words not in seen:
            seen.add(words)
            kept.append(query)
    return kept


def interleaved(*lists: Sequence[str]) -> list[str]:
    """The lists' items taken in turn, one of each, until all are spent."""
    return [item for group in zip_longest(*lists) for item in group if item is not None]


def llm_queries(reply: str, about: str, asked: Collection[frozenset[str]]) -> list[str]:
    """The queries of an LLM's reply (`{"queries": [...]}` or a bare list) that are strings of 3 to 200
    characters sharing a content word with `about` (the question, and the notes for a follow-up) and not asked
    before; [] for a reply that is not such JSON."""
    try:
        value = json.loads(reply)
    except ValueError:
        return []
    listed = value.get("queries") if isinstance(value, dict) else value
    if not isinstance(listed, list):
        return []
    vocabulary = set(content_terms(about))
    valid = (q.strip() for q in listed if isinstance(q, str) and 3 <= len(q.strip()) <= MAX_QUERY_CHARS)
    return fresh((q for q in valid if vocabulary & set(content_terms(q))), asked)
