"""agent-svc's extraction workers stay a pool of EXTRACT_WORKERS processes under a load whose deadlines kill
them, and end with agent-svc (its schema worker too), whether it stops cleanly or is killed: then no process of its
session or of its descendants is left."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from conftest import agent_service

from agent.config import Settings
from offline_web.load import extraction_workers, is_extraction_worker, mixed_load
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
        assert sum(map(is_extraction_worker, commands)) == Settings().pages.extract_workers  # EXTRACT_WORKERS
        assert sum(c.endswith("agent.pages.worker " + f"{service.process.pid} schema") for c in commands) == 1
        os.kill(service.process.pid, how)
        service.process.wait(timeout=30)
        assert not wait_gone(members)
    finally:
        service.stop()


def test_the_pool_stays_at_its_size_under_a_load_whose_deadlines_kill_workers(
        stack: OfflineStack, semantic_url: str, tmp_path: Path) -> None:
    """8 clients mixing hybrid, semantic and keyword-with-markdown searches against a 2 s deadline, beside a
    client scraping 5 MB of tiny paragraphs within 1.5 s: a deadline kills a busy worker on every scrape."""
    service = agent_service(stack.searx.url, tmp_path, SEMANTIC_SVC_URL=semantic_url, FETCH_ALLOW_HOSTS="127.0.0.1",
                            PIPELINE_DEADLINE_S="2").start()
    assert service.process is not None
    pid, counts = service.process.pid, []

    async def hostile_scrapes(until: asyncio.Task) -> list[int]:
        statuses = []
        async with httpx.AsyncClient(timeout=30) as http:
            while not until.done():
                request = {"url": stack.web.url + "/_test/tiny?kb=5120", "timeout": 1500}
                statuses.append((await http.post(service.url + "/v2/scrape", json=request)).status_code)
        return statuses

    async def load() -> tuple:
        searches = asyncio.create_task(mixed_load(service.url, clients=8, seconds=20))
        scrapes = asyncio.create_task(hostile_scrapes(searches))
        # 20 s of load, then the answers in flight (60 s timeouts); the bound only stops a hang
        deadline = time.monotonic() + 180
        while not searches.done():
            assert time.monotonic() < deadline, "the 20 s load did not end within 180 s"
            counts.append(extraction_workers(pid))
            await asyncio.sleep(0.5)
        return await searches, await scrapes

    workers = Settings().pages.extract_workers
    try:
        answers, scrapes = asyncio.run(load())
        assert answers["200"] > 0 and 408 in scrapes, (answers, scrapes)  # searches answered; deadlines killed
        assert max(counts) <= workers, counts  # EXTRACT_WORKERS, all along
        ended = time.monotonic()
        while extraction_workers(pid) != workers and time.monotonic() - ended < 30:
            time.sleep(0.2)
        # no more, and the workers killed were replaced
        assert extraction_workers(pid) == workers, f"{extraction_workers(pid)} workers 30 s after the load"
    finally:
        service.stop()
