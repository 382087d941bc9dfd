"""The embedded index's folder lock: one process per folder, a one-line refusal that names the holder and
QDRANT_URL, and no stale lock after the holder dies."""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from semantic.errors import StoreInUse
from semantic.store.folder_lock import FolderLock

HOLD = "import sys; from semantic.store.folder_lock import FolderLock; held = FolderLock(sys.argv[1]); print('held', " \
       "flush=True); sys.stdin.read()"


@contextmanager
def held_by_another_process(folder: Path) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # this checkout's semantic-svc, as pytest found it
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child
    finally:
        child.kill()
        child.wait()


def test_a_folder_another_process_holds_is_refused_in_one_line_naming_it_and_qdrant_url(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    with held_by_another_process(folder) as holder, pytest.raises(StoreInUse) as refused:
        FolderLock(str(folder))
    message = refused.value.message
    assert f"QDRANT_PATH {folder} is held by another semantic-svc (pid {holder.pid} on " in message
    assert "set QDRANT_URL" in message and "\n" not in message


def test_the_holder_dying_by_sigkill_leaves_the_folder_free(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    with held_by_another_process(folder) as holder:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        FolderLock(str(folder)).release()


def test_one_process_holds_a_folder_once_and_lets_it_go(tmp_path: Path) -> None:
    folder = str(tmp_path / "qdrant")
    first = FolderLock(folder)
    with pytest.raises(StoreInUse, match=f"pid {os.getpid()} on "):
        FolderLock(folder)  # a second store in this process is refused as well
    first.release()
    FolderLock(folder).release()


def test_each_folder_has_its_own_hold(tmp_path: Path) -> None:
    locks = [FolderLock(str(tmp_path / name)) for name in ("a", "b")]
    for lock in locks:
        lock.release()
