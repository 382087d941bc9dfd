"""Background jobs of one kind written to a SQLite file as they change, so that one replica's jobs outlive its
restart: memory.py keeps and runs them, and on start-up reads them back here and runs the unfinished ones again
from their start. One connection, used from one thread (the journal's executor), in WAL mode."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Generic

from agent.state.background import Codec, J, R, Record

_SCHEMA = """
CREATE TABLE IF NOT EXISTS background_jobs (
    id TEXT PRIMARY KEY, job TEXT NOT NULL, owner TEXT, created REAL NOT NULL, expires REAL NOT NULL,
    status TEXT NOT NULL, result TEXT, cancelled INTEGER NOT NULL DEFAULT 0
);
"""


class SqliteJournal(Generic[J, R]):
    def __init__(self, path: str, codec: Codec[J, R]) -> None:
        if path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(Path(path).expanduser()) if path != ":memory:" else path,
                                   check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)
        self._codec = codec
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="background-journal")

    async def save(self, record: Record[J, R]) -> None:
        """Keep `record` as it is now, in place of what was kept of it."""
        codec = self._codec
        row = (record.id, json.dumps(codec.job_json(record.job)), record.owner, record.created, record.expires,
               record.status, None if record.result is None else json.dumps(codec.result_json(record.result)),
               int(record.cancelled))
        await self._run(lambda: self._db.execute(
            "INSERT OR REPLACE INTO background_jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row))

    async def forget(self, job_id: str) -> None:
        await self._run(lambda: self._db.execute("DELETE FROM background_jobs WHERE id = ?", (job_id,)))

    async def load(self) -> list[Record[J, R]]:
        """The jobs kept and not expired, oldest first; the expired ones are forgotten."""
        return [self._record(row) for row in await self._run(self._live_rows)]

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._db.close()

    def _live_rows(self) -> list[tuple]:
        self._db.execute("DELETE FROM background_jobs WHERE expires <= ?", (time.time(),))
        return self._db.execute("SELECT * FROM background_jobs ORDER BY created").fetchall()

    def _record(self, row: tuple) -> Record[J, R]:
        job_id, job, owner, created, expires, status, result, cancelled = row
        codec = self._codec
        return Record(job_id, codec.job_of(json.loads(job)), owner, expires, status,
                      None if result is None else codec.result_of(json.loads(result)), bool(cancelled), created)

    async def _run(self, call):  # type: ignore[no-untyped-def]
        return await asyncio.get_running_loop().run_in_executor(self._thread, call)
