"""A real redis-server on loopback for the page cache's Redis store, one per test module."""

from collections.abc import Iterator

import pytest
import redis

from offline_web.redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    with server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The module's Redis, emptied: each test starts with no page kept."""
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    return redis_server.url
