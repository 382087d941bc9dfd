"""Where the page cache (pages/cache.py) keeps its compressed entries: one interface, three stores, one registry
line each there: a directory (disk.py; processes on one machine may share it), this process's memory (memory.py),
or Redis (redis.py: every replica's). Each holds at most PAGE_CACHE_MAX_BYTES, the least recently used dropped
first."""

from __future__ import annotations

from typing import Protocol


class Store(Protocol):
    """Compressed entries by key, bounded in bytes; thread-safe; OSError when it cannot be read or written."""

    @property
    def held_bytes(self) -> int:
        ...

    def read(self, key: str) -> bytes | None:
        ...

    def write(self, key: str, blob: bytes) -> int:
        """Keep `blob` under `key`; the number of entries evicted to make room."""
        ...

    def drop(self, key: str) -> None:
        ...
