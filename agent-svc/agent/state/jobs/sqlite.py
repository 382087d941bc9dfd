"""The crawl jobs and their frontiers, persisted in SQLite so that a crawl survives a restart of agent-svc.

A job's pages move queued → fetching → done | failed | blocked (robots.txt). On start-up the manager puts a
running job's `fetching` pages back in the queue and resumes it. One connection, used from one thread (the
store's executor, so calls are serialized), in WAL mode; each write that touches several rows is one
transaction, so a page's thousand links cost one commit, and a status read sees one consistent state.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from agent.core.crawl_options import CrawlOptions
from agent.state.jobs import COMPLETED, FAILED, ROWS_PER_PAGE, RUNNING, Counts, Job, QueuedPage

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, created REAL NOT NULL, expires REAL NOT NULL, status TEXT NOT NULL,
    options TEXT NOT NULL, error TEXT, indexed INTEGER NOT NULL DEFAULT 0, unchanged INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0, not_indexed INTEGER NOT NULL DEFAULT 0, index_error TEXT,
    seeded INTEGER NOT NULL DEFAULT 0, owner TEXT
);
CREATE TABLE IF NOT EXISTS pages (
    job TEXT NOT NULL, key TEXT NOT NULL, url TEXT NOT NULL, depth INTEGER NOT NULL, state TEXT NOT NULL,
    seq INTEGER, document TEXT, error TEXT, code TEXT, finished REAL,
    PRIMARY KEY (job, key)
);
CREATE INDEX IF NOT EXISTS pages_queue ON pages (job, state, depth);
CREATE INDEX IF NOT EXISTS pages_done ON pages (job, seq);
"""


class JobStore:
    def __init__(self, path: str) -> None:
        if path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(Path(path).expanduser()) if path != ":memory:" else path,
                                   check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a power cut may lose the last commits
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)
        if "owner" not in {row[1] for row in self._db.execute("PRAGMA table_info(jobs)")}:  # a store of before
            self._db.execute("ALTER TABLE jobs ADD COLUMN owner TEXT")
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="crawl-jobs")

    async def run(self, method: Callable[..., T], *args: Any) -> T:
        """Run one of the synchronous methods below (`store.counts`, …) on the store's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, method, *args)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._db.close()

    def create(self, job_id: str, options: CrawlOptions, ttl_s: float, owner: str | None = None) -> None:
        now = time.time()
        self._db.execute("INSERT INTO jobs (id, created, expires, status, options, owner) VALUES (?, ?, ?, ?, ?, ?)",
                         (job_id, now, now + ttl_s, RUNNING, json.dumps(options.as_json()), owner))

    def job(self, job_id: str) -> Job | None:
        row = self._db.execute("SELECT id, created, expires, status, options, error, indexed, unchanged, chunks, "
                               "not_indexed, index_error, seeded, owner FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            return None
        try:
            options = CrawlOptions.from_json(json.loads(row[4]))
        except (ValueError, TypeError) as e:  # written by another version of Wisp
            options = CrawlOptions(seeds=("",), limit=1)
            row = (*row[:3], FAILED, row[4], f"its stored options could not be read ({e})", *row[6:])
        return Job(row[0], row[1], row[2], row[3], options, *row[5:11], bool(row[11]), row[12])

    def running(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT id FROM jobs WHERE status = ? ORDER BY created", (RUNNING,))]

    def running_jobs(self) -> list[Job]:
        """The running jobs, oldest first; one whose stored options cannot be read comes back failed."""
        return [job for job in map(self.job, self.running()) if job is not None]

    def mark_seeded(self, job_id: str) -> None:
        self._db.execute("UPDATE jobs SET seeded = 1 WHERE id = ?", (job_id,))

    def finish(self, job_id: str, status: str, error: str | None = None, drained: bool = False) -> bool:
        """Mark a running job finished; False when it already was (a cancel and the end of a crawl may race),
        or, with `drained`, while pages are still queued (a batch scrape's appendToId may add some at the end)."""
        unvisited = " AND NOT EXISTS (SELECT 1 FROM pages WHERE job = ? AND state IN ('queued', 'fetching'))"
        cursor = self._db.execute("UPDATE jobs SET status = ?, error = ? WHERE id = ? AND status = ?" +
                                  (unvisited if drained else ""),
                                  (status, error, job_id, RUNNING, *((job_id,) if drained else ())))
        return cursor.rowcount == 1

    def append(self, job_id: str, pages: list[tuple[str, str, int]], limit: int) -> str | None:
        """Queue more pages on a running or completed job, which runs again; return its status before (None: no
        such job), and queue nothing when it was cancelled or failed. One transaction, so that it and the
        job's end (`finish` with `drained`) never both miss the new pages."""
        with self._transaction():
            row = self._db.execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None or row[0] not in (RUNNING, COMPLETED):
                return row[0] if row else None
            self._add(job_id, pages, limit)
            self._db.execute("UPDATE jobs SET status = ?, error = NULL WHERE id = ?", (RUNNING, job_id))
        return row[0]

    def known(self, job_id: str) -> int:
        """Pages a job knows of, whatever their state."""
        return self._db.execute("SELECT COUNT(*) FROM pages WHERE job = ?", (job_id,)).fetchone()[0]

    def requeue_unfinished(self, job_id: str) -> None:
        self._db.execute("UPDATE pages SET state = 'queued' WHERE job = ? AND state = 'fetching'", (job_id,))

    def add_pages(self, job_id: str, pages: list[tuple[str, str, int]], limit: int) -> int:
        """Queue (key, url, depth) pages not seen before by this job, while the job's total stays within
        `limit` and it knows of at most ROWS_PER_PAGE × `limit` pages (failed and blocked ones give their place
        in the total back, not their cost); return how many were queued."""
        with self._transaction():
            return self._add(job_id, pages, limit)

    def _add(self, job_id: str, pages: list[tuple[str, str, int]], limit: int) -> int:
        room = min(limit - self.counts(job_id).total, ROWS_PER_PAGE * limit - self.known(job_id))
        added = 0
        for key, url, depth in pages:
            if added >= room:
                break
            cursor = self._db.execute("INSERT OR IGNORE INTO pages (job, key, url, depth, state) "
                                      "VALUES (?, ?, ?, ?, 'queued')", (job_id, key, url, depth))
            added += cursor.rowcount
        return added

    def take(self, job_id: str, count: int) -> list[QueuedPage]:
        """Up to `count` queued pages, shallowest first, marked as fetching."""
        with self._transaction():
            rows = self._db.execute("SELECT key, url, depth FROM pages WHERE job = ? AND state = 'queued' "
                                    "ORDER BY depth, rowid LIMIT ?", (job_id, count)).fetchall()
            self._db.executemany("UPDATE pages SET state = 'fetching' WHERE job = ? AND key = ?",
                                 [(job_id, r[0]) for r in rows])
        return [QueuedPage(*r) for r in rows]

    def queued(self, job_id: str) -> int:
        return self._db.execute("SELECT COUNT(*) FROM pages WHERE job = ? AND state IN ('queued', 'fetching')",
                                (job_id,)).fetchone()[0]

    def done(self, job_id: str, key: str, document: dict[str, Any]) -> None:
        with self._transaction():
            seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM pages WHERE job = ?",
                                   (job_id,)).fetchone()[0]
            self._db.execute("UPDATE pages SET state = 'done', seq = ?, document = ?, finished = ? WHERE job = ? "
                             "AND key = ?", (seq, json.dumps(document), time.time(), job_id, key))

    def failed(self, job_id: str, key: str, error: str, code: str, state: str = "failed") -> None:
        self._db.execute("UPDATE pages SET state = ?, error = ?, code = ?, finished = ? WHERE job = ? AND key = ?",
                         (state, error[:1000], code, time.time(), job_id, key))

    def indexed(self, job_id: str, indexed: int, unchanged: int, chunks: int, error: str | None) -> None:
        self._db.execute("UPDATE jobs SET indexed = indexed + ?, unchanged = unchanged + ?, chunks = chunks + ?, "
                         "not_indexed = not_indexed + ?, index_error = COALESCE(?, index_error) WHERE id = ?",
                         (indexed, unchanged, chunks, 1 if error else 0, error, job_id))

    def counts(self, job_id: str) -> Counts:
        rows = dict(self._db.execute("SELECT state, COUNT(*) FROM pages WHERE job = ? GROUP BY state", (job_id,)))
        return Counts(rows.get("queued", 0) + rows.get("fetching", 0) + rows.get("done", 0), rows.get("done", 0))

    def snapshot(self, job_id: str, skip: int, limit: int, max_bytes: int
                 ) -> tuple[Job, Counts, list[dict[str, Any]]] | None:
        """A job, its counts and a page of its documents, as of one moment (None: no such job)."""
        with self._transaction():
            job = self.job(job_id)
            if job is None:
                return None
            return job, self.counts(job_id), self.documents(job_id, skip, limit, max_bytes)

    def documents(self, job_id: str, skip: int, limit: int, max_bytes: int) -> list[dict[str, Any]]:
        """Finished documents in completion order from `skip`: at most `limit`, and no more than about
        `max_bytes` of JSON (at least one)."""
        rows = self._db.execute("SELECT document FROM pages WHERE job = ? AND state = 'done' ORDER BY seq "
                                "LIMIT ? OFFSET ?", (job_id, limit, skip))
        documents, size = [], 0
        for (text,) in rows:
            if documents and size + len(text) > max_bytes:
                break
            documents.append(json.loads(text))
            size += len(text)
        return documents

    def errors(self, job_id: str) -> tuple[list[dict[str, Any]], list[str]]:
        rows = self._db.execute("SELECT key, url, error, code, finished, state FROM pages WHERE job = ? AND state "
                                "IN ('failed', 'blocked') ORDER BY finished", (job_id,)).fetchall()
        errors = [{"id": f"{job_id}:{key}", "url": url, "error": error, "code": code, "finished": finished}
                  for key, url, error, code, finished, state in rows if state == "failed"]
        return errors, [url for _, url, _, _, _, state in rows if state == "blocked"]

    def unfinished(self, owner: str | None = None) -> int:
        """Unfinished jobs of every client, or of `owner`'s."""
        if owner is None:
            return self._db.execute("SELECT COUNT(*) FROM jobs WHERE status = ?", (RUNNING,)).fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM jobs WHERE status = ? AND owner = ?",
                                (RUNNING, owner)).fetchone()[0]

    def expire(self) -> int:
        """Forget finished jobs past their expiry (the index keeps what they stored); a crawl still running
        stays until it ends."""
        with self._transaction():
            expired = [r[0] for r in self._db.execute("SELECT id FROM jobs WHERE expires < ? AND status != ?",
                                                      (time.time(), RUNNING))]
            for job_id in expired:
                self._db.execute("DELETE FROM pages WHERE job = ?", (job_id,))
                self._db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        return len(expired)
