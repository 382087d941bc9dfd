"""Start an HTTP service as a child process on loopback and wait until its health check answers; find the
processes a service left behind."""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# looked up before any fork: the child between fork and exec should only call it
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """A child process serving HTTP at `url`; ready once `url + health_path` answers 200.

    It runs in a session of its own (a Ctrl-C meant for its parent does not reach it; its session id names
    every process it starts) and gets SIGTERM when the thread that started it ends, however that ends:
    start services from a thread that outlives them (the main one).
    """

    def __init__(self, name: str, command: list[str], url: str, log_path: Path,
                 env: dict[str, str] | None = None, cwd: Path | None = None, health_path: str = "/healthz") -> None:
        self.name = name
        self.command = command
        self.url = url
        self.log_path = log_path
        self.env = {**os.environ, **(env or {})}
        self.cwd = cwd
        self.health_path = health_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60.0) -> Service:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command, env=self.env, cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=ending_with_this_process(),
            )
        try:
            self._wait_ready(timeout_s)
        except BaseException:  # a Ctrl-C while it starts too: `with` never gets to stop it
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            if self._healthy():
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} was not ready within {timeout_s} s:\n{self.log_tail()}")

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + self.health_path, timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @contextmanager
    def started(self, timeout_s: float) -> Iterator[Service]:
        """Start with a longer wait than the default, and stop on exit."""
        try:
            yield self.start(timeout_s)
        finally:
            self.stop()

    def __enter__(self) -> Service:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ending_with_this_process() -> Callable[[], None] | None:
    """A `preexec_fn` that makes a child end when this process does (None where Linux's prctl is missing)."""
    return functools.partial(_end_with_parent, os.getpid()) if _PRCTL else None


def _end_with_parent(parent: int) -> None:
    """In the child, before exec: Linux sends it SIGTERM when its parent ends, SIGKILL included, so that no
    service outlives the harness or launcher that started it (SIGTERM: it still shuts down cleanly)."""
    assert _PRCTL is not None
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent ended before the request took hold
        os._exit(1)


@dataclass(frozen=True)
class Proc:
    """One process as /proc shows it; `started` (clock ticks after boot) tells a reused pid apart."""

    pid: int
    ppid: int
    sid: int
    started: int
    cmdline: str


def processes() -> list[Proc]:
    """Every live process (zombies are dead: only their exit status is left)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # the command name in parentheses may hold spaces: the fields start after its last ")"
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue  # it ended while we looked
        if fields[0] != "Z":
            found.append(Proc(int(entry.name), int(fields[1]), int(fields[3]), int(fields[19]), cmdline))
    return found


def family(root: int) -> set[Proc]:
    """`root`, its descendants, and every process in the sessions of any of them but the caller's own."""
    running = processes()
    members = {p for p in running if p.pid == root}
    while True:
        pids = {p.pid for p in members}
        sessions = {p.sid for p in members} - {os.getsid(0)}
        grown = members | {p for p in running if p.ppid in pids or p.sid in sessions}
        if grown == members:
            return members
        members = grown


def survivors(members: set[Proc]) -> set[Proc]:
    """The processes of `members` still alive, and any process now in one of their sessions (a child started
    since, or one reparented to init once its parent ended)."""
    sessions = {p.sid for p in members} - {os.getsid(0)}
    known = {(p.pid, p.started) for p in members}
    return {p for p in processes() if (p.pid, p.started) in known or p.sid in sessions}


def wait_gone(members: set[Proc], timeout_s: float = 15.0) -> set[Proc]:
    """Wait up to `timeout_s` for every process of `members` to end; return those that did not."""
    deadline = time.monotonic() + timeout_s
    while (left := survivors(members)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
