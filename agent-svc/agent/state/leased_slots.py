"""Slots in Redis that replicas share, each held on a lease: a semaphore whose holders are tokens in a sorted set,
scored by when their lease ends on Redis's clock (the replicas' clocks may disagree). Taking a slot first drops the
leases that ended, so the slots of a replica that died holding them come back after one lease; a live holder
renews its lease every third of it (`keep`). Used by the per-host politeness of crawls (with a pause between
takes) and by the cap on costly requests.
"""

from __future__ import annotations

import asyncio
import logging

from redis.asyncio import Redis

from agent.state.unreachable import UNREACHABLE

log = logging.getLogger(__name__)
FULL = -1  # what `take` answers when every slot is held

_NOW_MS = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""

# KEYS: the holders, the next start; ARGV: token, slots, pause (ms), lease (ms). {0, holders}: the slot is taken;
# {ms, holders}: milliseconds until the pause the last take asked for is over; {-1, holders}: every slot is held.
_TAKE = _NOW_MS + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local holders = redis.call('ZCARD', KEYS[1])
if holders >= tonumber(ARGV[2]) then return {-1, holders} end
local next_start = tonumber(redis.call('GET', KEYS[2]) or '0')
if now < next_start then return {next_start - now, holders} end
local pause, lease = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease * 2)
if pause > 0 then redis.call('SET', KEYS[2], now + pause, 'PX', pause) end
return {0, holders + 1}
"""

# KEYS: the holders; ARGV: token, lease (ms). Extends a held token's lease, and the set's life.
_RENEW = _NOW_MS + """
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1]) == 1 then
    redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return 0
"""


class LeasedSlots:
    def __init__(self, redis: Redis, lease_s: float) -> None:
        self._redis, self._lease_ms = redis, max(1, round(lease_s * 1000))
        self._take = redis.register_script(_TAKE)
        self._renew = redis.register_script(_RENEW)

    async def take(self, holders: str, token: str, slots: int, pause_key: str | None = None, pause_ms: int = 0
                   ) -> tuple[int, int]:
        """(0, holders now) when `token` took a slot of `holders`; (ms to wait, holders) while the pause of
        `pause_key` runs; (FULL, holders) when `slots` are held. A take with `pause_ms` makes the next ones wait."""
        wait_ms, held = await self._take(keys=[holders, pause_key or f"{holders}:next"],
                                         args=[token, slots, pause_ms, self._lease_ms])
        return int(wait_ms), int(held)

    async def keep(self, holders: str, token: str) -> None:
        """Renew the token's lease every third of it, until cancelled; a renewal Redis refuses is logged (the
        lease may then end early: the slot frees a little soon, it never stays taken)."""
        while True:
            await asyncio.sleep(self._lease_ms / 3000)
            try:
                await self._renew(keys=[holders], args=[token, self._lease_ms])
            except UNREACHABLE as e:
                log.warning("could not renew a lease in %s: %s", holders, e)

    async def give_back(self, holders: str, token: str) -> None:
        await self._redis.zrem(holders, token)  # one command: atomic without a script
