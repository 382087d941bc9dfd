"""How much memory a service uses: the resident set of every process in its session (a Service starts each in
a session of its own, so its workers count, and nothing else does)."""

from __future__ import annotations

import os
from pathlib import Path

_PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20


def session_rss_mib(session: int) -> float:
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a process that ended while we looked
        if int(fields[3]) == session:
            total += int(fields[21])
    return total * _PAGE_MIB
