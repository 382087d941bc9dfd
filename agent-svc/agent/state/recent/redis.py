"""The Documents of recent scrapes in the Redis of REDIS_URL, so that GET /v2/scrape/{id} finds a scrape on
whichever replica the balancer picks. The same bounds as memory.py's, over all replicas: SCRAPE_KEEP_COUNT
Documents and SCRAPE_KEEP_BYTES of their JSON, the oldest going first, each kept SCRAPE_KEEP_S.

Each Document is a hash (its owner, its JSON) that expires with its time; a sorted set holds when each expires
(Redis's clock, so that replicas agree), a hash each one's size and a counter their sum. Keeping one is a Lua
script, atomic across replicas: it forgets the expired, checks the owner of a held id, and drops the oldest past
the bounds. Reading one is a single command.

Redis out of reach: a Document is not kept (a warning in the log; the scrape itself is answered), and a read is a
503 (SharedStateUnavailable) rather than a 404 that would say the scrape expired.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis.asyncio import Redis

from agent.errors import SharedStateUnavailable
from agent.state.recent import Kept, keepable
from agent.state.settings import RecentSettings
from agent.state.shared import Shared
from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
PREFIX = "wisp:scrapes:"
_ORDER, _SIZES, _BYTES = (f"{PREFIX}{name}" for name in ("order", "sizes", "bytes"))  # one of each per Redis
_DOCUMENT = f"{PREFIX}doc:"  # + scrapeId: a Document and its owner

# KEYS: order, sizes, bytes; ARGV: the Documents' prefix, the id, the owner ('' when keys are off), the JSON, its
# time to keep in ms, the most Documents, the most bytes. 1 when kept, 0 when another owner holds the id.
_PUT = """
local function forget(id)
    redis.call('ZREM', KEYS[1], id)
    redis.call('DECRBY', KEYS[3], tonumber(redis.call('HGET', KEYS[2], id) or '0'))
    redis.call('HDEL', KEYS[2], id)
    redis.call('DEL', ARGV[1] .. id)
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
    forget(id)
end
local key = ARGV[1] .. ARGV[2]
local held = redis.call('HGET', key, 'owner')
if held and held ~= ARGV[3] then
    return 0
end
forget(ARGV[2])  -- the owner's earlier Document of that id, or one whose key expired before the sweep saw it
local size = string.len(ARGV[4])
redis.call('HSET', key, 'owner', ARGV[3], 'document', ARGV[4])
redis.call('PEXPIRE', key, ARGV[5])
redis.call('HSET', KEYS[2], ARGV[2], size)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[2])
local bytes = redis.call('INCRBY', KEYS[3], size)
while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[6]) or bytes > tonumber(ARGV[7]) do
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)
    if #oldest == 0 then break end
    forget(oldest[1])
    bytes = tonumber(redis.call('GET', KEYS[3]))
end
return 1
"""


def redis_recent_scrapes(settings: RecentSettings, shared: Shared) -> RedisRecentScrapes:
    """The replicas' recent scrapes, bounded by SCRAPE_KEEP_COUNT, SCRAPE_KEEP_BYTES and SCRAPE_KEEP_S."""
    return RedisRecentScrapes(shared.redis, settings.scrape_keep_count, settings.scrape_keep_bytes,
                              settings.scrape_keep_s)


class RedisRecentScrapes:
    def __init__(self, redis: Redis, max_count: int, max_bytes: int, ttl_s: float) -> None:
        self.max_count, self.max_bytes, self.ttl_s = max_count, max_bytes, ttl_s
        self._redis = redis
        self._put = redis.register_script(_PUT)

    async def put(self, owner: str | None, document: dict[str, Any]) -> None:
        """Keep a scrape's Document under its scrapeId (when `keepable`), unless another client's Document holds
        the id; with Redis out of reach it is not kept, and the log says so."""
        if (new := keepable(document, self.max_count, self.max_bytes, self.ttl_s)) is None:
            return
        ttl_ms = max(1, round(self.ttl_s * 1000))
        try:
            await self._put([_ORDER, _SIZES, _BYTES], [_DOCUMENT, new.scrape_id, owner or "", new.encoded, ttl_ms,
                                                       self.max_count, self.max_bytes])
        except UNREACHABLE as e:
            log.warning("scrape %s is not kept for GET /v2/scrape/{id}: Redis cannot be reached (%s)",
                        new.scrape_id, e)

    async def get(self, scrape_id: str) -> Kept | None:
        """The kept scrape of that id, unless it has expired; SharedStateUnavailable when Redis cannot say."""
        try:
            owner, encoded = await self._redis.hmget(f"{_DOCUMENT}{scrape_id}", ["owner", "document"])
        except UNREACHABLE as e:
            raise SharedStateUnavailable(f"the recent scrapes (Redis) cannot be reached: {e}") from e
        if encoded is None:
            return None
        return Kept(owner.decode() or None, json.loads(encoded))
