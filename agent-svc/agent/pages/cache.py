"""The page cache: what fetches got, kept compressed, so that a request with Firecrawl's `maxAge` gets a copy
younger than that without the network (its Document says `cacheState: "hit"` and `cachedAt`).

A fetch is kept (final URL, status, content type, charset, body), not a Document: a hit is extracted again, so one
copy serves every format and extraction option. Only pages fetched whole are kept. Failures (timeouts, DNS, the
SSRF guard) are no page; an HTTP error status is often passing (429, 503), and kept it would hide the page's
recovery for up to maxAge: Firecrawl keeps them but serves an older 2xx copy first, which one entry per URL cannot.

Stores behind one interface (state/page_cache/), one registry line each: a directory (the default; processes on
one machine may share it), memory, or Redis (every replica's). Each holds at most PAGE_CACHE_MAX_BYTES of compressed
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
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

from agent import metrics
from agent.core.pages import CacheUse, Fetched
from agent.pages.settings import PageCacheKind, PageCacheSettings
from agent.state.page_cache import Store
from agent.state.page_cache.disk import DiskStore
from agent.state.page_cache.memory import MemoryStore
from agent.state.page_cache.redis import RedisStore

log = logging.getLogger(__name__)
_MAGIC = b"wisp-page/1\n"  # a file that does not start so is no entry of this format
# bench/page_cache.py on 40 offline-web pages (median 23 kB): level 6 packs them 3.8x in 0.37 ms a page, level 1
# 3.2x in 0.30 ms, level 9 3.8x in 0.66 ms; unpacking takes 0.08 ms at any level
_LEVEL = 6
# pages waiting to be written at once (each holds its body, up to FETCH_MAX_BYTES, in memory); past that, when the
# disk lags behind the fetches, a page is not kept rather than slowing its request or growing without bound
_MAX_WRITES = 32


Servable = Callable[[Fetched], Awaitable[bool]]  # whether a kept copy may be served now


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


_STORES: dict[PageCacheKind, Callable[[PageCacheSettings, str], Store]] = {
    "disk": lambda settings, _: DiskStore(Path(settings.page_cache_dir), settings.page_cache_max_bytes),
    "memory": lambda settings, _: MemoryStore(settings.page_cache_max_bytes),
    "redis": lambda settings, redis_url: RedisStore(redis_url, settings.page_cache_max_bytes,
                                                    settings.page_cache_ttl_s),
}


def open_cache(settings: PageCacheSettings, redis_url: str = "") -> PageCache | None:
    """The cache PAGE_CACHE asks for (None: off); `redis_url`: the replicas' shared Redis, for PAGE_CACHE=redis."""
    if settings.page_cache == "off":
        return None
    store = _STORES[settings.page_cache](settings, redis_url)
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
