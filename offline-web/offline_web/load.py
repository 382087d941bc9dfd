"""Mixed search load on agent-svc (hybrid, semantic, and keyword searches that scrape markdown: every one
extracts pages), and a count of the extraction workers agent-svc holds, for the tests and the benchmarks."""

from __future__ import annotations

import asyncio
import collections
import itertools
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from offline_web.processes import ending_with_this_process, processes

QUERIES = ["sqlite wal checkpoint", "git rebase interactive", "atomic commit rollback journal",
           "mkdocs theme configuration", "git stash changes", "vacuum database file", "cherry pick a commit"]
SEARCHES = [{"retrieval_mode": "hybrid", "limit": 5}, {"retrieval_mode": "semantic", "limit": 5},
            {"limit": 5, "scrapeOptions": {"formats": ["markdown"]}}]


def extraction_workers(agent_pid: int) -> int:
    """How many live `agent.pages.worker` processes of its extraction pool agent-svc (`agent_pid`) has."""
    return sum(p.ppid == agent_pid and is_extraction_worker(p.cmdline) for p in processes())


def is_extraction_worker(cmdline: str) -> bool:
    """Whether a command line is one of agent-svc's extraction workers (not its schema worker)."""
    return "-m agent.pages.worker" in cmdline and cmdline.endswith(" extraction")


async def mixed_load(agent_url: str, clients: int, seconds: float) -> collections.Counter[str]:
    """`clients` clients sending the searches in turn, back to back, for `seconds`; returns how many answers
    came back per HTTP status (or per transport error), and how many warned of pages still extracting."""
    bodies = ({"query": q, **s} for q, s in zip(itertools.cycle(QUERIES), itertools.cycle(SEARCHES)))
    answers: collections.Counter[str] = collections.Counter()
    until = time.monotonic() + seconds

    async def client(http: httpx.AsyncClient) -> None:
        while time.monotonic() < until:
            try:
                response = await http.post(agent_url + "/v2/search", json=next(bodies))
            except httpx.HTTPError as e:
                answers[type(e).__name__] += 1
                continue
            answers[str(response.status_code)] += 1
            answers["still extracting"] += "still extracting" in response.text

    async with httpx.AsyncClient(timeout=60) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    return answers


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """`count` processes spinning a core each while the block runs, as other work on a shared host would; they
    end with the block, or with this process however it ends."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                 preexec_fn=ending_with_this_process())
                for _ in range(count)]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()
