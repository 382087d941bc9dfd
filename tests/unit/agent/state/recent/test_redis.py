"""The replicas' recent scrapes on a real redis-server: a Document kept through one replica is found through
another, until its time is up; the count and byte bounds and the owner check hold across replicas, however their
writes interleave; Redis out of reach keeps nothing on a scrape and is a 503 on a read."""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import pytest
import redis
from redis.asyncio import Redis

from agent.errors import SharedStateUnavailable
from agent.state.recent.redis import RedisRecentScrapes
from tests.waiting import until, until_redis_clock

from .test_memory import ID, document, size

BYTES, ORDER = "wisp:scrapes:bytes", "wisp:scrapes:order"
UNREACHABLE = "redis://127.0.0.1:1/0"


def replicas(url: str, steps: Callable[[RedisRecentScrapes, RedisRecentScrapes], Awaitable[None]],
             max_count: int = 10, max_bytes: int = 10_000, ttl_s: float = 60) -> None:
    """Two replicas' recent scrapes on the Redis at `url`, each with a client of its own."""
    async def main() -> None:
        clients = [Redis.from_url(url, socket_connect_timeout=1) for _ in range(2)]
        try:
            await steps(*(RedisRecentScrapes(client, max_count, max_bytes, ttl_s) for client in clients))
        finally:
            for client in clients:
                await client.aclose()
    asyncio.run(main())


def held_bytes(url: str) -> int:
    with redis.Redis.from_url(url) as client:
        return int(client.get(BYTES) or 0)


async def found(recent: RedisRecentScrapes, *numbers: int) -> list[bool]:
    return [await recent.get(ID.format(n)) is not None for n in numbers]


def test_a_document_kept_through_one_replica_is_found_through_the_other_until_its_time_is_up(redis_url: str) -> None:
    async def steps(one: RedisRecentScrapes, other: RedisRecentScrapes) -> None:
        await one.put("key:a", document(1))
        await other.put(None, document(2))  # keys off: everyone's
        kept, keyless = await other.get(ID.format(1)), await one.get(ID.format(2))
        assert kept.owner == "key:a" and kept.document == document(1)
        assert keyless.owner is None and keyless.document == document(2)
        assert await one.get(ID.format(3)) is None
        async with Redis.from_url(redis_url) as client:  # their time is up on Redis's clock, which keeps it
            ends = max(score for _, score in await client.zrange(ORDER, 0, -1, withscores=True))
            await until_redis_clock(client, ends, "both Documents' time up")
        async def gone() -> bool:
            return await found(other, 1, 2) == [False, False]
        await until(gone, "both Documents gone")
        await one.put("key:b", document(1))  # the expired one of that id is no longer key:a's
        assert (await other.get(ID.format(1))).owner == "key:b"
    replicas(redis_url, steps, ttl_s=2)  # long beside two puts and three gets, however loaded the machine
    assert held_bytes(redis_url) == size(document(1))  # the expired ones gave their bytes back


def test_the_oldest_go_first_past_the_count_whichever_replica_kept_them(redis_url: str) -> None:
    async def steps(one: RedisRecentScrapes, other: RedisRecentScrapes) -> None:
        await one.put("key:a", document(1))
        await other.put("key:a", document(2))
        await one.put("key:a", document(3))
        assert await found(other, 1, 2, 3) == [False, True, True]
    replicas(redis_url, steps, max_count=2)


def test_the_oldest_go_first_past_the_bytes_whichever_replica_kept_them(redis_url: str) -> None:
    async def steps(one: RedisRecentScrapes, other: RedisRecentScrapes) -> None:
        await other.put("key:a", document(1))
        await one.put("key:a", document(2))
        await other.put("key:a", document(3))
        assert await found(one, 1, 2, 3) == [False, True, True]
    replicas(redis_url, steps, max_bytes=2 * size(document(1)))
    assert held_bytes(redis_url) == 2 * size(document(1))


def test_another_clients_id_is_not_taken_over_on_any_replica_and_the_owner_may_replace_it(redis_url: str) -> None:
    async def steps(one: RedisRecentScrapes, other: RedisRecentScrapes) -> None:
        await one.put("key:a", document(1, "mine"))
        await other.put("key:b", document(1, "theirs"))
        await other.put(None, document(1, "keyless"))  # keyless is not a wildcard owner either
        assert (await other.get(ID.format(1))).document["markdown"] == "mine"
        await other.put("key:a", document(1, "again"))
        assert (await one.get(ID.format(1))).document["markdown"] == "again"
    replicas(redis_url, steps)
    assert held_bytes(redis_url) == size(document(1, "again"))  # the replaced one's bytes were given back


def test_what_the_bounds_refuse_is_not_sent_to_redis(redis_url: str) -> None:
    def nothing_kept(**bounds: float) -> None:
        async def steps(one: RedisRecentScrapes, _: RedisRecentScrapes) -> None:
            await one.put("key:a", document(1, "x" * 100))
            await one.put("key:a", {"markdown": "no id", "metadata": {}})
        replicas(redis_url, steps, **bounds)
        with redis.Redis.from_url(redis_url) as client:
            assert client.dbsize() == 0, bounds

    nothing_kept(ttl_s=0)  # SCRAPE_KEEP_S=0
    nothing_kept(max_count=0)  # SCRAPE_KEEP_COUNT=0
    nothing_kept(max_bytes=size(document(1)))  # larger than the whole budget


def test_writes_of_both_replicas_interleaved_keep_the_bounds_and_the_byte_count(redis_url: str) -> None:
    documents = [document(n, "p" * (n * 37 % 200)) for n in range(10)] + [
        {**document(0), "metadata": {"scrapeId": f"0190a0a0-0000-7000-8000-0000000001{n:02d}"}} for n in range(40)]

    async def steps(one: RedisRecentScrapes, other: RedisRecentScrapes) -> None:
        await asyncio.gather(*((one if n % 2 else other).put("key:a", doc) for n, doc in enumerate(documents)))
    replicas(redis_url, steps, max_count=7, max_bytes=5 * size(document(1, "p" * 100)))
    with redis.Redis.from_url(redis_url) as client:
        ids = [i.decode() for i in client.zrange(ORDER, 0, -1)]
        kept = [client.hget(f"wisp:scrapes:doc:{i}", "document") for i in ids]
        assert 0 < len(ids) <= 7 and all(kept)
        assert int(client.get(BYTES)) == sum(len(doc) for doc in kept) <= 5 * size(document(1, "p" * 100))
        assert len(client.keys("wisp:scrapes:doc:*")) == len(ids) == client.hlen("wisp:scrapes:sizes")


def test_redis_out_of_reach_keeps_nothing_and_a_read_is_a_503(caplog: pytest.LogCaptureFixture) -> None:
    async def steps(one: RedisRecentScrapes, _: RedisRecentScrapes) -> None:
        started = time.monotonic()
        with caplog.at_level(logging.WARNING):
            await one.put("key:a", document(1))  # never fails the scrape
        assert time.monotonic() - started < 5
        assert ID.format(1) in caplog.text and "not kept" in caplog.text
        with pytest.raises(SharedStateUnavailable):
            await one.get(ID.format(1))
    replicas(UNREACHABLE, steps)
