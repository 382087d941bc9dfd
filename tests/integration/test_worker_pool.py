"""agent-svc's extraction workers end with it, whether it stops cleanly or is killed."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from conftest import agent_service

from offline_web.stack import OfflineStack


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
        except (OSError, ValueError):
            continue  # a process that ended while we looked
    return found


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in Path(f"/proc/{p}/stat").read_text()
            .rsplit(")", 1)[1].split()[:1]}


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_worker_outlives_agent_svc(stack: OfflineStack, tmp_path: Path, how: signal.Signals) -> None:
    service = agent_service(stack.searx.url, tmp_path, FETCH_ALLOW_HOSTS="127.0.0.1").start()
    try:
        body = httpx.post(service.url + "/v2/search", json={"query": "git rebase", "limit": 2,
                                                           "scrapeOptions": {"formats": ["markdown"]}}, timeout=60)
        assert body.json()["data"]["web"][0]["markdown"]  # pages were extracted: the workers ran
        assert service.process is not None
        workers = children(service.process.pid)
        assert workers
        os.kill(service.process.pid, how)
        service.process.wait(timeout=30)
        deadline = time.monotonic() + 10
        while alive(workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(workers)
    finally:
        service.stop()
