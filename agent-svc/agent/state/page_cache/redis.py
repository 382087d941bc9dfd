"""The page cache's store in Redis (PAGE_CACHE=redis, on REDIS_URL): one cache for every replica, so that a page
fetched through one is a hit through the others, whichever the balancer picks.

Each entry is a string that expires PAGE_CACHE_TTL_S after it was written, and the store bounds itself to
PAGE_CACHE_MAX_BYTES: a sorted set holds each entry's last use (Redis's clock, so that replicas agree), a hash its
size, a counter their sum, and a write past the bound drops the least recently used entries. Each operation is one
Lua script, atomic across replicas. The bound does not lean on Redis's `maxmemory-policy`: the Redis of REDIS_URL
also holds the job queues, which an `allkeys-lru` policy would evict. An entry that expired (or that a `volatile-*`
policy evicted) is forgotten when it is next looked up or when it is the least recently used; until then its size
is still counted, so the bytes held are never more than the count.

Redis's errors come out as OSError, which the page cache takes for a store that failed: a lookup is a miss, a
write is skipped. The client waits at most `_TIMEOUT_S` and does not try again (said here, not left to redis-py's
defaults, which have changed between its versions), so that a Redis down or slow costs a request no more than a
fetch would; a connection that a restart of Redis closed is replaced when it is next taken from the pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

_PREFIX = "wisp:pages:"
_USED, _SIZES, _HELD = (f"{_PREFIX}{name}" for name in ("used", "sizes", "held"))  # one of each per Redis
_ENTRY = f"{_PREFIX}page:"  # + key: an entry
_TIMEOUT_S = 0.5  # a loopback or LAN GET of a page takes under a millisecond; a fetch, hundreds
# a lookup that records a use is a write, appended to the AOF and, with `appendfsync always` (the durability the
# job queues may ask), fsynced: bench/page_cache_shared.py measured 0.5 to 2.2 ms median on loopback (two runs on
# a loaded machine), against 0.13 to 0.15 for a lookup that writes nothing. A use recorded at most once a minute
# makes most lookups reads; the least recently used order is then a minute's
_TOUCH_AFTER_S = 60.0

# KEYS: used, sizes, held; ARGV[1]: the entries' prefix, ARGV[2]: the key
_FORGET = """
local function forget(key)  -- 1 when its entry was still there
    redis.call('ZREM', KEYS[1], key)
    redis.call('DECRBY', KEYS[3], tonumber(redis.call('HGET', KEYS[2], key) or '0'))
    redis.call('HDEL', KEYS[2], key)
    return redis.call('DEL', ARGV[1] .. key)
end
local function now()
    local time = redis.call('TIME')
    return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
"""
# ARGV[3]: how old (µs) a last use must be for a lookup to record a new one
_READ = _FORGET + """
local blob = redis.call('GET', ARGV[1] .. ARGV[2])
if blob then
    local at = now()
    if at - tonumber(redis.call('ZSCORE', KEYS[1], ARGV[2]) or '0') > tonumber(ARGV[3]) then
        redis.call('ZADD', KEYS[1], 'XX', at, ARGV[2])
    end
elseif redis.call('ZSCORE', KEYS[1], ARGV[2]) then
    forget(ARGV[2])  -- expired
end
return blob
"""
# ARGV[3]: the blob, ARGV[4]: its time to live in seconds, ARGV[5]: the bound in bytes; the entries evicted
_WRITE = _FORGET + """
local size = string.len(ARGV[3])
local before = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
redis.call('SET', ARGV[1] .. ARGV[2], ARGV[3], 'EX', ARGV[4])
redis.call('HSET', KEYS[2], ARGV[2], size)
redis.call('ZADD', KEYS[1], now(), ARGV[2])
local held = redis.call('INCRBY', KEYS[3], size - before)
local evicted = 0
while held > tonumber(ARGV[5]) do
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)
    if #oldest == 0 then break end
    evicted = evicted + forget(oldest[1])
    held = tonumber(redis.call('GET', KEYS[3]))
end
return {evicted, held}
"""
_DROP = _FORGET + "return forget(ARGV[2])"


class RedisStore:
    """Entries in the Redis at `url`, at most `max_bytes` of them, each kept `ttl_s` at most, a lookup recording
    an entry's use when the last one recorded is `touch_after_s` old; thread-safe."""

    def __init__(self, url: str, max_bytes: int, ttl_s: int, touch_after_s: float = _TOUCH_AFTER_S) -> None:
        self._max, self._ttl_s, self._touch_after_us = max_bytes, ttl_s, int(touch_after_s * 1_000_000)
        self._redis = redis.Redis.from_url(url, socket_timeout=_TIMEOUT_S, socket_connect_timeout=_TIMEOUT_S,
                                           retry=Retry(NoBackoff(), 0))
        self._read, self._write, self._drop = (self._redis.register_script(s) for s in (_READ, _WRITE, _DROP))
        self._held = 0
        with contextlib.suppress(OSError), _as_os_error():  # Redis down at start: counted at the first write
            self._held = int(self._redis.get(_HELD) or 0)

    @property
    def held_bytes(self) -> int:
        return self._held

    def read(self, key: str) -> bytes | None:
        with _as_os_error():
            return self._read([_USED, _SIZES, _HELD], [_ENTRY, key, self._touch_after_us])

    def write(self, key: str, blob: bytes) -> int:
        with _as_os_error():
            evicted, self._held = self._write([_USED, _SIZES, _HELD], [_ENTRY, key, blob, self._ttl_s, self._max])
        return evicted

    def drop(self, key: str) -> None:
        with _as_os_error():
            self._drop([_USED, _SIZES, _HELD], [_ENTRY, key])


@contextlib.contextmanager
def _as_os_error() -> Iterator[None]:
    """The page cache takes an OSError for a store that failed; Redis down, slow or out of memory is one."""
    try:
        yield
    except redis.RedisError as e:
        raise OSError(f"Redis: {e}") from e
