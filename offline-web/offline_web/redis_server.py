"""Debian's redis-server as a child process on loopback, for the tests and benchmarks of Wisp's shared state
(REDIS_URL): its data in a folder of its own, appended to disk on every write so that a server killed and
started again on the same folder comes back with the jobs it held, as a production Redis with AOF does."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from offline_web.processes import Service, free_port

REDIS_SERVER = "/usr/bin/redis-server"


class RedisServer(Service):
    """A redis-server on 127.0.0.1 only, no password, ready once it answers PING."""

    def __init__(self, workdir: Path, port: int | None = None, name: str = "redis") -> None:
        self.port = port or free_port()
        self.data_dir = workdir / name
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [shutil.which("redis-server") or REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port),
                   "--dir", str(self.data_dir), "--appendonly", "yes", "--appendfsync", "always",
                   "--save", "", "--protected-mode", "yes", "--daemonize", "no"]
        super().__init__(name, command, f"redis://127.0.0.1:{self.port}/0", workdir / f"{name}.log")

    def _healthy(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL, as a crash would: no shutdown save, only what the append-only file already holds."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
