"""The processes under one process, read from /proc: how agent-svc finds its Chromium and the Playwright driver
to weigh their memory, and what the browser's benchmark and tests look at too."""

from __future__ import annotations

from pathlib import Path


def descendants(root: int) -> list[int]:
    """Every process below `root`, at any depth."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = [], list(children.get(root, []))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def argv0(pid: int) -> str:
    """Its program as started ("" once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return ""


def pss_mb(pid: int) -> float:
    """Its proportional set size in MB: each page it shares divided among its sharers (0 once it has ended)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0
