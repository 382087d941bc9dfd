"""A two-site corpus written on the fly, laid out as the corpus cache lays out unpacked packages."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import pytest

from offline_web.index import build_index
from offline_web.sites import load_sites

NAV = "<p>Home | Docs | Download | Community | Contact us | Search this site | Mailing lists | Bug tracker</p>"


def _page(title: str, body: str, head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{NAV}{body}</body></html>"


PAGES = {
    "alpha-doc/usr/share/doc/alpha/html/wal.html": _page(
        "Write-Ahead Logging", "<h1>WAL mode</h1><p>The write-ahead log is a journal mode. A checkpoint moves the WAL "
        "content back into the database file. Readers do not block writers.</p>"
        '<img src="img/wal.gif" alt="WAL diagram"><img src="img/logo.png">'),
    "alpha-doc/usr/share/doc/alpha/html/vacuum.html": _page(
        "VACUUM", "<h2>Rebuild</h2><p>The VACUUM command rebuilds the database file, repacking it into a minimal "
        'amount of disk space.<img src="img/logo.png"></p>'),
    "alpha-doc/usr/share/doc/alpha/html/releases/3_40_0.html": _page(
        "Alpha Release 3.40.0 On 2022-11-16", "<p>Added the vacuum into command and improved checkpoint speed for "
        'large databases.</p><img src="../img/logo.png">'),
    "alpha-doc/usr/share/doc/alpha/html/releases/3_39_0.html": _page(
        "Alpha Release 3.39.0 On 2022-06-25", "<p>Release date: 2022-06-25. Added right and full outer joins to the "
        "query planner for everyone.</p>"),
    "alpha-doc/usr/share/doc/alpha/html/skipped.txt": "not html",
    "beta-doc/usr/share/beta/index.html": _page(
        "Beta guide", "<p>Beta explains git rebase and how to squash commits into one commit before merging.</p>",
        head='<meta name="description" content="Beta: the guide to rebasing.">'),
    "beta-doc/usr/share/beta/private/secret.html": _page("Secret", "<p>Not included by the include regex at all, "
                                                                   "whatever it says about checkpoint.</p>"),
}


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00" * 10


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, Path, Path]:
    """(sites, cache, index database) for the two sites."""
    cache = tmp_path_factory.mktemp("cache")
    for relative, text in PAGES.items():
        path = cache / "pkgs" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    images = cache / "pkgs/alpha-doc/usr/share/doc/alpha/html/img"
    images.mkdir()
    (images / "wal.gif").write_bytes(_gif(300, 200))
    (images / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 8 + struct.pack(">II", 400, 100))
    html_dir = cache / "pkgs/alpha-doc/usr/share/doc/alpha/html"
    (html_dir / "changelog.html.gz").write_bytes(gzip.compress(b"<html><body><p>Changelog</p></body></html>"))
    (html_dir / "manual.pdf").write_bytes(b"%PDF-1.4\n%fake but typed\n")
    sites_file = cache / "sites.tsv"
    sites_file.write_text("# test sites\nalpha-doc\tusr/share/doc/alpha/html\twww.alpha.org\t\n"
                          "beta-doc\tusr/share/beta\tbeta.dev/docs/1.0\t^index\\.html$\n")
    sites = load_sites(sites_file)
    db = cache / "index.sqlite"
    build_index(sites, cache, db)
    return sites, cache, db
