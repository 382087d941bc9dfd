"""The page cache on its real stores (a temporary directory, memory, a real redis-server): what a copy keeps, maxAge
and storeInCache, least-recently-used eviction by size, entries that do not read back, and writers at once."""

import asyncio
import errno
import os
import threading
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from agent.core.pages import CacheUse, Fetched, PageError
from agent.pages.cache import PageCache, decoded, encoded, open_cache
from agent.pages.settings import PageCacheSettings
from agent.state.page_cache import Store
from agent.state.page_cache.disk import DiskStore
from agent.state.page_cache.memory import MemoryStore
from agent.state.page_cache.redis import RedisStore

from ..test_metrics import Moved, value

URL = "https://docs.test/guide.html"
HTML = ("<html><head><title>Guide</title></head><body>"
        + "<p>Write-ahead logging keeps readers and the writer apart.</p>" * 400 + "</body></html>").encode()


class Clock:
    def __init__(self) -> None:
        self.now = 1_780_000_000.0

    def __call__(self) -> float:
        return self.now


def page(url: str = URL, body: bytes = HTML) -> Fetched:
    return Fetched(url, url.replace("http://", "https://"), 200, "text/html", body, "utf-8")


@pytest.fixture(params=["disk", "memory", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[int], Store]:
    def store(max_bytes: int) -> Store:
        match request.param:
            case "disk":
                return DiskStore(tmp_path / "pages", max_bytes)
            case "memory":
                return MemoryStore(max_bytes)
        return RedisStore(request.getfixturevalue("redis_url"), max_bytes, 3600, touch_after_s=0)
    return store


class Web:
    """What `through` would fetch, counting the fetches."""

    def __init__(self, fetched: Fetched | None = None) -> None:
        self.fetched, self.count = fetched or page(), 0

    async def fetch(self) -> Fetched:
        self.count += 1
        return Fetched(**self.fetched.__dict__)


async def anywhere(_: Fetched) -> bool:
    return True


def through(cache: PageCache, url: str, cache_use: CacheUse, fetch: Callable[[], Awaitable[Fetched]]) -> Fetched:
    """A request through the cache, and the cache's writes done (they outlive the request)."""
    async def request() -> Fetched:
        fetched = await cache.through(url, cache_use, fetch, anywhere)
        await cache.drain()
        return fetched
    return asyncio.run(request())


def test_a_copy_keeps_what_the_fetch_got_compressed() -> None:
    blob = encoded(page("http://docs.test/guide.html"), 1_780_000_000.5)
    assert len(blob) * 4 < len(HTML)  # repetitive HTML packs far below its size
    kept, stored_at = decoded(blob, "http://docs.test/guide.html#part-2")  # the fragment is never fetched
    assert stored_at == 1_780_000_000.5 and kept.body == HTML and kept.status == 200
    assert (kept.url, kept.final_url) == ("http://docs.test/guide.html#part-2", "https://docs.test/guide.html")
    assert kept.content_type == "text/html" and kept.charset == "utf-8" and kept.ok


def test_a_copy_younger_than_max_age_is_served_and_an_older_one_is_not(make_store: Callable[[int], Store]
                                                                      ) -> None:
    clock, web = Clock(), Web()
    cache = PageCache(make_store(10_000_000), 0, clock)

    def scrape(max_age_ms: int) -> Fetched:
        return through(cache, URL, CacheUse(max_age_ms), web.fetch)

    first = scrape(60_000)
    assert web.count == 1 and first.cache_state == "miss" and first.cached_at is None
    clock.now += 59
    with Moved("wisp_agent_page_cache_lookups_total", result="hit") as hits:
        second = scrape(60_000)
    assert web.count == 1 and hits.by == 1 and second.cache_state == "hit" and second.body == HTML
    assert second.cached_at is not None and second.cached_at.timestamp() == clock.now - 59
    with Moved("wisp_agent_page_cache_lookups_total", result="expired") as expired:
        third = scrape(58_000)
    assert web.count == 2 and expired.by == 1 and third.cache_state == "miss"


def test_max_age_zero_always_fetches_stores_and_says_nothing_of_the_cache() -> None:
    web = Web()
    cache = PageCache(MemoryStore(10_000_000), 0, Clock())
    for _ in range(2):
        fetched = through(cache, URL, CacheUse(0), web.fetch)
        assert fetched.cache_state is None and fetched.cached_at is None
    assert web.count == 2
    assert through(cache, URL, CacheUse(1000), web.fetch).cache_state == "hit"  # it was kept


def test_a_request_without_max_age_takes_the_services_default() -> None:
    web = Web()
    cache = PageCache(MemoryStore(10_000_000), 5000, Clock())
    through(cache, URL, CacheUse(), web.fetch)
    assert through(cache, URL, CacheUse(), web.fetch).cache_state == "hit" and web.count == 1
    assert through(cache, URL, CacheUse(0), web.fetch).cache_state is None and web.count == 2


def test_store_in_cache_false_keeps_nothing_but_still_reads() -> None:
    web = Web()
    cache = PageCache(MemoryStore(10_000_000), 0, Clock())
    with Moved("wisp_agent_page_cache_stores_total") as stores:
        through(cache, URL, CacheUse(60_000, store=False), web.fetch)
        through(cache, URL, CacheUse(60_000, store=False), web.fetch)
    assert web.count == 2 and stores.by == 0
    through(cache, URL, CacheUse(0), web.fetch)  # another request keeps it
    assert through(cache, URL, CacheUse(60_000, store=False), web.fetch).cache_state == "hit"
    assert web.count == 3


def test_failures_and_error_statuses_are_not_kept() -> None:
    cache = PageCache(MemoryStore(10_000_000), 0, Clock())
    for failed in (Fetched(URL, URL, 503, "text/html", error=PageError("http", "HTTP 503")),
                   Fetched(URL, URL, error=PageError("timeout", "still loading at the deadline"))):
        web = Web(failed)
        through(cache, URL, CacheUse(60_000), web.fetch)
        assert through(cache, URL, CacheUse(60_000), web.fetch).cache_state == "miss" and web.count == 2


def test_the_least_recently_used_pages_go_first_to_stay_within_the_bound(make_store: Callable[[int], Store]
                                                                         ) -> None:
    size = len(encoded(page("https://docs.test/0"), 0))
    store = make_store(size * 3 + size // 2)  # room for three
    cache = PageCache(store, 0, Clock())
    for n in range(3):
        asyncio.run(cache.put(page(f"https://docs.test/{n}")))
        time.sleep(0.02)  # a disk entry's last use is its mtime
    assert asyncio.run(cache.get("https://docs.test/0", 60_000)) is not None  # 0 is used again: 1 is the oldest
    time.sleep(0.02)
    with Moved("wisp_agent_page_cache_evictions_total") as evictions:
        asyncio.run(cache.put(page("https://docs.test/3")))
    kept = {n for n in range(4) if asyncio.run(cache.get(f"https://docs.test/{n}", 60_000))}
    assert 1 not in kept and {0, 3} <= kept and evictions.by >= 1
    assert store.held_bytes <= size * 3 + size // 2


def test_bytes_held_are_reported_and_a_disk_cache_counts_what_it_finds_at_start(tmp_path: Path) -> None:
    cache = open_cache(PageCacheSettings(page_cache="disk", page_cache_dir=str(tmp_path / "pages"),
                                page_cache_max_bytes=10_000_000))
    assert cache is not None
    asyncio.run(cache.put(page()))
    held = sum(f.stat().st_size for f in (tmp_path / "pages").iterdir())
    assert held > 0 and value("wisp_agent_page_cache_bytes") == held
    reopened = DiskStore(tmp_path / "pages", 10_000_000)
    assert reopened.held_bytes == held
    assert open_cache(PageCacheSettings(page_cache="off", page_cache_dir=str(tmp_path / "unused"))) is None
    assert not (tmp_path / "unused").exists()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "another URL's", "headless"])
def test_an_entry_that_does_not_read_back_is_a_miss_and_is_dropped(tmp_path: Path, damage: str) -> None:
    directory = tmp_path / "pages"
    cache = PageCache(DiskStore(directory, 10_000_000), 0, Clock())
    asyncio.run(cache.put(page()))
    (entry,) = directory.iterdir()
    match damage:
        case "garbage":
            entry.write_bytes(b"\x00\xff not a page")
        case "truncated":
            entry.write_bytes(entry.read_bytes()[:-100])
        case "headless":  # the format's start, then a header without the URL
            header = b'{"final_url": "x", "status": 200, "content_type": "text/html", "charset": null, "stored_at": 1}'
            entry.write_bytes(entry.read_bytes()[:12] + zlib.compress(header + b"\n<p>"))
        case _:
            entry.write_bytes(encoded(page("https://elsewhere.test/"), Clock()()))
    with Moved("wisp_agent_page_cache_lookups_total", result="unreadable") as unreadable:
        assert asyncio.run(cache.get(URL, 60_000)) is None
    assert unreadable.by == 1 and not entry.exists()
    web = Web()
    assert through(cache, URL, CacheUse(60_000), web.fetch).cache_state == "miss" and web.count == 1


class FullDisk(MemoryStore):
    def write(self, key: str, blob: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class BrokenDisk(MemoryStore):
    def read(self, key: str) -> bytes | None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_a_cache_that_cannot_write_costs_only_itself() -> None:
    web = Web()
    fetched = through(PageCache(FullDisk(10_000_000), 0, Clock()), URL, CacheUse(60_000), web.fetch)
    assert fetched.body == HTML and fetched.cache_state == "miss" and web.count == 1


def test_a_cache_that_cannot_read_is_counted_unavailable_and_the_page_fetched() -> None:
    web = Web()
    with Moved("wisp_agent_page_cache_lookups_total", result="unavailable") as unavailable:
        fetched = through(PageCache(BrokenDisk(10_000_000), 0, Clock()), URL, CacheUse(60_000), web.fetch)
    assert fetched.body == HTML and fetched.cache_state == "miss" and web.count == 1 and unavailable.by == 1


def test_concurrent_requests_and_two_processes_on_one_directory_keep_every_entry_whole(tmp_path: Path) -> None:
    """Many requests of one process at once (the event loop's threads), and a second store on the same directory
    (another process): entries are replaced whole, and each store stays within its bound."""
    directory, bodies = tmp_path / "pages", {n: HTML + f"<!-- {n} -->".encode() for n in range(12)}
    size = len(encoded(page("https://docs.test/0", bodies[0]), 0))
    mine, other = DiskStore(directory, size * 8), DiskStore(directory, size * 8)
    cache, other_cache = PageCache(mine, 0, Clock()), PageCache(other, 0, Clock())

    async def requests() -> None:
        await asyncio.gather(*(cache.put(page(f"https://docs.test/{n % 12}", bodies[n % 12])) for n in range(120)),
                             *(cache.get(f"https://docs.test/{n % 12}", 60_000) for n in range(120)))

    async def other_process() -> None:
        for n in range(120):
            await other_cache.put(page(f"https://docs.test/{n % 12}", bodies[n % 12]))

    writer = threading.Thread(target=asyncio.run, args=(other_process(),))
    writer.start()
    asyncio.run(requests())
    writer.join()
    assert mine.held_bytes <= size * 8 and other.held_bytes <= size * 8
    for entry in directory.iterdir():
        assert entry.suffix == ".page"  # no temporary file left behind
    for n in range(12):
        kept = asyncio.run(cache.get(f"https://docs.test/{n}", 60_000))
        assert kept is None or kept.body == bodies[n]
    assert any(asyncio.run(cache.get(f"https://docs.test/{n}", 60_000)) for n in range(12))


class SlowDisk(MemoryStore):
    """A store whose writes wait until `free` is set."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(max_bytes)
        self.free = threading.Event()

    def write(self, key: str, blob: bytes) -> int:
        assert self.free.wait(10)
        return super().write(key, blob)


def test_a_request_does_not_wait_for_its_page_to_be_written_and_its_copy_serves_meanwhile() -> None:
    store, web = SlowDisk(10_000_000), Web()
    cache = PageCache(store, 0, Clock())

    async def requests() -> tuple[Fetched, Fetched]:
        first = await asyncio.wait_for(cache.through(URL, CacheUse(60_000), web.fetch, anywhere), 2)
        second = await cache.through(URL + "#usage", CacheUse(60_000), web.fetch, anywhere)
        assert store.held_bytes == 0  # still being written
        store.free.set()
        await cache.drain()
        return first, second

    try:
        first, second = asyncio.run(requests())
    finally:
        store.free.set()
    assert (first.cache_state, second.cache_state, web.count) == ("miss", "hit", 1)
    assert second.url == URL + "#usage" and second.body == HTML and second.cached_at is not None
    assert store.held_bytes > 0 and asyncio.run(cache.get(URL, 60_000)) is not None


def test_pages_past_the_writes_waiting_are_not_kept_and_shutdown_drains_the_others() -> None:
    store = SlowDisk(100_000_000)
    cache = PageCache(store, 0, Clock())

    async def requests() -> None:
        for n in range(33):
            url = f"https://docs.test/{n}"
            await cache.through(url, CacheUse(0), Web(page(url)).fetch, anywhere)
        store.free.set()
        await cache.drain()

    with Moved("wisp_agent_page_cache_skipped_total") as skipped, \
            Moved("wisp_agent_page_cache_stores_total") as stored:
        try:
            asyncio.run(requests())
        finally:
            store.free.set()
    assert (skipped.by, stored.by) == (1, 32)
    assert asyncio.run(cache.get("https://docs.test/32", 60_000)) is None
    assert asyncio.run(cache.get("https://docs.test/31", 60_000)) is not None
