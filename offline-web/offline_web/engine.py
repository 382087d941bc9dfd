"""The thin upstream search engine: BM25 over whole pages, snippets as thin as real engines give."""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

PAGE_SIZE = 10
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "in", "is", "it",
    "of", "on", "or", "the", "to", "what", "when", "where", "which", "who", "why", "with", "vs", "versus", "into",
    "one", "few",
))
TIME_RANGES = {"day": 1, "week": 7, "month": 31, "year": 366}
_OPERATOR = re.compile(r"(?<!\S)(-?)(site|filetype):(\S+)", re.IGNORECASE)
# results are served at http://<loopback address>/<host>/<path>: a site: naming that address means the host after it
_OWN_ADDRESS = re.compile(r"^(https?://)?(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(/|$)", re.IGNORECASE)
_COLUMN_WEIGHTS = "0, 10.0, 4.0, 1.0"  # url, title, heads, body


@dataclass
class ParsedQuery:
    """Free-text terms plus the operators real engines honour (`site:`, `-site:`, `filetype:`)."""

    terms: list[str]
    sites: list[str] = field(default_factory=list)
    excluded_sites: list[str] = field(default_factory=list)
    filetype: str | None = None


def parse_query(q: str, honour_operators: bool = True) -> ParsedQuery:
    sites: list[str] = []
    excluded: list[str] = []
    filetype = None
    if honour_operators:
        for negated, op, value in _OPERATOR.findall(q):
            if op.lower() == "filetype":
                filetype = value.lower().lstrip(".")
            else:
                (excluded if negated else sites).append(_OWN_ADDRESS.sub("", value.lower()).rstrip("/"))
        q = _OPERATOR.sub(" ", q)
    # "OR" only joins site: operators; every term is already OR-ed below
    terms = [t for t in re.findall(r"\w+", q.lower()) if t not in STOPWORDS]
    return ParsedQuery(terms, sites, excluded, filetype)


class SearchEngine:
    """Answers queries over one index database; safe to share between server threads."""

    def __init__(self, db_path: Path) -> None:
        self._db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()

    def search(
        self,
        q: str,
        category: str = "general",
        pageno: int = 1,
        time_range: str | None = None,
        honour_operators: bool = True,
        today: date | None = None,
        hosts: tuple[str, ...] = (),
    ) -> list[dict]:
        """Results of one page, best first: dicts with url (host/path), title, content, score, published; with
        `hosts`, only pages on those hosts, as an engine that indexes no other sites."""
        parsed = parse_query(q, honour_operators)
        where, args = self._filters(parsed, category, time_range, today or date.today(), hosts)
        if not parsed.terms:
            # a bare site: query lists that site's pages, as real engines do
            return self._listing(where, args, pageno) if parsed.sites and category == "general" else []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in parsed.terms)
        offset = (max(pageno, 1) - 1) * PAGE_SIZE
        if category == "images":
            return self._images(match, where, args, offset)
        sql = (
            f"SELECT url, title, snippet, published, bm25(pages, {_COLUMN_WEIGHTS}) AS s FROM pages "
            f"WHERE pages MATCH ? {where} ORDER BY s LIMIT {PAGE_SIZE} OFFSET {offset}"
        )
        with self._lock:
            rows = self._db.execute(sql, [match, *args]).fetchall()
        return [
            {"url": url, "title": title, "content": snippet, "score": round(-s, 3), "published": published or None}
            for url, title, snippet, published, s in rows
        ]

    def _images(self, match: str, where: str, args: list, offset: int) -> list[dict]:
        sql = (
            f"SELECT i.page_url, i.src, i.alt, i.width, i.height, p.s FROM images i JOIN ("
            f"  SELECT url, bm25(pages, {_COLUMN_WEIGHTS}) AS s FROM pages WHERE pages MATCH ? {where}"
            f") p ON p.url = i.page_url ORDER BY p.s, i.rowid LIMIT {PAGE_SIZE} OFFSET {offset}"
        )
        with self._lock:
            rows = self._db.execute(sql, [match, *args]).fetchall()
        return [
            {"url": page, "title": alt, "content": "", "img": src, "resolution": f"{w} x {h}", "score": round(-s, 3)}
            for page, src, alt, w, h, s in rows
        ]

    def _listing(self, where: str, args: list, pageno: int) -> list[dict]:
        offset = (max(pageno, 1) - 1) * PAGE_SIZE
        sql = (f"SELECT url, title, snippet, published FROM pages WHERE 1 {where} ORDER BY url "
               f"LIMIT {PAGE_SIZE} OFFSET {offset}")
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [{"url": url, "title": title, "content": snippet, "score": 0.0, "published": published or None}
                for url, title, snippet, published in rows]

    @staticmethod
    def _filters(parsed: ParsedQuery, category: str, time_range: str | None, today: date,
                 hosts: tuple[str, ...]) -> tuple[str, list]:
        clauses: list[str] = []
        args: list = []
        if hosts:
            clauses.append("(" + " OR ".join("url LIKE ?" for _ in hosts) + ")")
            args += [f"{h}/%" for h in hosts]
        if parsed.sites:
            clauses.append("(" + " OR ".join("url LIKE ? OR url LIKE ?" for _ in parsed.sites) + ")")
            args += [pattern for s in parsed.sites for pattern in (f"{s}/%", f"%.{s}/%")]
        for s in parsed.excluded_sites:
            clauses.append("url NOT LIKE ? AND url NOT LIKE ?")
            args += [f"{s}/%", f"%.{s}/%"]
        if parsed.filetype:
            clauses.append("url LIKE ?")
            args.append(f"%.{parsed.filetype}")
        if category == "news":
            clauses.append("published != ''")
        if time_range in TIME_RANGES:
            clauses.append("published >= ?")
            args.append((today - timedelta(days=TIME_RANGES[time_range])).isoformat())
        return "".join(f" AND {c}" for c in clauses), args
