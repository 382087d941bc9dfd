"""Okapi BM25 over a small set of passages, with stdlib collections only (seed 001's prefilter)."""

from __future__ import annotations

import math
import re
from collections import Counter

_TOKEN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Words, lowercased; an identifier (`foreign_keys`) also gives its parts, so that it matches the words it
    is made of (`foreign key`) as well as itself."""
    tokens = []
    for word in _TOKEN.findall(text.lower()):
        tokens.append(word)
        parts = [part for part in word.split("_") if part]
        if parts != [word]:
            tokens += dict.fromkeys(parts)  # each part once: `a_a` is not two mentions of `a`
    return tokens


def bm25_scores(query: str, passages: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """One BM25 score per passage for `query`; the passages themselves are the collection (IDF and length)."""
    documents = [Counter(tokenize(p)) for p in passages]
    if not documents:
        return []
    lengths = [sum(d.values()) for d in documents]
    average = sum(lengths) / len(lengths) or 1.0
    terms = set(tokenize(query))
    frequency = {t: sum(1 for d in documents if t in d) for t in terms}
    n = len(documents)
    idf = {t: math.log((n - f + 0.5) / (f + 0.5) + 1) for t, f in frequency.items()}
    scores = []
    for document, length in zip(documents, lengths, strict=True):
        score = 0.0
        for term in terms:
            tf = document.get(term, 0)
            if tf:
                score += idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        scores.append(score)
    return scores
