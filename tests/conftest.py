"""Paths shared by every test, and the offline switches every model load must see."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from offline_web.redis_server import RedisServer
from tests.network import index_unreachable

TESTS = Path(__file__).parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"

# no model hub is reachable here: a hub name must fail at once, not after network timeouts
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def session_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on loopback for the tests of what replicas share."""
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_server(session_redis: RedisServer) -> RedisServer:
    """The session's Redis, running: a test before may have killed it."""
    if session_redis.process is None or session_redis.process.poll() is not None:
        session_redis.start()
    return session_redis


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's Redis, running and emptied."""
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushdb()
    return redis_server.url


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in Path(item.path).parts:
            item.add_marker(pytest.mark.integration)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("network") and (why := index_unreachable()):
        pytest.skip(why)
