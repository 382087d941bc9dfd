import os

from offline_web.load import busy_loops
from offline_web.processes import processes


def spinning() -> int:
    return sum(p.ppid == os.getpid() and "while True: pass" in p.cmdline for p in processes())


def test_busy_loops_spin_while_the_block_runs_and_are_gone_after() -> None:
    with busy_loops(2):
        assert spinning() == 2
    assert spinning() == 0
