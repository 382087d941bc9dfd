"""A worker process (`python -m agent.pages.worker PARENT_PID KIND`), started by workers.WorkerPool; KIND (what
its pool does: extraction, schema) is only there to tell the processes apart in `ps`.

It reads (function, arguments) frames from stdin, runs each, and answers (status, value, resident MiB) on
stdout, until stdin closes or agent-svc ends.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import struct
import sys
from typing import Any, BinaryIO

LENGTH = struct.Struct("!Q")  # each frame: its length, then a pickle
_PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20


def main(parent: int) -> None:
    _die_with_parent(parent)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the answers
    while (payload := _read_frame(requests)) is not None:
        answer = _answer(*pickle.loads(payload))
        answers.write(frame(answer))
        answers.flush()


def _answer(fn: Any, args: tuple) -> bytes:
    try:
        outcome: tuple[str, Any] = ("ok", fn(*args))
    except Exception as e:
        outcome = ("error", e)
    try:
        return pickle.dumps((*outcome, _resident_mib()), pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # an exception or result that does not pickle
        failure = RuntimeError(f"{type(e).__name__}: {e}")
        return pickle.dumps(("error", failure, _resident_mib()), pickle.HIGHEST_PROTOCOL)


def frame(payload: bytes) -> bytes:
    return LENGTH.pack(len(payload)) + payload


def _read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(LENGTH.size)
    if len(header) < LENGTH.size:
        return None
    (length,) = LENGTH.unpack(header)
    payload = stream.read(length)
    return payload if len(payload) == length else None


def _resident_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * _PAGE_MIB


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when agent-svc ends, however it ends (SIGKILL too): otherwise workers live
    on, orphaned."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the request took hold
        os._exit(0)


if __name__ == "__main__":
    main(int(sys.argv[1]))
