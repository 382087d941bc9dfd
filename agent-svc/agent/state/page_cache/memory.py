"""The page cache's entries in this process's memory (PAGE_CACHE=memory)."""

from __future__ import annotations

import threading
from collections import OrderedDict


class MemoryStore:
    """Entries in this process's memory, least recently used first."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held_bytes(self) -> int:
        return self._held

    def read(self, key: str) -> bytes | None:
        with self._lock:
            blob = self._entries.get(key)
            if blob is not None:
                self._entries.move_to_end(key)
            return blob

    def write(self, key: str, blob: bytes) -> int:
        with self._lock:
            self._held += len(blob) - len(self._entries.pop(key, b""))
            self._entries[key] = blob
            evicted = 0
            while self._held > self._max:
                self._held -= len(self._entries.popitem(last=False)[1])
                evicted += 1
            return evicted

    def drop(self, key: str) -> None:
        with self._lock:
            self._held -= len(self._entries.pop(key, b""))
