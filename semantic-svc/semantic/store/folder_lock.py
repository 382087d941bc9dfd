"""One process per embedded Qdrant folder, and a one-line reason for the process that comes second.

qdrant-client's local mode locks its folder too, but only once it has read every collection into memory, and it
refuses with a RuntimeError that uvicorn prints as a forty-line traceback. This lock is taken first and names
the process that holds the folder; its `StoreInUse` is what the service exits with (api.py).
"""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path
from typing import TextIO

from semantic.errors import StoreInUse

LOCK_FILE = "semantic-svc.lock"


class FolderLock:
    """An exclusive hold on `folder` while this process keeps it; StoreInUse when another process has it.

    flock: the kernel drops the hold when its process ends, SIGKILL included, so a dead replica leaves no stale
    lock behind. It holds between containers on one host's volume; on a network filesystem flock may not.
    """

    def __init__(self, folder: str) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        self._file = (Path(folder) / LOCK_FILE).open("a+")
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(self._file)
            self._file.close()
            raise StoreInUse(in_use_message(folder, holder)) from None
        self._file.truncate(0)
        self._file.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        self._file.flush()

    def release(self) -> None:
        self._file.close()  # closing the file drops its flock


def in_use_message(folder: str, holder: str) -> str:
    """Why a second process on `folder` does not start, and what to do instead, in one line."""
    held_by = f"another semantic-svc ({holder})" if holder else "another semantic-svc"
    return (f"QDRANT_PATH {folder} is held by {held_by}: embedded Qdrant serves one process. Replicas share one "
            "index through a Qdrant server: set QDRANT_URL on each of them (docs/scaling.md)")


def _holder(file: TextIO) -> str:
    """What the holder wrote of itself; empty when it has not written it yet."""
    file.seek(0)
    return file.read().strip()
