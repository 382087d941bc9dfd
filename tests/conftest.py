"""Paths shared by every test, and the offline switches every model load must see."""

import os
import select
import socket
import threading
import uuid
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


class LoopbackListener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts and closes each at once: a parser that
    reaches for `url` (an entity, a DTD, an XInclude, a $ref) shows in `connections`, and fails fast."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.setblocking(False)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._count = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="loopback-listener", daemon=True)
        self._thread.start()

    @property
    def connections(self) -> int:
        """Every connection made so far: a connect() that returned is in the backlog, and is counted here even
        when the thread has not accepted it yet."""
        self._accept_waiting()
        return self._count

    def _serve(self) -> None:
        while not self._closed.is_set():
            select.select([self._socket], [], [], 0.05)
            self._accept_waiting()

    def _accept_waiting(self) -> None:
        with self._lock:
            while True:
                try:
                    connection, _ = self._socket.accept()
                except OSError:  # nothing waiting (BlockingIOError), or closed
                    return
                self._count += 1
                connection.close()

    def close(self) -> None:
        self._closed.set()
        self._thread.join()
        self._socket.close()


@pytest.fixture
def loopback_listener() -> Iterator[LoopbackListener]:
    """A listener on a free port of 127.0.0.1: `.url` to put in hostile input, `.connections` to count who came."""
    listener = LoopbackListener()
    try:
        yield listener
    finally:
        listener.close()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A local file holding a unique marker (its whole text): hostile input names it as file://…, and the marker
    must not come out of the parser."""
    path = tmp_path / "secret.txt"
    path.write_text(f"SECRET-{uuid.uuid4().hex}")
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in Path(item.path).parts:
            item.add_marker(pytest.mark.integration)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("network") and (why := index_unreachable()):
        pytest.skip(why)
