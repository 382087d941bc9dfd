"""The README's agent-svc install command, run as a new user would: in a fresh virtual environment with the
pip that `python -m venv` ships (23.2 on Python 3.11.7), then agent-svc imported and started.

The command is read from the README, so the test and the documentation cannot drift apart. pip's own cache
(~/.cache/pip, shared with `make install`) keeps a warm machine fast, but pip still asks the package index for
every requirement: the install is marked `network`, and skipped, saying so, on a machine that cannot reach it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from offline_web.processes import Service, free_port

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def readme_install_command(package: str) -> list[str]:
    """The one `pip install` line of the README that installs `package`, without its comment."""
    lines = [line for line in (ROOT / "README.md").read_text().splitlines()
             if line.startswith("pip install ") and re.search(rf"-e {re.escape(package)}\b", line)]
    assert len(lines) == 1, f"the README should document one install line for {package}: {lines}"
    return shlex.split(lines[0], comments=True)


def test_readme_has_one_install_line_per_service() -> None:
    assert readme_install_command("agent-svc")[2:] == ["-e", "wisp-text", "-e", "wisp-obs", "-e", "agent-svc"]
    assert readme_install_command("semantic-svc")[2:] == ["-e", "wisp-text", "-e", "wisp-obs", "-e", "semantic-svc"]


@pytest.mark.network
def test_the_readme_install_of_agent_svc_works_in_a_fresh_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # Python's own venv module, from the interpreter this venv was made from, with the pip it bundles
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_NO_CACHE_DIR")}
    pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, check=True).stdout
    command = readme_install_command("agent-svc")
    installed = subprocess.run([python, "-m", *command], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert installed.returncode == 0, f"{pip}{shlex.join(command)} failed:\n{installed.stdout}{installed.stderr}"

    # outside the repository, so that nothing is imported from the working tree by accident
    imported = subprocess.run([python, "-c", "import agent.app, agent; print(agent.__file__)"], cwd=tmp_path,
                              env=clean, capture_output=True, text=True)
    assert imported.returncode == 0, f"{pip}import agent.app failed:\n{imported.stderr}"
    assert imported.stdout.strip() == str(ROOT / "agent-svc" / "agent" / "__init__.py")

    port = free_port()
    service = Service("agent-svc-clean-venv", [str(venv / "bin" / "uvicorn"), "agent.app:app", "--host",
                                               "127.0.0.1", "--port", str(port)],
                      f"http://127.0.0.1:{port}", tmp_path / "agent.log", cwd=tmp_path,
                      env={"PYTHONPATH": "", "SEARXNG_URL": f"http://127.0.0.1:{free_port()}",
                           "CRAWL_DB": str(tmp_path / "crawls.sqlite"),
                           "RESEARCH_DB": str(tmp_path / "research.sqlite")})
    with service.started(timeout_s=120):
        pass  # /healthz answered 200
