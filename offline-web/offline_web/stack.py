"""Bring up the offline web and a real searx in front of it, for tests, benchmarks and the demo."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from offline_web.corpus import cache_dir, ensure_packages
from offline_web.index import ensure_index
from offline_web.searx import Searx
from offline_web.server import OfflineWeb
from offline_web.sites import load_sites


@dataclass
class OfflineStack:
    web: OfflineWeb
    searx: Searx


def prepare_index(sites_path: Path, cache: Path | None = None) -> tuple[list, Path, Path]:
    """Download what the sites file needs and index it; return (sites, cache, index path)."""
    cache = cache or cache_dir()
    sites = load_sites(sites_path)
    versions = ensure_packages(sites, cache)
    return sites, cache, ensure_index(sites, sites_path.read_text(), versions, cache)


@contextmanager
def offline_search_stack(sites_path: Path, workdir: Path, web_port: int = 0,
                         searx_port: int | None = None) -> Iterator[OfflineStack]:
    sites, cache, db = prepare_index(sites_path)
    with OfflineWeb(sites, cache, db, port=web_port) as web, Searx(web.url, workdir, port=searx_port) as searx:
        yield OfflineStack(web, searx)
