"""semantic-svc's declared architecture holds: import-linter's contracts in semantic-svc/.importlinter."""

import os
import subprocess
import sys
from pathlib import Path

SERVICE = Path(__file__).parents[3] / "semantic-svc"


def test_imports_only_point_down_and_only_the_routes_know_http() -> None:
    # this checkout's semantic-svc first on the path, so the graph is of the code under test
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SERVICE), os.environ.get("PYTHONPATH")]))}
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), ".importlinter"], cwd=SERVICE, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout
