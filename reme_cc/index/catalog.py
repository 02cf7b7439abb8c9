"""The SQLite side of the index: schema, connections, self-repair.

One database, ``metadata/index.sqlite`` in WAL mode, holds the file catalog, chunks, links, the
FTS5 keyword table and the embedding cache. It is derived state: when it is missing, of an older
schema, or damaged, it is deleted and rebuilt from the files (with a line in metadata/logs/index.log).

Every connection reme opens goes through ``open_db`` (standard library only: the hooks' brief uses it
through readonly.py): ``trusted_schema`` off, SQLite's defensive mode where Python has it (3.12+;
3.11 has no ``setconfig``: there the schema check and the deadline stand alone), a deadline per
statement (a progress handler: a statement running longer is interrupted), and a schema check -- a
database holding a view, a trigger or any object reme's schema does not make is refused
(``ForeignSchema``), and rebuilt from the files where the index is opened for writing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Sequence

from ..notes.text import CHUNKER_VERSION
from .terms import TOKENIZER_VERSION

SCHEMA_VERSION = 3  # a new version rebuilds the database; a new TOKENIZER_VERSION only re-tokenises it
DB_NAME = "index.sqlite"
LABELS_VERSION = 1  # meta 'labels': the labels table holds every indexed file's (sync.backfill_labels)
SCRIPTS_VERSION = 1  # meta 'scripts': cjk_chunks lists every CJK chunk (sync.backfill_scripts)

log = logging.getLogger("reme_cc.index")
STATEMENT_S = 60.0  # no statement of reme's runs this long (the biggest: a scan of 100k chunks, seconds)
READER_STATEMENT_S = 1800.0  # background builds iterate a statement while tokenising every row, at low priority
PROGRESS_OPS = 20_000  # VM instructions between deadline checks (~0.1 ms)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, hash TEXT,
    name TEXT, description TEXT, extra TEXT, date TEXT, indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_date ON files(date);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, start_line INTEGER, end_line INTEGER,
    text TEXT NOT NULL, hash TEXT NOT NULL, headings TEXT
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(tokens, tokenize='unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL, target TEXT NOT NULL, resolved_path TEXT, anchor TEXT, alias TEXT,
    embed INTEGER NOT NULL DEFAULT 0, predicate TEXT, line INTEGER, how TEXT
);
CREATE INDEX IF NOT EXISTS links_source ON links(source);
CREATE INDEX IF NOT EXISTS links_resolved ON links(resolved_path);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(path UNINDEXED, tokens, tokenize='unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, hash)
) WITHOUT ROWID;
"""
# Added to schema 3 without a version bump (a bump would rebuild the database and lose the embedding
# cache, hours of work): created on open when missing. ``labels``: what search filters on before
# ranking (kind "tag": a note's tags and every level above them; "project": its frontmatter value as
# JSON), filled for an older database by sync.backfill_labels.
ADDED = {
    "vector_log": [
        "CREATE TABLE IF NOT EXISTS vector_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, model TEXT NOT NULL, "
        "hash TEXT NOT NULL)"
    ],
    "labels": [
        "CREATE TABLE IF NOT EXISTS labels (path TEXT NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS labels_value ON labels(kind, value, path)",  # covering: a filter reads it alone
        "CREATE INDEX IF NOT EXISTS labels_path ON labels(path)",
    ],
    # the chunks whose dominant script is CJK (terms.dominant_script of their start), written with
    # them: the vector half ranks each script's chunks on their own scale (VectorStore.search_scripts)
    "cjk_chunks": ["CREATE TABLE IF NOT EXISTS cjk_chunks (id INTEGER PRIMARY KEY)"],
    # a chunk text without a vector of its own for ``model`` lent the vector of the text it replaced
    # in its note (``source``: that text's hash in embeddings; ``same_body``: the two differ only in
    # the context line), so search keeps the note's vectors through a re-chunk or an edit
    # (sync.carry_vectors); the embedding worker makes the text's own vector and deletes the row. A
    # pointer, never a copy in embeddings: the cache stays "this text's vector", and a process that
    # knows nothing of this table sees these chunks as vectorless and embeds them.
    "carried_vectors": [
        "CREATE TABLE IF NOT EXISTS carried_vectors (model TEXT NOT NULL, hash TEXT NOT NULL, source TEXT NOT NULL, "
        "same_body INTEGER NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID",
        # the worker's order: loans of edited texts (the least alike) first, read 8 at a time
        "CREATE INDEX IF NOT EXISTS carried_order ON carried_vectors(model, same_body)",
    ],
}
SCHEMA += "".join(f"{stmt};\n" for statements in ADDED.values() for stmt in statements)


class DamagedIndex(Exception):
    """Internal: the database cannot be used and must be rebuilt."""


class ForeignSchema(sqlite3.DatabaseError):
    """The database holds objects reme never makes: it is not reme's index and is not used."""


class GuardedConnection(sqlite3.Connection):
    """A connection whose every statement has a deadline: ``execute``/``executemany``/``executescript``
    start its clock, a progress handler interrupts a statement still running past ``statement_s``
    (sqlite3.OperationalError "interrupted"). Reme never uses cursor() directly."""

    def __init__(self, *args: Any, statement_s: float = STATEMENT_S, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started = [time.monotonic()]  # a list: the handler closes over it, not over the connection
        started, limit = self.started, statement_s
        self.set_progress_handler(lambda: time.monotonic() - started[0] > limit, PROGRESS_OPS)

    def execute(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        self.started[0] = time.monotonic()
        return super().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        self.started[0] = time.monotonic()
        return super().executemany(*args, **kwargs)

    def executescript(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        self.started[0] = time.monotonic()
        return super().executescript(*args, **kwargs)


def open_db(
    target: str | Path, *, uri: bool = False, statement_s: float = STATEMENT_S, check: bool = True, **kwargs: Any
) -> sqlite3.Connection:
    """The one way reme opens SQLite (see the module docstring). ``check``: refuse a database holding
    objects reme's schema does not make (ForeignSchema); off only for a database being created."""
    conn = sqlite3.connect(
        target, uri=uri, factory=lambda *a, **k: GuardedConnection(*a, statement_s=statement_s, **k), **kwargs
    )
    try:
        conn.execute("PRAGMA trusted_schema=OFF")  # no SQL function or virtual table runs from the schema
        if hasattr(conn, "setconfig") and hasattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE"):  # Python 3.12+
            conn.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        if check:
            foreign = foreign_objects(conn)
            if foreign:
                raise ForeignSchema(
                    f"the index database holds objects reme never makes ({', '.join(foreign[:5])}); it is not used"
                )
    except BaseException:
        conn.close()
        raise
    return conn


_EXPECTED: frozenset[tuple[str, str]] | None = None


def expected_objects() -> frozenset[tuple[str, str]]:
    """(type, name) of every schema object reme's SCHEMA makes (FTS5 shadow tables and SQLite's own
    autoindexes and sequence table included), read from a scratch database once."""
    global _EXPECTED
    if _EXPECTED is None:
        conn = sqlite3.connect(":memory:")
        try:
            conn.executescript(SCHEMA)
            _EXPECTED = frozenset(conn.execute("SELECT type, name FROM sqlite_master"))
        finally:
            conn.close()
    return _EXPECTED


def foreign_objects(conn: sqlite3.Connection) -> list[str]:
    """Objects of the main schema that reme's SCHEMA does not make and that could run or redirect its
    queries: views, triggers, virtual tables ("view files", "trigger t"); reading sqlite_master parses,
    never runs, them. Plain tables and indexes of other names are inert and left alone: a newer reme
    adds such tables to the same schema (as ``ADDED``), and a database it upgraded must not be thrown
    away, embedding cache and all, by an older process opening it. A missing object is not foreign (an
    empty file, an older database: the version check and the schema creation handle those)."""
    expected = expected_objects()
    return [
        f"{kind} {name}"
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name")
        if (kind, name) not in expected
        and (kind not in ("table", "index") or "VIRTUAL" in (sql or "").upper().split("TABLE", 1)[0])
    ]


def is_damage(exc: BaseException) -> bool:
    """True for SQLite errors that mean a corrupt/foreign file (not a busy lock)."""
    if isinstance(exc, sqlite3.OperationalError):
        msg = str(exc).lower()
        return "malformed" in msg or "not a database" in msg or "no such table" in msg
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError)


def index_log(metadata: Path, message: str) -> None:
    """Append one line to metadata/logs/index.log (best effort: the FS may be read-only)."""
    log.warning(message)
    try:
        logs = metadata / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "index.log", "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {message}\n")
    except OSError:
        pass


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-32000")


def remove_db_files(metadata: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            (metadata / (DB_NAME + suffix)).unlink()
        except FileNotFoundError:
            pass


def connect(metadata: Path) -> tuple[sqlite3.Connection, str]:
    """Open (creating or rebuilding as needed) the index database.

    Returns (connection, mode) where mode is "rw", "ro" (existing index on a read-only filesystem,
    no syncing) or "memory" (nothing usable on disk: a private in-memory index).
    """
    path = metadata / DB_NAME
    for attempt in range(2):
        try:
            conn = open_db(path, check=False, timeout=10.0, check_same_thread=False, isolation_level=None)
        except sqlite3.OperationalError:
            return _fallback(metadata)
        try:
            foreign = foreign_objects(conn)
            if foreign:  # checked before any query touches a table: a view named `files` may never end
                conn.close()
                index_log(
                    metadata,
                    f"index database holds objects reme never makes ({', '.join(foreign[:5])}): "
                    "not used; rebuilding the index from the files",
                )
                remove_db_files(metadata)
                continue
            _configure(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            version = _schema_version(conn)
            if version is not None and version != SCHEMA_VERSION:
                conn.close()
                index_log(metadata, f"index schema {version} != {SCHEMA_VERSION}: rebuilding the index")
                remove_db_files(metadata)
                continue
            if version is None:
                create_schema(conn)
            else:
                add_missing(conn)
            return conn, "rw"
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _read_only(exc) or not os.access(metadata, os.W_OK):
                return _fallback(metadata)
            if attempt == 0:
                index_log(metadata, f"index database damaged ({exc}): rebuilding the index")
                remove_db_files(metadata)
                continue
            raise
    raise DamagedIndex("the index could not be rebuilt")


def reader(metadata: Path, mode: str) -> sqlite3.Connection:
    """A read-only connection of a background thread's own (``mode`` "ro": a read-only filesystem)."""
    uri = (metadata / DB_NAME).resolve().as_uri()  # percent-escapes '?', '#', '%' in the path
    flags = "mode=ro&immutable=1" if mode == "ro" else "mode=ro"
    conn = open_db(
        f"{uri}?{flags}",
        uri=True,
        statement_s=READER_STATEMENT_S,
        timeout=10.0,
        isolation_level=None,
        check_same_thread=False,
    )
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception: the one way the index writes,
    so a failure never leaves the connection inside a transaction holding the write lock."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def create_schema(conn: sqlite3.Connection) -> None:
    """All tables and the version row in ONE transaction, so no process sees a half-made schema."""
    with transaction(conn):
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                conn.execute(stmt)
        # db_id: chunk ids restart at 1 in a re-created database; caches keyed by chunk id (the bm25
        # snapshot) check it so they never mistake a new database's chunk for an old one's
        conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?), ('generation', '0'), ('db_id', ?), "
            "('tokenizer', ?), ('labels', ?), ('chunker', ?), ('scripts', ?)",
            (
                str(SCHEMA_VERSION),
                uuid.uuid4().hex,
                str(TOKENIZER_VERSION),
                str(LABELS_VERSION),
                str(CHUNKER_VERSION),
                str(SCRIPTS_VERSION),
            ),
        )


def add_missing(conn: sqlite3.Connection) -> None:
    """Create the tables of ``ADDED`` an older database lacks (one transaction each)."""
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    for table, statements in ADDED.items():
        if table not in have:
            with transaction(conn):
                for stmt in statements:
                    conn.execute(stmt)


def _read_only(exc: BaseException) -> bool:
    msg = str(exc).lower()
    return "readonly" in msg or "read-only" in msg or "unable to open" in msg or "disk i/o" in msg


def _schema_version(conn: sqlite3.Connection) -> int | None:
    row = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if row is None:
        return None
    got = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(got[0]) if got else -1


def _fallback(metadata: Path) -> tuple[sqlite3.Connection, str]:
    """Read-only filesystem: use the existing index as an immutable snapshot, else build in memory."""
    path = metadata / DB_NAME
    if path.exists():
        try:
            conn = open_db(
                f"{path.resolve().as_uri()}?mode=ro&immutable=1",
                uri=True,
                check_same_thread=False,
                isolation_level=None,
            )
            if _schema_version(conn) == SCHEMA_VERSION:
                log.warning("workspace is read-only: serving the existing index without syncing")
                return conn, "ro"
            conn.close()
        except sqlite3.DatabaseError:
            pass
    conn = open_db(":memory:", check_same_thread=False, isolation_level=None)
    create_schema(conn)
    log.warning("workspace is read-only: building a private in-memory index")
    return conn, "memory"


def rows_in(
    conn: sqlite3.Connection,
    sql: str,
    values: Sequence[Any],
    *,
    before: Sequence[Any] = (),
    after: Sequence[Any] = (),
    size: int = 500,
) -> Iterator[tuple]:
    """The rows of ``sql`` for every value, asked ``size`` values at a time (SQLite's bound-parameter
    limit): ``{marks}`` in ``sql`` stands for one part's placeholders, ``before``/``after`` for the
    parameters around them."""
    for start in range(0, len(values), size):
        part = list(values[start : start + size])
        yield from conn.execute(sql.format(marks=",".join("?" * len(part))), (*before, *part, *after))


def get_meta(conn: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return row[0] if row else default


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value)
    )


def generation(conn: sqlite3.Connection) -> int:
    return int(get_meta(conn, "generation", "0") or 0)


def version(conn: sqlite3.Connection) -> tuple[str, int]:
    """(db_id, generation), what an in-memory copy of the index holds for: a database re-created after
    damage or a reindex counts its generations from 0 again."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'db_id')").fetchall())
    return meta.get("db_id") or "", int(meta.get("generation") or 0)


def bump_generation(conn: sqlite3.Connection) -> None:
    """Inside a write transaction: tell every process (and the vector store) that the index changed."""
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")


def file_record(conn: sqlite3.Connection, path: str) -> Any:
    """The catalog's row of ``path`` as a records.FileRecord, or None."""
    import json

    from .records import FileRecord

    r = conn.execute(
        "SELECT path, mtime_ns, size, hash, name, description, extra, date, indexed FROM files WHERE path=?", (path,)
    ).fetchone()
    if r is None:
        return None
    try:
        extra = json.loads(r[6]) if r[6] else {}
    except ValueError:
        extra = {}
    return FileRecord(r[0], r[1], r[2], r[3], r[4], r[5], extra, r[7], bool(r[8]))
