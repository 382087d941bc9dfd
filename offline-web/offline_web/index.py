"""Build the SQLite FTS5 index of the offline web, cached under a key of everything that determines it."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from posixpath import dirname, normpath

from wisp_text.sentences import sentence_ends

from offline_web.corpus import site_dir
from offline_web.pages import Page, image_size, parse_page
from offline_web.sites import Site

log = logging.getLogger(__name__)

INDEXER_VERSION = "indexer-v1"
_MIN_IMAGE_SIDE = 48
_PARALLEL_ABOVE = 200  # pages; below this a process pool costs more than it saves

SCHEMA = """
CREATE VIRTUAL TABLE pages USING fts5(
    url UNINDEXED, title, heads, body, snippet UNINDEXED, published UNINDEXED,
    tokenize = 'porter unicode61'
);
CREATE TABLE images (page_url TEXT, src TEXT, alt TEXT, width INTEGER, height INTEGER);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
"""


@dataclass
class _Parsed:
    url: str
    site: Site
    page: Page
    file: Path


def index_key(sites_text: str, versions: dict[str, str]) -> str:
    """What determines an index: the sites file, the package versions and this indexer's version."""
    material = sites_text + "".join(f"{p} {v}\n" for p, v in sorted(versions.items())) + INDEXER_VERSION
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def ensure_index(sites: list[Site], sites_text: str, versions: dict[str, str], cache: Path) -> Path:
    """Return the index for these sites and versions, building it first if the cache has none."""
    db = cache / "index" / f"{index_key(sites_text, versions)}.sqlite"
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        tmp = db.with_suffix(f".tmp{os.getpid()}")
        build_index(sites, cache, tmp)
        tmp.rename(db)
    return db


def build_index(sites: list[Site], cache: Path, db_path: Path) -> int:
    """Index every included .html page of `sites` into a new database; return the page count."""
    files = [(site, rel, path) for site in sites for rel, path in _site_pages(site, site_dir(cache, site))]
    parsed = _parse_all(files)
    snippets = _snippets(parsed)
    db_path.unlink(missing_ok=True)
    with sqlite3.connect(db_path) as db:
        db.executescript(SCHEMA)
        db.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?, ?, ?)",
            [
                (p.url, p.page.title, " ".join(p.page.heads), p.page.body, snippets[p.url],
                 p.page.published.isoformat() if p.page.published else "")
                for p in parsed
            ],
        )
        db.executemany("INSERT INTO images VALUES (?, ?, ?, ?, ?)", _images(parsed))
        db.execute("INSERT INTO meta VALUES ('pages', ?)", (str(len(parsed)),))
    log.info("indexed %d pages into %s", len(parsed), db_path)
    return len(parsed)


def _site_pages(site: Site, root: Path) -> list[tuple[str, Path]]:
    pages = []
    for path in sorted(root.rglob("*.html")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if site.includes(rel):
            pages.append((rel, path))
    return pages


def _parse_file(path: Path) -> Page:
    return parse_page(path.read_bytes().decode("utf-8", errors="replace"))


def _parse_all(files: list[tuple[Site, str, Path]]) -> list[_Parsed]:
    paths = [path for _, _, path in files]
    if len(paths) > _PARALLEL_ABOVE:
        with ProcessPoolExecutor() as pool:
            pages = list(pool.map(_parse_file, paths, chunksize=16))
    else:
        pages = [_parse_file(p) for p in paths]
    return [
        _Parsed(f"{site.prefix}/{rel}", site, page, path)
        for (site, rel, path), page in zip(files, pages, strict=True)
    ]


def _snippets(parsed: list[_Parsed]) -> dict[str, str]:
    """Meta description, else the first sentence of the first paragraph that is not site boilerplate."""
    candidates = {p.url: [x for x in p.page.paragraphs if len(x) >= 60][:6] for p in parsed}
    seen_on_pages = Counter((p.site.prefix, text) for p in parsed for text in set(candidates[p.url]))
    snippets = {}
    for p in parsed:
        own = [t for t in candidates[p.url] if seen_on_pages[(p.site.prefix, t)] <= 2]
        snippets[p.url] = p.page.description or (first_sentence(own[0]) if own else "")
    return snippets


def first_sentence(text: str) -> str:
    """The shortest leading span of about 40-220 characters ending a sentence, else the first 200 characters."""
    for end in sentence_ends(text):
        if 40 <= end <= 220:
            return text[:end]
        if end > 220:
            break
    return text[:200]


def _images(parsed: list[_Parsed]) -> list[tuple[str, str, str, int, int]]:
    resolved = {p.url: [(_resolve(p.url, img.src), img) for img in p.page.images] for p in parsed}
    per_site = Counter((p.site.prefix, src) for p in parsed for src in {s for s, _ in resolved[p.url]})
    rows = []
    for p in parsed:
        for src, img in resolved[p.url]:
            if src is None or per_site[(p.site.prefix, src)] > 2:  # logos and icons repeat on every page
                continue
            size = (img.width, img.height) if img.width and img.height else _file_size(p.file, img.src)
            if size and min(size) >= _MIN_IMAGE_SIDE:
                rows.append((p.url, src, img.alt or p.page.title, size[0], size[1]))
    return rows


def _resolve(page_url: str, src: str) -> str | None:
    """An image src as host/path; None for external or data URLs."""
    path = _strip_query(src)
    if ":" in path.split("/", 1)[0] or path.startswith("//"):
        return None
    if path.startswith("/"):
        return page_url.split("/", 1)[0] + path
    joined = normpath(dirname(page_url) + "/" + path)
    return None if joined.startswith("..") else joined


def _file_size(page_file: Path, src: str) -> tuple[int, int] | None:
    path = _strip_query(src)
    return None if path.startswith("/") or ":" in path else image_size(page_file.parent / path)


def _strip_query(src: str) -> str:
    return src.split("#", 1)[0].split("?", 1)[0]
