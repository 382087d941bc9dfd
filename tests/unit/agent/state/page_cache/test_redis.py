"""The page cache's Redis store against a real redis-server: replicas share its entries, each entry expires, the
bound holds across replicas (least recently used first), and a Redis that is down or killed costs only the cache."""

import asyncio
import time
from pathlib import Path

import redis

from agent.core.pages import CacheUse
from agent.pages.cache import PageCache, open_cache
from agent.pages.settings import PageCacheSettings
from agent.state.page_cache.redis import RedisStore
from offline_web.processes import free_port
from offline_web.redis_server import RedisServer

from ...pages.test_cache import HTML, URL, Web, through
from ...test_metrics import Moved

HOUR_S = 3600


def raw(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


def test_a_page_kept_through_one_replica_is_a_hit_through_another(redis_url: str) -> None:
    one, other = (PageCache(RedisStore(redis_url, 10**8, HOUR_S), 0) for _ in range(2))
    web = Web()
    assert through(one, URL, CacheUse(60_000), web.fetch).cache_state == "miss"
    second = through(other, URL, CacheUse(60_000), web.fetch)
    assert second.cache_state == "hit" and second.body == HTML and second.cached_at is not None and web.count == 1


def test_open_cache_makes_the_redis_store_of_redis_url(redis_url: str) -> None:
    cache = open_cache(PageCacheSettings(page_cache="redis", page_cache_max_bytes=10**7), redis_url)
    assert cache is not None
    web = Web()
    through(cache, URL, CacheUse(60_000), web.fetch)
    assert through(cache, URL, CacheUse(60_000), web.fetch).cache_state == "hit" and web.count == 1
    assert raw(redis_url).keys("wisp:pages:page:*")


def test_an_entry_expires_after_its_time_to_live_and_its_bytes_are_no_longer_counted(redis_url: str) -> None:
    store, client = RedisStore(redis_url, 10**8, 1), raw(redis_url)
    store.write("gone", b"x" * 1000)
    assert 0 < client.pttl("wisp:pages:page:gone") <= 1000
    RedisStore(redis_url, 10**8, HOUR_S).write("kept", b"y" * 10)
    assert HOUR_S - 5 < client.ttl("wisp:pages:page:kept") <= HOUR_S
    time.sleep(1.1)
    assert store.read("gone") is None and store.read("kept") == b"y" * 10
    assert int(client.get("wisp:pages:held") or 0) == 10 and client.zcard("wisp:pages:used") == 1
    assert client.hkeys("wisp:pages:sizes") == [b"kept"]


def test_the_bound_holds_across_replicas_least_recently_used_first(redis_url: str) -> None:
    one, other = (RedisStore(redis_url, 3500, HOUR_S, touch_after_s=0) for _ in range(2))
    client = raw(redis_url)
    one.write("0", b"x" * 1000)
    other.write("1", b"x" * 1000)
    one.write("2", b"x" * 1000)
    assert other.read("0") == b"x" * 1000  # 0 is used again: 1 is the oldest
    assert other.write("3", b"x" * 1000) == 1
    assert [key for key in "0123" if one.read(key)] == ["0", "2", "3"]
    assert other.held_bytes == 3000 == int(client.get("wisp:pages:held") or 0)
    one.write("0", b"x" * 500)  # a new copy counts its own size, not both
    assert one.held_bytes == 2500 and client.hlen("wisp:pages:sizes") == 3
    assert one.write("big", b"x" * 4000) >= 1 and one.held_bytes <= 3500  # larger than the bound: not kept


def test_a_lookup_records_a_use_only_when_the_last_one_recorded_is_old_enough(redis_url: str) -> None:
    """A lookup that records nothing writes nothing: no AOF append, no fsync."""
    client = raw(redis_url)
    RedisStore(redis_url, 10**8, HOUR_S).write("page", b"x")
    written = client.zscore("wisp:pages:used", "page")
    aof = client.info("persistence")["aof_current_size"]
    assert RedisStore(redis_url, 10**8, HOUR_S, touch_after_s=60).read("page") == b"x"
    assert client.zscore("wisp:pages:used", "page") == written and client.info("persistence")["aof_current_size"] == aof
    time.sleep(0.01)
    assert RedisStore(redis_url, 10**8, HOUR_S, touch_after_s=0.005).read("page") == b"x"
    assert client.zscore("wisp:pages:used", "page") > written


def test_an_entry_that_does_not_read_back_is_unreadable_and_dropped(redis_url: str) -> None:
    store, client = RedisStore(redis_url, 10**8, HOUR_S), raw(redis_url)
    cache = PageCache(store, 0)
    asyncio.run(cache.put(Web().fetched))
    (entry,) = client.keys("wisp:pages:page:*")
    client.set(entry, b"\x00\xff not a page", keepttl=True)
    with Moved("wisp_agent_page_cache_lookups_total", result="unreadable") as unreadable:
        assert asyncio.run(cache.get(URL, 60_000)) is None
    assert unreadable.by == 1 and not client.exists(entry) and int(client.get("wisp:pages:held") or 0) == 0


def test_a_killed_redis_makes_lookups_miss_and_writes_skipped_then_serves_again(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    with server:
        cache, web = PageCache(RedisStore(server.url, 10**8, HOUR_S), 0), Web()
        through(cache, URL, CacheUse(60_000), web.fetch)
        server.kill()
        started = time.monotonic()
        with Moved("wisp_agent_page_cache_lookups_total", result="unavailable") as unavailable, \
                Moved("wisp_agent_page_cache_stores_total") as stores:
            fetched = through(cache, URL, CacheUse(60_000), web.fetch)
        assert time.monotonic() - started < 1  # no wait for a Redis that refuses connections
        assert fetched.cache_state == "miss" and fetched.body == HTML and web.count == 2
        assert unavailable.by == 1 and stores.by == 0
        server.start()  # the append-only file brings back what it held
        assert through(cache, URL, CacheUse(60_000), web.fetch).cache_state == "hit" and web.count == 2


def test_a_redis_down_at_start_is_a_cache_that_misses() -> None:
    cache, web = PageCache(RedisStore(f"redis://127.0.0.1:{free_port()}/0", 10**8, HOUR_S), 0), Web()
    for _ in range(2):
        assert through(cache, URL, CacheUse(60_000), web.fetch).cache_state == "miss"
    assert web.count == 2
