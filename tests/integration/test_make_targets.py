"""`make run` and `make demo` as a user runs them: the stack comes up on loopback, answers, and a signal to
make, or the launcher's death, leaves no process of it behind.

The targets run with this interpreter's virtual environment, never reinstalling it (`-o` its stamp files).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_rich import HTTP_TIMEOUT_S, QUERY, RICH_DEADLINE_S, TIMEOUT_MS

from offline_web.processes import Proc, family, free_port, survivors, wait_gone
from offline_web.stack import OfflineStack

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)
STARTUP_S = 400  # semantic-svc loads its models after start-up, slowly on 2 busy cores


class Launched:
    """A make target started in a session of its own, its output in a log file."""

    def __init__(self, target: str, log: Path, env: dict[str, str], **variables: str) -> None:
        command = ["make", "--no-print-directory", "-o", f"{VENV}/.installed",
                   "-o", "tests/sdk_js/node_modules/.installed", target, f"VENV={VENV}",
                   *(f"{name}={value}" for name, value in variables.items())]
        self.log = log
        self.seen: set[Proc] = set()
        with log.open("wb") as out:
            self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if found := re.search(pattern, self.output()):
                return found
            assert self.process.poll() is None, f"make exited with {self.process.returncode}:\n{self.output()}"
            time.sleep(0.5)
        raise AssertionError(f"no {pattern!r} within {STARTUP_S} s:\n{self.output()}")

    def members(self) -> set[Proc]:
        self.seen |= family(self.process.pid)
        return self.seen

    def kill_all(self) -> None:
        for member in survivors(self.members()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(member.pid, signal.SIGKILL)


@pytest.fixture
def launch(tmp_path: Path) -> Iterator:
    started: list[Launched] = []

    def start(target: str, env: dict[str, str] | None = None, **variables: str) -> Launched:
        base = {k: v for k, v in os.environ.items() if k != "SEARXNG_URL"}
        started.append(Launched(target, tmp_path / f"{target}.log", {**base, **(env or {})}, **variables))
        return started[-1]

    yield start
    for each in started:  # a failed test must not leave its stack running
        each.kill_all()


def commands(members: set[Proc]) -> str:
    return "\n".join(sorted(p.cmdline for p in members))


def stopped(launched: Launched, members: set[Proc], how: signal.Signals, pid: int | None = None) -> set[Proc]:
    os.kill(pid or launched.process.pid, how)
    launched.process.wait(timeout=60)
    return wait_gone(members, timeout_s=30)


def test_make_run_starts_searx_and_the_services_and_sigterm_stops_them_all(launch, tmp_path: Path) -> None:
    agent_port, semantic_port, searx_port = free_port(), free_port(), free_port()
    run = launch("run", AGENT_PORT=str(agent_port), SEMANTIC_PORT=str(semantic_port), SEARX_PORT=str(searx_port),
                 RUN_DIR=str(tmp_path / "run"))
    run.wait_for("Ctrl-C")
    agent = f"http://127.0.0.1:{agent_port}"
    assert f"searx (Debian, its internet engines)   http://127.0.0.1:{searx_port}" in run.output()
    ready = httpx.get(f"{agent}/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["searxng"] == f"http://127.0.0.1:{searx_port}"
    # no search: it would send searx's engines to the internet, where tests send nothing
    engines = {e["name"] for e in httpx.get(f"http://127.0.0.1:{searx_port}/config", timeout=10).json()["engines"]
               if e["enabled"]}
    assert {"google", "bing", "wikipedia"} <= engines
    members = run.members()
    assert all(part in commands(members) for part in ("searx.webapp", "semantic.api:app", "agent.app:app"))
    assert not stopped(run, members, signal.SIGTERM)


def test_make_run_with_a_searxng_url_starts_no_searx_and_dies_with_its_launcher(
        launch, stack: OfflineStack, tmp_path: Path) -> None:
    agent_port = free_port()
    run = launch("run", env={"SEARXNG_URL": stack.searx.url, "FETCH_ALLOW_HOSTS": "127.0.0.1"},
                 AGENT_PORT=str(agent_port), SEMANTIC_PORT=str(free_port()), RUN_DIR=str(tmp_path / "run"))
    run.wait_for("Ctrl-C")
    assert "SearXNG (yours)" in run.output()
    body = httpx.post(f"http://127.0.0.1:{agent_port}/v2/search", timeout=60, json={
        "query": "git rebase", "limit": 2, "scrapeOptions": {"formats": ["markdown"]}}).json()
    assert body["data"]["web"][0]["markdown"]  # agent-svc's extraction workers ran
    members = run.members()
    assert "searx.webapp" not in commands(members) and "agent.pages.worker" in commands(members)
    launcher = next(p for p in members if p.ppid == run.process.pid)
    assert "offline_web run" in launcher.cmdline
    assert not stopped(run, members, signal.SIGKILL, pid=launcher.pid)  # nothing could clean up: the kernel did


def test_make_demo_answers_rich_requests_and_sigterm_leaves_nothing_running(launch) -> None:
    # the demo's own settings but the rich deadline: one LLM thread on a loaded machine (test_rich.py's)
    demo = launch("demo", env={"RICH_DEADLINE_S": str(RICH_DEADLINE_S)}, SITES="tests/fixtures/sites-mini.tsv")
    agent = demo.wait_for(r"agent-svc +(http://127\.0\.0\.1:\d+)").group(1)
    demo.wait_for("Ctrl-C")
    body = httpx.post(f"{agent}/v2/search", json={"query": "git rebase", "limit": 2}, timeout=60).json()
    assert body["success"] is True and body["data"]["web"]
    rich = httpx.post(f"{agent}/v2/search", timeout=HTTP_TIMEOUT_S, json={
        "query": QUERY, "limit": 3, "search_type": "rich", "timeout": TIMEOUT_MS}).json()
    assert "answer" in rich and not rich["answer"]["abstained"], rich.get("warning")
    members = demo.members()
    assert all(part in commands(members)
               for part in ("searx.webapp", "semantic.api:app", "agent.app:app", "offline_web.llm"))
    assert not stopped(demo, members, signal.SIGTERM)
