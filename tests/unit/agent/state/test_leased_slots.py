"""Leased slots on a real redis-server: taken up to their number, a pause between takes, a lease that ends when
its holder stops renewing it, and one that lasts while it does. Pauses and leases run on Redis's clock, so the
tests read it rather than time their own steps."""

import asyncio

from redis.asyncio import Redis

from agent.state.leased_slots import FULL, LeasedSlots
from tests.waiting import redis_ms, until_redis_clock

PAUSE_MS = 2000  # long beside two takes in a row, however loaded the machine
LEASE_S = 2.0  # renewed every third of it: a renewal may come 1.3 s late before the lease ends


def test_slots_are_taken_up_to_their_number_and_given_back(redis_url: str) -> None:
    async def main() -> None:
        async with Redis.from_url(redis_url) as redis:
            slots = LeasedSlots(redis, lease_s=10)
            assert await slots.take("h", "a", 2) == (0, 1)
            assert await slots.take("h", "b", 2) == (0, 2)
            assert await slots.take("h", "c", 2) == (FULL, 2)
            await slots.give_back("h", "a")
            assert await slots.take("h", "c", 2) == (0, 2)
    asyncio.run(main())


def test_a_pause_holds_the_next_take(redis_url: str) -> None:
    async def main() -> None:
        async with Redis.from_url(redis_url) as redis:
            slots = LeasedSlots(redis, lease_s=10)
            before = await redis_ms(redis)
            assert await slots.take("h", "a", 4, "h:next", pause_ms=PAUSE_MS) == (0, 1)
            wait_ms, _ = await slots.take("h", "b", 4, "h:next")
            after = await redis_ms(redis)
            # what is left of the pause: all of it less what the two takes took, on Redis's clock
            assert wait_ms > 0 and PAUSE_MS - (after - before) <= wait_ms <= PAUSE_MS
            await until_redis_clock(redis, after + wait_ms, "the pause over")
            assert (await slots.take("h", "b", 4, "h:next"))[0] == 0
    asyncio.run(main())


def test_a_lease_ends_unless_its_holder_renews_it(redis_url: str) -> None:
    async def main() -> None:
        async with Redis.from_url(redis_url) as redis:
            slots = LeasedSlots(redis, lease_s=LEASE_S)
            await slots.take("kept", "a", 1)
            kept_ends = await redis.zscore("kept", "a")  # as first taken, before any renewal
            renewing = asyncio.create_task(slots.keep("kept", "a"))
            await slots.take("dropped", "a", 1)
            dropped_ends = await redis.zscore("dropped", "a")
            await until_redis_clock(redis, max(kept_ends, dropped_ends), "both first leases over")
            assert (await slots.take("kept", "b", 1))[0] == FULL
            assert (await slots.take("dropped", "b", 1))[0] == 0
            renewing.cancel()
    asyncio.run(main())
