"""The processes under a process, read from /proc: a child and its grandchild are found with their programs and
memory; an ended one reads as nothing."""

import os
import signal
import subprocess
import sys
import time

from agent.pages.browser.processes import argv0, descendants, pss_mb


def test_children_and_grandchildren_with_their_program_and_memory() -> None:
    script = "import subprocess, sys; subprocess.run(['sleep', '30'])"
    with subprocess.Popen([sys.executable, "-c", script]) as child:
        try:
            for _ in range(100):
                below = descendants(os.getpid())
                if any(argv0(pid) == "sleep" for pid in below):
                    break
                time.sleep(0.05)
            assert child.pid in below and argv0(child.pid) == sys.executable
            assert any(argv0(pid) == "sleep" for pid in below)  # the grandchild
            assert pss_mb(child.pid) > 1
        finally:
            for pid in descendants(child.pid):  # the grandchild would outlive its parent
                os.kill(pid, signal.SIGKILL)
            child.kill()
    assert argv0(child.pid) == "" and pss_mb(child.pid) == 0.0
