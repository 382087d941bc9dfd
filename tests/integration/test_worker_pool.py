"""agent-svc's extraction workers end with it, whether it stops cleanly or is killed: after it has extracted
pages, no process of its session or of its descendants is left."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest
from conftest import agent_service

from offline_web.processes import family, wait_gone
from offline_web.stack import OfflineStack


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_process_outlives_agent_svc(stack: OfflineStack, tmp_path: Path, how: signal.Signals) -> None:
    service = agent_service(stack.searx.url, tmp_path, FETCH_ALLOW_HOSTS="127.0.0.1").start()
    try:
        body = httpx.post(service.url + "/v2/search", json={"query": "git rebase", "limit": 2,
                                                           "scrapeOptions": {"formats": ["markdown"]}}, timeout=60)
        assert body.json()["data"]["web"][0]["markdown"]  # pages were extracted: the workers ran
        assert service.process is not None
        members = family(service.process.pid)
        commands = [p.cmdline for p in members]
        assert sum("-m agent.worker" in c for c in commands) == 2  # EXTRACT_WORKERS' default
        os.kill(service.process.pid, how)
        service.process.wait(timeout=30)
        assert not wait_gone(members)
    finally:
        service.stop()
