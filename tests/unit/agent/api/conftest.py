"""A real redis-server for the tests of the limits counted in Redis (limits_redis.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from offline_web.redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The server's URL, emptied for each test (and running again if a test killed it)."""
    if redis_server.process is None or redis_server.process.poll() is not None:
        redis_server.start()
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    yield redis_server.url
