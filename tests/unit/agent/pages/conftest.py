"""The session's real redis-server (tests/conftest.py), emptied for each test of the page cache's Redis store."""

import pytest
import redis

from offline_web.redis_server import RedisServer


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's Redis, emptied: each test starts with no page kept."""
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    return redis_server.url
