"""Services end with whatever started them, and the /proc walk finds every process a service left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from offline_web.processes import Service, family, free_port, survivors, wait_gone


def test_family_follows_children_and_the_session_after_the_parent_is_gone() -> None:
    shell = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while len(members := family(shell.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {p.cmdline for p in members} == {"sh -c sleep 30 & sleep 30 & wait", "sleep 30"}
        os.kill(shell.pid, signal.SIGKILL)
        shell.wait()
        orphans = survivors(members)
        assert len(orphans) == 2 and all(p.cmdline == "sleep 30" for p in orphans)  # reparented, same session
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
    assert not wait_gone(members, timeout_s=5)


def test_family_leaves_out_the_callers_own_session() -> None:
    child = subprocess.Popen(["sleep", "30"])  # in our session
    try:
        assert {p.pid for p in family(child.pid)} == {child.pid}
    finally:
        child.kill()
        child.wait()


def test_a_service_ends_when_what_started_it_is_killed(tmp_path: Path) -> None:
    port = free_port()
    launcher = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from offline_web.processes import Service
        service = Service("web", [sys.executable, "-m", "http.server", "-b", "127.0.0.1", "{port}"],
                          "http://127.0.0.1:{port}", Path("{tmp_path}") / "web.log", cwd=Path("{tmp_path}"),
                          health_path="/").start()
        print(service.process.pid, flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert launcher.stdout is not None
        served = int(launcher.stdout.readline())
        members = family(served)
        assert members
        launcher.kill()  # no cleanup can run: the kernel's parent-death signal ends the service
        launcher.wait()
        assert not wait_gone(members, timeout_s=10)
    finally:
        launcher.kill()


def test_a_service_interrupted_while_starting_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(_: Service) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(Service, "_healthy", interrupted)
    service = Service("sleeper", ["sleep", "30"], "http://127.0.0.1:9", tmp_path / "sleeper.log")
    with pytest.raises(KeyboardInterrupt):
        service.start()
    assert service.process is not None and service.process.poll() is not None
