"""A bounded LRU cache of text embeddings, so a chunk scored twice (two modes, a repeated query) is embedded once.

Keys are (model, kind, digest of the text): the digest keeps 16 bytes per entry instead of a ~1 KB chunk.
It lives on the event loop, so it needs no lock.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from semantic.models.embedders import EncodedText


@dataclass(frozen=True)
class CacheStats:
    entries: int
    max_entries: int
    hits: int
    misses: int


class EmbeddingCache:
    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._rows: OrderedDict[Hashable, EncodedText] = OrderedDict()
        self._hits = self._misses = 0

    def get(self, model: str, kind: str, text: str) -> EncodedText | None:
        """The cached encoding of `text`, or None (always, when the cache is disabled)."""
        row = self._rows.get(key := _key(model, kind, text))
        if row is None:
            self._misses += 1
            return None
        self._hits += 1
        self._rows.move_to_end(key)
        return row

    def put(self, model: str, kind: str, text: str, row: EncodedText) -> None:
        if not self._max_entries:
            return
        key = _key(model, kind, text)
        self._rows[key] = row
        self._rows.move_to_end(key)
        if len(self._rows) > self._max_entries:
            self._rows.popitem(last=False)

    def stats(self) -> CacheStats:
        return CacheStats(len(self._rows), self._max_entries, self._hits, self._misses)


def _key(model: str, kind: str, text: str) -> Hashable:
    return model, kind, hashlib.blake2b(text.encode(), digest_size=16).digest()
