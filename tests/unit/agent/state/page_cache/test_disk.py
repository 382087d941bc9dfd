"""The directory store of the page cache: its evictions scan the directory without holding up reads and
writes, and a store that crosses its bound while another thread evicts is evicted too."""

import threading
import time
from collections import OrderedDict
from pathlib import Path

import pytest

from agent.state.page_cache import disk as disk_module
from agent.state.page_cache.disk import DiskStore


def test_an_eviction_scans_the_directory_while_reads_and_writes_go_on(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan that an eviction starts (slow on a large directory) holds no lock; what the store did during it
    is counted after it."""
    directory, size = tmp_path / "pages", 1000
    store, scanning, scanned = DiskStore(directory, size * 3 + size // 2), threading.Event(), threading.Event()
    real_scan = disk_module._scanned

    def slow_scan(path: Path) -> OrderedDict[str, int]:
        found = real_scan(path)
        scanning.set()
        assert scanned.wait(10)
        return found

    monkeypatch.setattr(disk_module, "_scanned", slow_scan)
    keys = [f"{n:02d}" for n in range(5)]
    for key in keys[:3]:
        store.write(key, b"x" * size)
        time.sleep(0.02)  # a disk entry's last use is its mtime
    evicting = threading.Thread(target=store.write, args=(keys[3], b"x" * size))
    evicting.start()
    try:
        assert scanning.wait(5)
        meanwhile = threading.Thread(target=lambda: (store.read(keys[0]), store.write(keys[4], b"x" * size)))
        meanwhile.start()
        meanwhile.join(2)
        assert not meanwhile.is_alive(), "a read and a write waited for the scan"
    finally:
        scanned.set()
        evicting.join()
    on_disk = {entry.name.removesuffix(".page") for entry in directory.iterdir()}
    assert on_disk == {keys[0], keys[3], keys[4]}  # 0 was read during the scan, 4 written
    assert store.held_bytes == size * 3


def test_a_store_that_crosses_the_bound_while_another_thread_evicts_is_evicted_too(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    size = 1000
    store, unlinking, go = DiskStore(tmp_path / "pages", size * 3 + size // 2), threading.Event(), threading.Event()
    real_unlinked = store._unlinked

    def slow_unlinked(key: str) -> bool:
        unlinking.set()
        assert go.wait(10)
        return real_unlinked(key)

    monkeypatch.setattr(store, "_unlinked", slow_unlinked)
    for n in range(3):
        store.write(f"{n:02d}", b"x" * size)
    evicting = threading.Thread(target=store.write, args=("03", b"x" * size))
    evicting.start()
    try:
        assert unlinking.wait(5)
        for n in (4, 5):  # the eviction under way has counted what it found: these cross the bound again
            assert store.write(f"{n:02d}", b"x" * size) == 0
    finally:
        go.set()
        evicting.join()
    assert store.held_bytes <= size * 3 + size // 2
    assert store.held_bytes == sum(entry.stat().st_size for entry in (tmp_path / "pages").iterdir())
