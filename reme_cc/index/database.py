"""The index database of one process: one SQLite connection shared by its threads, the writers'
file lock (``metadata/index.lock``), and a transparent rebuild when SQLite reports damage."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from ..base.errors import ReMeError
from . import catalog
from .catalog import index_log


class NoLock:
    """A lock that is always free: the writer lock of an index no other process can see."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class Retry(Exception):
    """The database was rebuilt under a query: index the files again, then ask once more."""


class Database:
    def __init__(self, metadata: Path):
        self.metadata = metadata
        self.lock = threading.RLock()  # the one connection, and what is read together with it
        self.conn, self.mode = catalog.connect(metadata)  # mode: rw | ro | memory (catalog.connect)
        self.writer = self.writer_lock()
        self.closed = False
        self.on_rebuilt: list[Callable[[], None]] = []  # who forgets what it derived from the old database
        self.resync: Callable[[], Any] = lambda: None  # indexes the files again into a rebuilt database

    def writer_lock(self) -> Any:
        """A new handle on the writers' lock (a background writer takes its own)."""
        if self.mode != "rw":
            return NoLock()
        from filelock import FileLock

        return FileLock(str(self.metadata / "index.lock"), timeout=60)

    @contextlib.contextmanager
    def guard(self) -> Iterator[sqlite3.Connection]:
        """The connection; a damaged database is rebuilt once (then ``Retry``)."""
        if self.closed:
            raise ReMeError("the index is closed")
        with self.lock:
            try:
                yield self.conn
            except sqlite3.DatabaseError as exc:
                if "interrupted" in str(exc):  # catalog.open_db's deadline
                    raise ReMeError(
                        f"an index query ran longer than {catalog.STATEMENT_S:.0f} s and was stopped; "
                        "run `reme-cc reindex` if it happens again"
                    ) from None
                if not catalog.is_damage(exc) or self.mode != "rw":
                    raise ReMeError(f"index database error: {exc}; run `reme-cc reindex`") from None
                self.rebuild(str(exc))
                raise Retry() from None

    def rebuild(self, why: str) -> None:
        """Start over with an empty database (damage); what was derived from the old one is dropped."""
        index_log(self.metadata, f"index database damaged ({why}): rebuilding the index")
        with self.writer:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()
            catalog.remove_db_files(self.metadata)
            self.conn, self.mode = catalog.connect(self.metadata)
        for forget in self.on_rebuilt:
            forget()

    def run(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """``fn(conn)``; after a rebuild the files are indexed again and ``fn`` runs once more."""
        for attempt in range(2):
            try:
                with self.guard() as conn:
                    return fn(conn)
            except Retry:
                if attempt:
                    raise ReMeError("the index database keeps failing; delete metadata/index.sqlite") from None
                self.resync()
        raise AssertionError("unreachable")

    def generation(self) -> int:
        return self.run(catalog.generation)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()


def open_rw(metadata: Path) -> sqlite3.Connection:
    """A connection of its own (a background writer, the embedding loop)."""
    conn = catalog.open_db(metadata / catalog.DB_NAME, timeout=10.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


def scrub(db: Database) -> bool:
    """After ``forget`` (rows already replaced through the writer): nothing of the text stays in the
    database's pages or derived files -- orphan embeddings and their log rows go, FTS5 merges its
    segments (deleted terms live on in old ones), VACUUM rewrites the file without free pages, the
    write-ahead log is truncated, and the BM25 snapshot and the shared vector files are deleted (each
    process rebuilds them from the database). Under the writers' lock. False when a reader kept the
    log from being truncated."""
    if db.mode != "rw":
        raise ReMeError("the index is read-only here: forget cannot scrub it; run it where the workspace is writable")
    with db.writer, db.lock:
        conn = db.conn
        conn.execute("PRAGMA secure_delete=ON")
        with catalog.transaction(conn):
            # a vector lent to a rewritten note's new text is its old text's: no loan outlives a forget
            # (first: the orphan embeddings below include the lenders), and every process drops its own
            conn.execute("DELETE FROM carried_vectors")
            catalog.set_meta(conn, "carried_epoch", uuid.uuid4().hex)
            for table in ("embeddings", "vector_log"):
                conn.execute(f"DELETE FROM {table} WHERE hash NOT IN (SELECT hash FROM chunks)")
            for fts in ("chunks_fts", "nodes_fts"):
                conn.execute(f"INSERT INTO {fts}({fts}) VALUES('optimize')")
            catalog.bump_generation(conn)
        conn.execute("VACUUM")
        for _ in range(20):  # a reader holding an old snapshot keeps the log: readers are short, wait a little
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if not busy:
                break
            time.sleep(0.1)
        for pattern in ("bm25-*.npz", "vectors-*"):
            for path in db.metadata.glob(pattern):
                with contextlib.suppress(OSError):
                    path.unlink()
    return busy == 0
