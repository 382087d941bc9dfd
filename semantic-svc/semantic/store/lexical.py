"""The index's lexical side when the embedder has no trained lexical head: BM25 as sparse vectors.

A chunk's vector holds, for each of its words, BM25's saturated term frequency; a query's holds its distinct
words with weight 1. Qdrant multiplies each query term by its IDF over the collection (the `IDF` modifier of the
sparse vector, `ln((N - df + 0.5) / (df + 0.5) + 1)`, the same in embedded mode), so the dot product is Okapi
BM25. Words are `wisp_text.bm25.tokenize`'s, the tokenizer of the offline reranker, each hashed with CRC-32: a
stable 32-bit index, the same in every process (Python's `hash` is salted per process).
"""

from __future__ import annotations

import zlib
from collections import Counter

from wisp_text.bm25 import tokenize

from semantic.kinds import Lexical, LexicalSetting

K1, B = 1.2, 0.75


def document_vector(text: str, typical_chars: int) -> dict[int, float]:
    """BM25's term weights of one chunk; `typical_chars` (CHUNK_CHARS) stands in for the average length, which
    Qdrant does not keep, so a short chunk (a page's last) counts as short."""
    counts = Counter(_index(term) for term in tokenize(text))
    norm = K1 * (1 - B + B * len(text) / max(typical_chars, 1))
    return {index: tf * (K1 + 1) / (tf + norm) for index, tf in counts.items()}


def query_vector(text: str) -> dict[int, float]:
    """Each distinct word of the query once: Qdrant weighs it by its IDF."""
    return dict.fromkeys((_index(term) for term in tokenize(text)), 1.0)


def for_new_collections(setting: LexicalSetting, model_has_head: bool) -> Lexical | None:
    """The lexical side INDEX_LEXICAL gives a collection created now: auto is the model's head, else BM25."""
    if setting == "auto":
        return "model" if model_has_head else "bm25"
    if setting == "model":
        return "model" if model_has_head else None
    return None if setting == "off" else "bm25"


def _index(term: str) -> int:
    return zlib.crc32(term.encode())
