"""The page cache's entries in a directory (PAGE_CACHE=disk, the default): processes on one machine may share it,
since an entry is written whole, then renamed into place, so that a reader sees an old copy, a new one, or none."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

_SUFFIX = ".page"


# a full disk cache evicts down to this share of its bound: the rescan that eviction starts (to count what other
# processes wrote) then comes once per tenth of the cache written, not at every store
_LOW_WATER = 0.9


_LEFTOVER_S = 600  # a temporary file this old is a write that died with its process


class DiskStore:
    """Entries as files of `directory`, named by key. A file's mtime is its last use (a hit touches it), so that
    processes sharing the directory agree on which is least recently used; each counts the others' entries when
    it rescans the directory, at start and when its count passes the bound."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._dir, self._max = directory, max_bytes
        self._lock = threading.Lock()
        self._evicting = threading.Lock()  # held by the one thread evicting
        self._sizes: OrderedDict[str, int] = OrderedDict()  # least recently used first
        self._held = 0
        self._since_scan: dict[str, int | None] | None = None  # while a scan runs: what the store did meanwhile
        self._remove_leftovers()
        self._sizes = _scanned(self._dir)
        self._held = sum(self._sizes.values())

    @property
    def held_bytes(self) -> int:
        return self._held

    def read(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            blob = path.read_bytes()
            os.utime(path)
        except FileNotFoundError:  # never kept, or evicted by another process
            with self._lock:
                self._forget(key)
            return None
        with self._lock:
            self._note(key, len(blob))  # another process may have written it: what this one holds can grow
            full = self._held > self._max
        if full:
            self._evict()
        return blob

    def write(self, key: str, blob: bytes) -> int:
        fd, temporary = tempfile.mkstemp(dir=self._dir, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(blob)
            os.replace(temporary, self._path(key))
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        with self._lock:
            self._note(key, len(blob))
            full = self._held > self._max
        return self._evict() if full else 0

    def drop(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(key).unlink()
        with self._lock:
            self._forget(key)

    def _path(self, key: str) -> Path:
        return self._dir / f"{key}{_SUFFIX}"

    def _note(self, key: str, size: int) -> None:
        self._held += size - self._sizes.pop(key, 0)
        self._sizes[key] = size
        if self._since_scan is not None:
            self._since_scan[key] = size

    def _forget(self, key: str) -> None:
        self._held -= self._sizes.pop(key, 0)
        if self._since_scan is not None:
            self._since_scan[key] = None

    def _evict(self) -> int:
        """Drop the least recently used entries of the whole directory down to the low-water mark. One thread
        evicts at a time, for the others too: it goes on until the store is within its bound."""
        if not self._evicting.acquire(blocking=False):
            return 0  # the eviction under way counts this thread's entry
        evicted, done = 0, False
        try:
            while not done:
                evicted += self._evict_once()
                with self._lock:
                    done = self._held <= self._max
                    if done:  # released under the lock: a store that crosses the bound after this evicts itself
                        self._evicting.release()
        finally:
            if not done:
                self._evicting.release()
        return evicted

    def _evict_once(self) -> int:
        """The directory is scanned outside the lock, so that reads and writes go on meanwhile; what they did is
        replayed on the scan's result."""
        with self._lock:
            self._since_scan = {}
        try:
            found = _scanned(self._dir)
        except BaseException:
            with self._lock:
                self._since_scan = None
            raise
        with self._lock:
            since, self._since_scan = self._since_scan or {}, None
            self._sizes, self._held = found, sum(found.values())
            for key, size in since.items():
                if size is None:
                    self._forget(key)
                else:
                    self._note(key, size)
            doomed = self._least_used_beyond(int(self._max * _LOW_WATER))
        return sum(self._unlinked(key) for key in doomed)

    def _least_used_beyond(self, bytes_kept: int) -> list[str]:
        """Forget the least recently used entries until `bytes_kept` remain; their keys."""
        doomed = []
        while self._held > bytes_kept and self._sizes:
            key, size = self._sizes.popitem(last=False)
            self._held -= size
            doomed.append(key)
        return doomed

    def _unlinked(self, key: str) -> bool:
        try:
            self._path(key).unlink()
        except FileNotFoundError:  # another process evicted it first
            return False
        return True

    def _remove_leftovers(self) -> None:
        old = time.time() - _LEFTOVER_S
        for entry in os.scandir(self._dir):
            if entry.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    if entry.stat().st_mtime < old:
                        os.unlink(entry.path)


def _scanned(directory: Path) -> OrderedDict[str, int]:
    """The size of each entry of `directory`, least recently used first."""
    found = []
    for entry in os.scandir(directory):
        if entry.name.endswith(_SUFFIX):
            with contextlib.suppress(FileNotFoundError):
                stat = entry.stat()
                found.append((stat.st_mtime, entry.name.removesuffix(_SUFFIX), stat.st_size))
    return OrderedDict((key, size) for _, key, size in sorted(found))
