"""The page cache: what fetches got, kept compressed, so that a request with Firecrawl's `maxAge` gets a copy
younger than that without the network (its Document says `cacheState: "hit"` and `cachedAt`).

A fetch is kept (final URL, status, content type, charset, body), not a Document: a hit is extracted again, so one
copy serves every format and extraction option. Only pages fetched whole are kept. Failures (timeouts, DNS, the
SSRF guard) are no page; an HTTP error status is often passing (429, 503), and kept it would hide the page's
recovery for up to maxAge: Firecrawl keeps them but serves an older 2xx copy first, which one entry per URL cannot.

Stores behind one interface, one registry line each: a directory (the default; processes on one machine may
share it: an entry is written whole, then renamed into place, so that a reader sees an old copy, a new one, or
none), memory, or Redis (redis_store.py: every replica's). Each holds at most PAGE_CACHE_MAX_BYTES of compressed
entries, the least recently used dropped first. An entry that does not read back (truncated, corrupt, another
URL's) is a miss, and is dropped. Compression and I/O run in threads, off the event loop (zlib releases the GIL),
and a cache that fails costs only itself: a store that raises OSError is a miss, its write skipped.
A fetched page is kept by a background task, off the request's path, and served from memory until it is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urldefrag

from agent import metrics
from agent.config import PageCacheKind, Settings
from agent.core.pages import CacheUse, Fetched
from agent.state.page_cache.redis import RedisStore

log = logging.getLogger(__name__)
_MAGIC = b"wisp-page/1\n"  # a file that does not start so is no entry of this format
_SUFFIX = ".page"
# bench/page_cache.py on 40 offline-web pages (median 23 kB): level 6 packs them 3.8x in 0.37 ms a page, level 1
# 3.2x in 0.30 ms, level 9 3.8x in 0.66 ms; unpacking takes 0.08 ms at any level
_LEVEL = 6
# a full disk cache evicts down to this share of its bound: the rescan that eviction starts (to count what other
# processes wrote) then comes once per tenth of the cache written, not at every store
_LOW_WATER = 0.9
_LEFTOVER_S = 600  # a temporary file this old is a write that died with its process
# pages waiting to be written at once (each holds its body, up to FETCH_MAX_BYTES, in memory); past that, when the
# disk lags behind the fetches, a page is not kept rather than slowing its request or growing without bound
_MAX_WRITES = 32


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


Servable = Callable[[Fetched], Awaitable[bool]]  # whether a kept copy may be served now


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


class PageCache:
    """Fetched pages by the URL asked (without its fragment), each with when it was fetched."""

    def __init__(self, store: Store, default_max_age_ms: int, clock: Callable[[], float] = time.time) -> None:
        self._store, self._default_max_age_ms, self._clock = store, default_max_age_ms, clock
        self._writing: dict[str, tuple[Fetched, float]] = {}  # by key: pages handed to a write not yet done
        self._writes: set[asyncio.Task[None]] = set()

    def max_age_ms(self, cache_use: CacheUse) -> int:
        return self._default_max_age_ms if cache_use.max_age_ms is None else cache_use.max_age_ms

    async def through(self, url: str, cache_use: CacheUse, fetch: Callable[[], Awaitable[Fetched]],
                      servable: Servable) -> Fetched:
        """The copy of `url` younger than the request's max age that `servable` lets out, else what `fetch()` gets
        (kept when the request lets it); a page's `cache_state` says which, when the request's max age asked the
        cache at all."""
        max_age_ms = self.max_age_ms(cache_use)
        if max_age_ms and (kept := await self.get(url, max_age_ms, servable)):
            return kept
        fetched = await fetch()
        if max_age_ms:
            fetched.cache_state = "miss"
        if cache_use.store and fetched.ok:
            self._keep_later(fetched)
        return fetched

    async def get(self, url: str, max_age_ms: int, servable: Servable | None = None) -> Fetched | None:
        """The page kept for `url`, marked a hit, if it was fetched less than `max_age_ms` ago and `servable`
        (None: any copy) lets it out; never raises."""
        key = _key(url)
        kept = self._writing.get(key) or await asyncio.to_thread(self._read, key, url)
        if kept is None:
            return None
        fetched, stored_at = kept
        result: metrics.CacheLookup = "hit"
        if (self._clock() - stored_at) * 1000 > max_age_ms:
            result = "expired"
        elif servable is not None and not await servable(fetched):
            result = "refused"
        metrics.page_cache_looked_up(result)
        if result != "hit":
            return None
        return replace(fetched, url=url, cache_state="hit", cached_at=datetime.fromtimestamp(stored_at, UTC))

    async def put(self, fetched: Fetched) -> None:
        """Keep `fetched` as its URL's copy, fetched now; never raises."""
        await asyncio.to_thread(self._put, fetched, self._clock())

    async def drain(self) -> None:
        """Wait for the pages being written (at shutdown, so that none is lost)."""
        while self._writes:
            await asyncio.gather(*self._writes)

    def _keep_later(self, fetched: Fetched) -> None:
        """Keep `fetched` in a background task: its request waits for no compression, disk or eviction."""
        if len(self._writes) >= _MAX_WRITES:
            metrics.page_cache_skipped()
            return
        key, writing = _key(fetched.url), (replace(fetched, cache_state=None, cached_at=None), self._clock())
        self._writing[key] = writing
        task = asyncio.create_task(self._write(key, writing))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, key: str, writing: tuple[Fetched, float]) -> None:
        try:
            await asyncio.to_thread(self._put, *writing)
        finally:
            if self._writing.get(key) is writing:  # not a newer copy of the same URL
                del self._writing[key]

    def _read(self, key: str, url: str) -> tuple[Fetched, float] | None:
        """The entry of `url` under `key` and when it was stored; None (counted) when there is none to use."""
        try:
            blob = self._store.read(key)
        except OSError as e:
            log.warning("the page cache could not read %s: %s", url, e)
            metrics.page_cache_looked_up("unavailable")
            return None
        if blob is None:
            metrics.page_cache_looked_up("miss")
            return None
        try:
            fetched, stored_at = decoded(blob, url)
        except ValueError as e:
            log.warning("the page cache dropped its copy of %s: %s", url, e)
            with contextlib.suppress(OSError):
                self._store.drop(key)
            metrics.page_cache_looked_up("unreadable")
            return None
        return fetched, stored_at

    def _put(self, fetched: Fetched, now: float) -> None:
        try:
            evicted = self._store.write(_key(fetched.url), encoded(fetched, now))
        except OSError as e:  # a full or read-only disk, Redis down: the page was fetched all the same
            log.warning("the page cache could not keep %s: %s", fetched.url, e)
            return
        metrics.page_cache_stored(evicted, self._store.held_bytes)


_STORES: dict[PageCacheKind, Callable[[Settings], Store]] = {
    "disk": lambda settings: DiskStore(Path(settings.page_cache_dir), settings.page_cache_max_bytes),
    "memory": lambda settings: MemoryStore(settings.page_cache_max_bytes),
    "redis": lambda settings: RedisStore(settings.redis_url, settings.page_cache_max_bytes, settings.page_cache_ttl_s),
}


def open_cache(settings: Settings) -> PageCache | None:
    """The cache PAGE_CACHE asks for (None: off)."""
    if settings.page_cache == "off":
        return None
    store = _STORES[settings.page_cache](settings)
    metrics.page_cache_held(store.held_bytes)
    return PageCache(store, settings.default_max_age_ms)


def encoded(fetched: Fetched, stored_at: float) -> bytes:
    header = {"url": _unfragmented(fetched.url), "final_url": fetched.final_url, "status": fetched.status,
              "content_type": fetched.content_type, "charset": fetched.charset, "stored_at": stored_at}
    return _MAGIC + zlib.compress(json.dumps(header).encode() + b"\n" + fetched.body, _LEVEL)


def decoded(blob: bytes, url: str) -> tuple[Fetched, float]:
    """The page an entry of `url` holds and when it was stored; ValueError for anything else."""
    if not blob.startswith(_MAGIC):
        raise ValueError("not a page cache entry")
    try:
        head, _, body = zlib.decompress(blob[len(_MAGIC):]).partition(b"\n")
        header: dict[str, Any] = json.loads(head)
        stored_at = float(header["stored_at"])
        fetched = Fetched(url, str(header["final_url"]), header["status"], str(header["content_type"]), body,
                          header["charset"])
    except (zlib.error, KeyError, TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"unreadable entry ({type(e).__name__}: {e})") from None
    if header.get("url") != _unfragmented(url):
        raise ValueError(f"an entry of {header.get('url')}")
    return fetched, stored_at


def _key(url: str) -> str:
    return hashlib.sha256(_unfragmented(url).encode()).hexdigest()


def _unfragmented(url: str) -> str:
    """The URL a fetch asks for: the fragment never leaves the client."""
    return urldefrag(url).url
