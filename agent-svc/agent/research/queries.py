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
# where a question's parts meet: a question mark, a semicolon, "and then", ", and"
_CLAUSES = re.compile(r"\?\s+|;\s*|,?\s+(?:and then|and also|as well as)\s+|,\s+and\s+", re.I)
# two named things compared: "SQLite and PostgreSQL", "git vs mercurial", "A or B"
_PAIR = re.compile(r"\b([\w.+#-]+)\s+(?:and|or|vs\.?|versus)\s+([\w.+#-]+)\b", re.I)


def key(query: str) -> frozenset[str]:
    """What makes two queries the same search: their content words, in any order."""
    return frozenset(content_terms(query))


def decomposed(prompt: str) -> list[str]:
    """The prompt's parts as queries, the whole prompt first: its clauses, and for a comparison the prompt once
    for each side."""
    whole = prompt.strip()[:MAX_QUERY_CHARS]
    parts = [whole]
    parts += [clause.strip(" ,.?") for clause in _CLAUSES.split(prompt) if len(content_terms(clause)) >= 2]
    for pair in _PAIR.finditer(prompt):
        first, second = pair.group(1), pair.group(2)
        if content_terms(first) and content_terms(second):
            parts += [prompt.replace(pair.group(0), side, 1).strip()[:MAX_QUERY_CHARS] for side in (first, second)]
    return fresh(parts, ())


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
