"""Leased slots on a real redis-server: taken up to their number, a pause between takes, a lease that ends when
its holder stops renewing it, and one that lasts while it does."""

import asyncio

from redis.asyncio import Redis

from agent.state.leased_slots import FULL, LeasedSlots


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
            assert await slots.take("h", "a", 4, "h:next", pause_ms=300) == (0, 1)
            wait_ms, _ = await slots.take("h", "b", 4, "h:next")
            assert 200 < wait_ms <= 300
            await asyncio.sleep(wait_ms / 1000)
            assert (await slots.take("h", "b", 4, "h:next"))[0] == 0
    asyncio.run(main())


def test_a_lease_ends_unless_its_holder_renews_it(redis_url: str) -> None:
    async def main() -> None:
        async with Redis.from_url(redis_url) as redis:
            slots = LeasedSlots(redis, lease_s=0.3)
            await slots.take("kept", "a", 1)
            renewing = asyncio.create_task(slots.keep("kept", "a"))
            await slots.take("dropped", "a", 1)
            await asyncio.sleep(0.8)
            assert (await slots.take("kept", "b", 1))[0] == FULL
            assert (await slots.take("dropped", "b", 1))[0] == 0
            renewing.cancel()
    asyncio.run(main())
