"""The Index facade: one object per process over the derived index in ``metadata/``.

Files are the truth; this is a cache of them. ``sync`` compares the layers with the catalog (a stat
walk: at most once a second before a query, or, in a server that ``watch``es, only the paths the OS
reported), ``update_paths`` re-indexes what a tool just wrote. Writers serialise on
``metadata/index.lock``; readers use SQLite's WAL snapshots and reconcile the shared vector file when the
generation counter moves or ``vector_log`` announces new vectors. Chunks without a vector are handed
to the workspace's one low-priority embedding worker (``catchup``).
"""

from __future__ import annotations

import contextlib

import json
import os
import resource
import sqlite3
import stat
import threading
import time
from typing import Any, Callable, Iterable, Iterator

from ..config import Config
from ..errors import InvalidInputError, ReMeError
from ..notes.documents import DOCUMENT_EXTS, MAX_DOCUMENT_BYTES
from ..workspace import Workspace, own_stat
from . import catalog, catchup, embedder as emb, keyword, tiers
from .budget import Budget, Selection, select
from .bm25 import BM25Index, ChunkNotes, search_notes_fts, trim_heap
from .catalog import index_log
from .graph import LinkGraph, neighbors
from .records import (FileRecord, Graph, GraphEdge, GraphNode, Hit, LinkRecord, Neighbor, NodeHit, Recall,
                      SearchResponse)
from .sync import CONFLICT_KEY, HARD_LINK_KEY, WALK_LAYERS, SyncReport, apply_changes, walk, wants_chunks
from .vectors import VectorStore
from .watch import Watcher

__all__ = [
    "Index", "SyncReport", "FileRecord", "LinkRecord", "Neighbor", "Hit", "SearchResponse", "Recall", "NodeHit",
    "Graph", "GraphNode", "GraphEdge",
]

SYNC_INTERVAL = 1.0  # seconds between stat walks before queries when not watching (freshness target is 2 s)
EMBED_BATCH = 8
INLINE_FILES = 300  # a server indexes more changed files than this at once in the background
TEAM_INLINE_FILES = 20  # a team index (budget): more than this, or any document, in the background
IDLE_RELEASE_S = 120.0  # an idle server lets go of its models and in-memory indexes after this
VECTOR_LOG_KEEP = 20000  # rows of vector_log kept (announcements of new vectors)


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class _Stopped(Exception):
    """The index is closing: a background write stops after its last committed batch."""


class Index:
    def __init__(self, ws: Workspace, config: Config, *, background_embedding: bool = True,
                 budget: Budget | None = None):
        """``budget``: a repository's team memory -- what is indexed is bounded (budget.py) and every
        write but a handful of files runs in the background, so its content never holds a query."""
        self.ws = ws
        self.config = config
        self.metadata = ws.metadata
        self.background_embedding = background_embedding
        self.budget = budget
        self._selection: Selection | None = None  # the budget's last choice of files
        self._unextracted: set[str] = set()  # documents left out: the session's extraction time is spent
        self._extract_left = budget.extract_s if budget is not None else 0.0
        self._bg_progress = (0, 0)  # (files written, files) of the background write
        self._rlock = threading.RLock()  # one sqlite connection per Index, shared by threads
        self._conn, self.mode = catalog.connect(self.metadata)
        self._writer = self._make_lock()
        self._last_sync = 0.0
        self._synced = False  # this process has compared the files with the index at least once
        self._catalog_cache: tuple[Any, dict[str, tuple[int, int]], set[str], list[str]] | None = None
        self._closed = False
        self.model_id = emb.model_id_for(config)  # validates config.embedding early
        self._query_embedder: emb.Embedder | None = None
        self._passage_embedder: emb.Embedder | None = None
        self._last_query = time.monotonic()
        self._released = False  # release_idle let go of models and in-memory indexes; no query since
        self._embed_error: str | None = None
        self._vectors = VectorStore(self.metadata, self.model_id, None) if self.model_id else None
        self._embed_thread: threading.Thread | None = None
        self._chunk_count = (-1, 0)  # (generation, chunks): the coverage denominator
        self._note_map: tuple[int, Any] = (-1, None)  # (generation, ChunkNotes)
        self._embed_wake = threading.Event()
        self._stop = threading.Event()
        self._watcher: Watcher | None = None
        self._bg_write: threading.Thread | None = None  # a burst being indexed in the background
        self._bg_files = 0
        # in-memory BM25 (same answers as FTS5's bm25(), ~100x faster at 50k chunks); FTS5 answers until it is loaded
        self._bm25: BM25Index | None = BM25Index(self.metadata, self.mode) if self.mode in ("rw", "ro") else None
        # the link graph in memory for search's expansion; the database answers until it is built
        self._links = LinkGraph(lambda: catalog.reader(self.metadata, self.mode)) if self.mode in ("rw", "ro") else None
        if self.model_id and self.mode == "rw":
            with self._guard():
                catalog.set_meta(self._conn, "model", self.model_id)

    # ---- plumbing ---------------------------------------------------------------------------------
    def _make_lock(self) -> Any:
        if self.mode != "rw":
            return _NoLock()
        from filelock import FileLock

        return FileLock(str(self.metadata / "index.lock"), timeout=60)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[sqlite3.Connection]:
        """Run against the connection; a damaged database is rebuilt once, transparently."""
        if self._closed:
            raise ReMeError("the index is closed")
        with self._rlock:
            try:
                yield self._conn
            except sqlite3.DatabaseError as exc:
                if "interrupted" in str(exc):  # catalog.open_db's deadline
                    raise ReMeError(f"an index query ran longer than {catalog.STATEMENT_S:.0f} s and was stopped; "
                                    "run `reme-cc reindex` if it happens again") from None
                if not catalog.is_damage(exc) or self.mode != "rw":
                    raise ReMeError(f"index database error: {exc}; run `reme-cc reindex`") from None
                self._rebuild_after_damage(str(exc))
                raise _Retry() from None

    def _rebuild_after_damage(self, why: str) -> None:
        index_log(self.metadata, f"index database damaged ({why}): rebuilding the index")
        with self._writer:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            catalog.remove_db_files(self.metadata)
            self._conn, self.mode = catalog.connect(self.metadata)
        self._last_sync = 0.0
        self._synced = False
        self._catalog_cache = None
        if self._vectors is not None:
            self._vectors = VectorStore(self.metadata, self.model_id or "", None)

    def _run(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        for attempt in range(2):
            try:
                with self._guard() as conn:
                    return fn(conn)
            except _Retry:
                if attempt:
                    raise ReMeError("the index database keeps failing; delete metadata/index.sqlite") from None
                self.sync(force=True)
        raise AssertionError("unreachable")

    # ---- sync ------------------------------------------------------------------------------------
    def sync(self, force: bool = False, disk: dict[str, tuple[int, int]] | None = None) -> SyncReport:
        """Bring the index up to date with the files (incremental; cheap when nothing changed).
        ``disk``: a walk already made (the watcher's periodic check) instead of walking now."""
        t0 = time.perf_counter()
        report = SyncReport()
        if self.mode == "ro":
            return report
        if disk is None:
            disk = walk(self.ws.root)
        if self.budget is not None:
            self._selection = select(self.budget, disk, self._unextracted)
            disk = self._selection.kept

        def diff(conn: sqlite3.Connection) -> dict[str, tuple[int, int] | None]:
            stats, stale = self._catalog_snapshot(conn)
            if not stale and disk == stats:
                return {}  # the common case: one C-level dict comparison
            todo: dict[str, tuple[int, int] | None] = {p: disk.get(p) for p in stale}
            for path, st in stats.items():
                now = disk.get(path)
                if now != st:
                    todo[path] = now  # changed, or None = deleted
            for path, st in disk.items():
                if path not in stats and path not in stale:
                    todo[path] = st
            return todo

        todo = self._run(diff)
        if todo:
            self._write(todo, None, report)  # paths as of the writer lock
        self._last_sync = time.monotonic()
        self._synced = True
        report.seconds = time.perf_counter() - t0
        return report

    def _catalog_snapshot(self, conn: sqlite3.Connection) -> tuple[dict[str, tuple[int, int]], set[str]]:
        """The files table as ({path: (mtime_ns, size)}, {paths to read again though their stat is the
        same}), re-read only when the database moved on (generation + last write stamp; read before the
        rows, so a commit in between only causes one extra reload). Read again: a file whose indexed
        flag disagrees with the config, and a hard-linked one whose other links are gone now. A file
        kept out of search for its content (hard links, conflict markers) is not read again until it
        changes: that rewrote it, and moved the generation, on every walk."""
        key = tuple(conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'last_sync') ORDER BY key"))
        cached = self._catalog_cache
        if cached is None or cached[0] != key:
            stats: dict[str, tuple[int, int]] = {}
            stale: set[str] = set()
            linked: list[str] = []
            held = "indexed = 0 AND json_valid(extra) AND json_type(extra, '$.{}') IS NOT NULL"
            for path, mtime_ns, size, indexed, hard_linked, conflicted in conn.execute(
                    f"SELECT path, mtime_ns, size, indexed, {held.format(HARD_LINK_KEY)}, {held.format(CONFLICT_KEY)} "
                    "FROM files"):
                if hard_linked:
                    linked.append(path)
                elif not conflicted and bool(indexed) != wants_chunks(path, size, self.config):
                    stale.add(path)
                    continue
                stats[path] = (mtime_ns, size)
            cached = self._catalog_cache = (key, stats, stale, linked)
        _, stats, stale, linked = cached
        relinked = {p for p in linked if (st := own_stat(self.ws.root, p)) is not None and st.st_nlink == 1}
        return stats, (stale | relinked) if relinked else stale

    def _write(self, todo: dict[str, tuple[int, int] | None], all_paths: set[str] | None, report: SyncReport,
               progress: Callable[[int, int], None] | None = None) -> None:
        """``all_paths=None``: the catalog's paths read under the writer lock, plus/minus ``todo`` (another
        process may have added or deleted files while this one waited for the lock)."""
        # a server: big batches in the background, at low priority; a team index: all but a handful of files
        polite = self._watcher is not None or self.budget is not None
        background = self.mode == "rw" and all_paths is None and (
            len(todo) > (INLINE_FILES if self.budget is None else TEAM_INLINE_FILES)
            or (self.budget is not None and any(p.lower().endswith(DOCUMENT_EXTS) for p in todo)))

        def do(conn: sqlite3.Connection, writer: Any = self._writer, track: Any = progress) -> None:
            with writer:
                paths = all_paths
                if paths is None:
                    known = {r[0] for r in conn.execute("SELECT path FROM files")}
                    paths = (known | {p for p, st in todo.items() if st is not None}) - {
                        p for p, st in todo.items() if st is None}
                apply_changes(conn, self.ws.root, self.config, todo, paths, report, track, polite=polite,
                              metadata=self.metadata)

        if polite and background:
            self._write_in_background(todo, do)
            return
        try:
            self._run(do)
        except OSError as exc:  # lock file on a read-only filesystem, etc.
            raise ReMeError(f"cannot update the index in {self.metadata}: {exc.strerror or exc}") from None
        if report.touched or report.chunks:
            self._kick_embedding()

    def _write_in_background(self, todo: dict[str, tuple[int, int] | None],
                             do: Callable[[sqlite3.Connection, Any, Any], None]) -> None:
        """A burst (a `git checkout`, a folder copied in), or a team index's write: indexed by a thread on
        its own connection, so queries keep answering from the index as it was (with a note in ``status``
        and, for a team, in the answer: ``indexing()``) instead of waiting. Closing stops it after the
        batch being written."""
        if self._bg_write is not None and self._bg_write.is_alive():
            return  # the running batch's walk-and-diff catches these too on its next round

        def track(done: int, total: int) -> None:
            self._bg_progress = (done, total)
            if self._stop.is_set():
                raise _Stopped()

        def run() -> None:
            from .polite import lower_priority

            lower_priority()
            try:
                if self.budget is not None:
                    self._extract_within_budget(todo)
                conn = _open_rw(self.metadata)
                try:
                    do(conn, self._make_lock(), track)
                finally:
                    conn.close()
                self._kick_embedding()
            except _Stopped:
                index_log(self.metadata, f"background indexing stopped (closing) after {self._bg_progress[0]} files")
            except Exception as exc:  # noqa: BLE001 - the next query's check tries again
                index_log(self.metadata, f"background indexing of {len(todo)} files failed: {exc}")
            finally:
                self._bg_files = 0
                self._last_sync = 0.0  # and the next query looks again (changes made meanwhile)

        self._bg_files = len(todo)
        self._bg_progress = (0, len(todo))
        index_log(self.metadata, f"{len(todo)} files changed at once: indexing them in the background")
        self._bg_write = threading.Thread(target=run, name="reme-index-burst", daemon=True)
        self._bg_write.start()

    def watch(self, wait: float = 0.0) -> dict[str, object]:
        """Learn about changed files from the OS from now on (a long-lived process: the MCP server)
        instead of walking before queries; until the watches are in place queries answer from this
        process's last sync (the watcher's first walk then brings what changed; before any, they walk),
        and whenever they fail queries walk as before. ``wait``: seconds to wait for the watches (tests)."""
        if self._watcher is None and self.mode == "rw":
            self._watcher = Watcher(self.ws.root, WALK_LAYERS, lambda m: index_log(self.metadata, m), walk)
        if self._watcher is not None:
            self._watcher.start(wait)
        return self.freshness()

    def indexing(self) -> tuple[int, int] | None:
        """(files written, files) while a background write runs, else None."""
        if self._bg_write is not None and self._bg_write.is_alive():
            return self._bg_progress
        return None

    def left_out(self) -> str | None:
        """A team index: what its budget left out, as one line for the answer (None: nothing)."""
        return self._selection.note() if self._selection is not None else None

    def _extract_within_budget(self, todo: dict[str, tuple[int, int] | None]) -> None:
        """A team index: extract the documents of ``todo`` now, one at a time, while the session's
        extraction time lasts (``team_extract_s``; a hostile PDF costs up to documents.TIMEOUT_S).
        Past it, the rest are dropped from ``todo`` and left out of the catalog for this session."""
        from ..notes.documents import text_view
        from .sync import _no_follow

        for path, st in list(todo.items()):
            if st is None or not path.lower().endswith(DOCUMENT_EXTS) or st[1] > MAX_DOCUMENT_BYTES:
                continue
            if self._stop.is_set():
                raise _Stopped()
            if self._extract_left <= 0:
                del todo[path]
                self._unextracted.add(path)
                continue
            started = time.monotonic()
            try:
                with open(self.ws.root / path, "rb", opener=_no_follow) as fh:
                    data = fh.read()
            except OSError:
                continue  # gone: the write treats it as deleted
            text_view(self.metadata, path, data)  # cached by content hash: the write reads it from there
            self._extract_left -= time.monotonic() - started

    def freshness(self) -> dict[str, object]:
        if self._watcher is None:
            return {"mode": "walk", "reason": "not watching (only a server watches the files)"}
        info = self._watcher.info()
        if self._bg_files:
            info["indexing_in_background"] = self._bg_files
        return info

    def maybe_sync(self) -> None:
        """Before a query: what changed since the last one (notifications), else a walk at most once a second."""
        self._last_query = time.monotonic()
        self._released = False
        if self._bg_write is not None and self._bg_write.is_alive():
            return  # a burst is being indexed; queries answer from the index as it is meanwhile
        w = self._watcher
        if w is not None and w.starting and self._synced:
            # its first walk, under way, brings what changed since (a walk here too: ~0.5-1 s at 100k
            # files); a query before any sync of this process walks, or it would search a stale index
            return
        if w is not None:
            changes = w.take()
            if not changes.walk:
                if changes.disk is not None:
                    self.sync(disk=changes.disk)
                if changes.paths:
                    self._update(changes.paths, only_changed=True)
                return
            if w.mode == "notify":  # overflow: more changed than is worth listing
                self.sync()
                return
        if time.monotonic() - self._last_sync >= SYNC_INTERVAL:
            self.sync()

    def update_paths(self, paths: list[str]) -> None:
        """Re-index these workspace paths now (written, moved or deleted by a tool)."""
        self._update(paths)

    def _update(self, paths: Iterable[str], only_changed: bool = False) -> None:
        """``only_changed``: skip paths whose size and mtime the catalog already has (notified paths
        include the server's own writes, already indexed)."""
        if self.mode == "ro" or not paths:
            return
        todo: dict[str, tuple[int, int] | None] = {}
        for rel in paths:
            rel = self.ws.normalize(rel)
            st = own_stat(self.ws.root, rel)
            if st is not None and stat.S_ISDIR(st.st_mode):  # a moved/created folder: everything under it
                todo.update(walk(self.ws.root, (rel,)))
            elif not rel.startswith(("daily/", "digest/", "resource/", "session/")) or os.path.basename(rel).startswith("."):
                continue
            elif st is not None and stat.S_ISREG(st.st_mode):
                todo[rel] = (st.st_mtime_ns, st.st_size)
                continue
            else:  # gone (a file or a folder), or not the workspace's own file: out of the index
                todo[rel] = None
            # a folder's or a gone path's files that the catalog holds and the disk no longer has
            for sub in self._run(lambda c: [r[0] for r in c.execute(
                    "SELECT path FROM files WHERE path LIKE ? ESCAPE '\\'", (keyword.like_prefix(rel),))]):
                todo.setdefault(sub, None)
        if only_changed and todo:
            stats, stale = self._run(self._catalog_snapshot)
            todo = {p: st for p, st in todo.items() if p in stale or stats.get(p) != st}
        if not todo:
            return
        self._write(todo, None, SyncReport())

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Wipe the derived index (keeping the embedding cache, keyed by content) and rebuild it."""
        if self.mode == "ro":
            raise ReMeError("the workspace is read-only: cannot rebuild its index")
        t0 = time.perf_counter()

        def wipe(conn: sqlite3.Connection) -> None:
            with self._writer, catalog.transaction(conn):
                for table in ("files", "chunks", "chunks_fts", "links", "nodes_fts"):
                    conn.execute(f"DELETE FROM {table}")
                catalog.bump_generation(conn)
                for f in self.metadata.glob("vectors-*"):
                    with contextlib.suppress(OSError):
                        f.unlink()

        self._run(wipe)
        if self._bm25 is not None:
            self._bm25.discard()
        if self._vectors is not None:
            self._vectors = VectorStore(self.metadata, self.model_id or "", None)
        disk = walk(self.ws.root)
        report = SyncReport()
        if progress:
            progress(0, len(disk))
        self._write(dict(disk), set(disk), report, progress)
        self._last_sync, self._synced = time.monotonic(), True
        if self._bm25 is not None:  # build + save the BM25 snapshot now, so the next process just loads it
            try:
                self._bm25.build(use_snapshot=False)
            except Exception as exc:  # noqa: BLE001 - FTS5 answers; the next search builds it again
                index_log(self.metadata, f"bm25 build after reindex failed: {exc}")
        report.seconds = time.perf_counter() - t0
        return report

    # ---- embeddings --------------------------------------------------------------------------------
    def _kick_embedding(self) -> None:
        """New chunks: hand them to the workspace's one low-priority embedding worker (a private
        in-memory index, which no other process can see, embeds in a thread of its own)."""
        if not self.model_id or not self.background_embedding or self.mode == "ro":
            return
        if self.mode == "rw":
            catchup.ensure_worker(self.ws, self.config)
            return
        self._embed_wake.set()
        if self._embed_thread is None or not self._embed_thread.is_alive():
            self._embed_thread = threading.Thread(target=self._embed_loop, name="reme-embed", daemon=True)
            self._embed_thread.start()

    def _embed_loop(self) -> None:
        from .polite import lower_priority

        lower_priority()
        while not self._stop.is_set():
            self._embed_wake.clear()
            try:
                self.embed_pending(stop=self._stop)
            except Exception as exc:  # noqa: BLE001 - background: record, retry on next change
                self._embed_error = str(exc)
                index_log(self.metadata, f"embedding failed: {exc}")
            self._embed_wake.wait(timeout=30.0)

    def warm_vectors(self) -> None:
        """Map the vectors (the shared file) and load the query model now, not in the first search."""
        if self._vectors is None:
            return
        self._refresh_vectors()
        self.share_vectors()
        if self._vectors.count:
            self._get_embedder("query")

    def share_vectors(self) -> None:
        """Many vectors only in this process's memory (no shared file yet, or an old one): write a new
        shared file, which this and every other process then map instead."""
        if self._vectors is not None and self.mode == "rw" and self._vectors.needs_save:
            self._vectors.save(self._generation())

    def catch_up(self) -> int | None:
        """A long-lived process (the server): make sure the backlog is being embedded, whoever made it.
        Returns the worker's pid when one was started."""
        if not self.model_id or not self.background_embedding or self.mode != "rw":
            return None
        if self._released:
            return None  # released while idle: checked again once a query has come
        embedded, total = self.vector_coverage()
        self.share_vectors()
        return catchup.ensure_worker(self.ws, self.config) if total > embedded else None

    def vector_coverage(self) -> tuple[int, int]:
        """(distinct chunk texts with a vector for the current model, distinct chunk texts), from the
        vector store's own reconciliation (no scan of the embeddings table)."""
        if self._vectors is None:
            return 0, 0
        self._refresh_vectors()
        vectors = self._vectors
        return self._run(vectors.coverage)

    def embed_pending(self, limit: int | None = None, stop: threading.Event | None = None) -> int:
        """Embed chunks that have no vector for the current model yet, here and now, unless another
        process is at it (metadata/embed.lock). Returns how many chunks were embedded."""
        if not self.model_id or self.mode == "ro":
            return 0
        from filelock import Timeout

        try:
            with (_NoLock() if self.mode == "memory" else catchup.lock(self.metadata)):
                return self.embed_backlog(limit=limit, stop=stop)
        except Timeout:
            return 0  # another process is embedding; its vectors reach us through vector_log

    def embed_backlog(self, report: Callable[[int], None] | None = None, limit: int | None = None,
                      stop: threading.Event | None = None) -> int:
        """The embedding loop (the caller holds the embed lock): batches of EMBED_BATCH chunk texts,
        each one transaction that stores the vectors and announces them in vector_log."""
        if not self.model_id or self.mode == "ro":
            return 0
        model = self._get_embedder("passage")
        conn = self._conn if self.mode == "memory" else _open_rw(self.metadata)
        done = 0
        try:
            while (limit is None or done < limit) and not (stop and stop.is_set()):
                with (self._rlock if self.mode == "memory" else _NoLock()):
                    rows = conn.execute(
                        "SELECT c.hash, MIN(c.text) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
                        "WHERE e.model = ? AND e.hash = c.hash) GROUP BY c.hash LIMIT ?",
                        (self.model_id, EMBED_BATCH),
                    ).fetchall()
                if not rows:
                    break
                vecs = model.passages([r[1] for r in rows])
                with (self._rlock if self.mode == "memory" else _NoLock()):
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        conn.executemany(
                            "INSERT OR IGNORE INTO embeddings(model, hash, vector) VALUES (?,?,?)",
                            [(self.model_id, r[0], vecs[i].astype("float32").tobytes()) for i, r in enumerate(rows)],
                        )
                        conn.executemany("INSERT INTO vector_log(model, hash) VALUES (?,?)",
                                         [(self.model_id, r[0]) for r in rows])
                        # keep the log short: a reader that falls behind its start probes everything once
                        conn.execute("DELETE FROM vector_log WHERE seq <= (SELECT MAX(seq) FROM vector_log) - ?",
                                     (VECTOR_LOG_KEEP,))
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                done += len(rows)
                if report:
                    report(len(rows))
        finally:
            if conn is not self._conn:
                conn.close()
        if done and self._vectors is not None:
            self._refresh_vectors()
            self._vectors.save(self._generation())  # the warm start of every other process
        return done

    def _get_embedder(self, role: str) -> emb.Embedder:
        # Queries get their own model handle so a running background batch never delays a search.
        attr = "_query_embedder" if role == "query" else "_passage_embedder"
        with self._rlock:
            model = getattr(self, attr, None)
            if model is None:
                model = emb.make_embedder(self.config)
                setattr(self, attr, model)
            return model  # type: ignore[return-value]

    def release_idle(self, idle: float | None = None) -> bool:
        """After ``idle`` seconds without a query, let go of what the next query can load again from
        the shared files: the query model (~0.1 s to reload), the vectors (the shared file's mapping) and
        the in-memory BM25 (its snapshot, in the background; FTS5 answers meanwhile). An idle window
        then holds little more than the interpreter. Returns whether anything was released."""
        idle = float(os.environ.get("REME_IDLE_RELEASE_S", IDLE_RELEASE_S)) if idle is None else idle
        with self._rlock:
            if self._closed or time.monotonic() - self._last_query < idle:
                return False
            held = (self._query_embedder is not None or self._passage_embedder is not None
                    or (self._vectors is not None and self._vectors.count > 0)
                    or (self._bm25 is not None and self._bm25.ready)
                    or (self._links is not None and self._links.ready))
            if not held:
                return False
            self._query_embedder = self._passage_embedder = None
            if self._vectors is not None:
                self._vectors = VectorStore(self.metadata, self.model_id or "", None)
            if self._bm25 is not None:
                self._bm25.discard()
            if self._links is not None:
                self._links.discard()
            self._released = True
        import gc

        gc.collect()
        trim_heap()
        return True

    def trim_memory(self) -> None:
        """Hand back what a server need not keep: SQLite's page cache (FTS5 answers before the BM25
        snapshot was in fill it by tens of MB) and glibc's free heap."""
        with contextlib.suppress(ReMeError, sqlite3.Error):
            self._run(lambda conn: conn.execute("PRAGMA shrink_memory"))
        trim_heap()

    def _generation(self) -> int:
        return self._run(catalog.generation)

    def _refresh_vectors(self) -> None:
        if self._vectors is None:
            return
        gen = self._generation()
        with self._rlock:
            self._vectors.refresh(self._conn, gen)

    # ---- queries ---------------------------------------------------------------------------------
    def _keyword_search(self, conn: sqlite3.Connection, query: str, k: int, start: str | None = None,
                        end: str | None = None) -> list[tuple[int, float]]:
        """Top-k BM25 (chunk id, score): the in-memory index when it is ready, else FTS5 (same answer)."""
        if self._bm25 is not None:
            hits = self._bm25.search(conn, query, k, start, end)
            if hits is not None:
                return hits
        return keyword.search_chunks(conn, query, k, start, end)

    def read(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """``fn(conn)`` on the index database, for read-only queries of the layers above."""
        return self._run(fn)

    def recall(self, query: str, k: int, start: str | None = None, end: str | None = None,
               modes: tuple[str, ...] = ("vector", "keyword"), folder: str | None = None,
               notes: bool = False, rare: int = 0) -> Recall:
        """Both recall halves for one query: BM25 top-k in this thread while the query is embedded in
        another, then vector top-k (date range and folder applied to both); with ``notes`` also the top-k
        notes by whole-note BM25 (read in the same transaction as the chunks) and the candidates' notes;
        with ``rare`` the query terms in at most that many chunks. Embedding failures leave the
        vector half empty with a warning; ``coverage`` is the share of chunks that have a vector now."""
        out = Recall(keyword_searched="keyword" in modes)
        vectors = self._vectors if "vector" in modes else None
        qvec: dict[str, Any] = {}
        worker = None
        if vectors is not None:
            self._refresh_vectors()
            if vectors.count:
                def embed() -> None:
                    try:
                        qvec["v"] = self._get_embedder("query").query(query)
                    except Exception as exc:  # noqa: BLE001 - vectors are optional: fall back to BM25
                        qvec["error"] = str(exc)

                worker = threading.Thread(target=embed, daemon=True)
                worker.start()

        def keyword_and_filter(conn: sqlite3.Connection) -> tuple[list[tuple[int, float]], list[int] | None, int]:
            kw: list[tuple[int, float]] = []
            if "keyword" in modes:
                # a folder filter (the dream's recall over digest/) is answered exactly by FTS5
                kw = (keyword.search_chunks(conn, query, k, start, end, keyword.like_prefix(folder)) if folder
                      else self._keyword_search(conn, query, k, start, end))
                if notes:
                    out.notes = (self._bm25.search_notes(conn, query, k, start, end, folder) if self._bm25 is not None
                                 else search_notes_fts(conn, query, k, start, end, keyword.like_prefix(folder) if folder else None))
            allowed = None
            if worker is not None and (start or end or folder):
                sql, args = "SELECT c.id FROM chunks c", []
                if start or end:
                    sql += " JOIN files f ON f.path = c.path WHERE f.date BETWEEN ? AND ?"
                    args += [start or "0000-00-00", end or "9999-99-99"]
                if folder:
                    sql += (" AND" if args else " WHERE") + " c.path LIKE ? ESCAPE '\\'"
                    args.append(keyword.like_prefix(folder))
                allowed = [r[0] for r in conn.execute(sql, args)]
            return kw, allowed, self._chunk_total(conn) if vectors is not None else 0  # the coverage's denominator

        out.keyword, allowed, total = self._run(keyword_and_filter)
        if worker is not None:
            worker.join()
        if "error" in qvec:
            out.warnings.append(f"vector search unavailable ({qvec['error']}); keyword results only")
        elif vectors is not None and self.model_id:
            # one snapshot: vectors that arrive meanwhile (another thread's refresh) must not make a
            # keyword hit count as embedded when the vector search could not find it (it would lose
            # its stand-in vector rank), nor change the coverage the ranks are read with
            with self._rlock:
                if "v" in qvec:
                    out.vector = vectors.search(qvec["v"], k, allowed)
                count = vectors.count
                ids = vectors.ids() if notes and count < total else None
                have = frozenset([c for c, _ in out.keyword if c in vectors] + [c for c, _ in out.vector])
            out.coverage = min(1.0, count / total) if total else 1.0
            out.embedded = have.__contains__
            if notes:
                out.note_coverage = 1.0 if out.coverage >= 1.0 else self._note_coverage(ids)
        if rare and out.keyword and out.vector:
            out.rare_terms = self._run(lambda conn: keyword.rare_terms(conn, query, rare))
        if notes and (out.keyword or out.vector):
            out.paths = self.chunk_paths(list(dict.fromkeys([c for c, _ in out.vector] + [c for c, _ in out.keyword])))
            out.chunks = self.chunk_total()
        return out

    def _note_coverage(self, ids: Any) -> float:
        """Share of notes with a vector in at least one chunk: the coverage of the note term (a long note
        is embedded in part long before all of its chunks are)."""
        def share(conn: sqlite3.Connection) -> float:
            got = self._bm25.note_share(conn, ids) if self._bm25 is not None else None
            if got is None:  # the in-memory keyword index is not in: the same share from SQL (~75 ms at 49k chunks)
                gen = catalog.generation(conn)
                if self._note_map[0] != gen:
                    self._note_map = (gen, ChunkNotes(conn))
                got = self._note_map[1].share(ids)
            return got

        return self._run(share)

    def rare_term_chunks(self, query: str, max_df: int) -> set[int]:
        return self._run(lambda conn: keyword.rare_term_chunks(conn, query, max_df))

    def chunk_total(self) -> int:
        return self._run(self._chunk_total)

    def _chunk_total(self, conn: sqlite3.Connection) -> int:
        gen = catalog.generation(conn)
        if self._chunk_count[0] != gen:
            self._chunk_count = (gen, conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        return self._chunk_count[1]

    def load_hits(self, ranked: list[tuple[int, tuple[float, float, float]]], expand: bool = True) -> list[Hit]:
        """Hits for (chunk id, (score, vector part, keyword part)) in this order; chunks removed by a
        concurrent writer since recall are skipped."""
        def load(conn: sqlite3.Connection) -> list[Hit]:
            rows = tiers.chunk_rows(conn, [cid for cid, _ in ranked])  # every hit's row in one query
            hits = []
            for cid, (score, v, w) in ranked:
                row = rows.get(cid)
                if row is None:
                    continue
                path, start, end, text, project = row
                hits.append(Hit(path, start, end, round(score, 6), round(v, 6), round(w, 6), text, project=project))
            if expand and hits:  # every hit's neighbors: from the link graph in memory, else one batch of queries
                paths = [h.path for h in hits]
                around = self._links.neighbors(conn, paths) if self._links is not None else neighbors(conn, paths)
                for hit in hits:
                    hit.outlinks, hit.outlinks_total, hit.inlinks, hit.inlinks_total = around[hit.path]
            return hits

        return self._run(load)

    def chunk_paths(self, ids: list[int]) -> dict[int, str]:
        """{chunk id: file path} (note-level signals group chunks by their file). A chunk's path never
        changes (a changed file gets new chunk ids), so the in-memory BM25 index answers for the live
        chunks it holds and the database for the rest."""
        def q(conn: sqlite3.Connection) -> dict[int, str]:
            known = self._bm25.paths(conn, ids) if self._bm25 is not None else {}
            missing = [cid for cid in ids if cid not in known]
            if missing:
                known.update(tiers.chunk_paths(conn, missing))
            return known

        return self._run(q)

    def chunk_texts(self) -> dict[str, str]:
        """{content hash: text} of every chunk (the keys of the embedding cache)."""
        return self._run(lambda conn: dict(conn.execute("SELECT hash, MIN(text) FROM chunks GROUP BY hash")))

    def set_embeddings(self, vectors: dict[str, Any]) -> None:
        """Add these {content hash: vector} to the embedding cache of the current model, announced in
        vector_log like the embedding worker's (benchmarks and tests raise the coverage with it, a
        nested subset at a time; vectors must be L2-normalized)."""
        if not self.model_id or self.mode == "ro":
            raise ReMeError("set_embeddings needs a writable index with an embedding model")

        def do(conn: sqlite3.Connection) -> None:
            with self._writer, catalog.transaction(conn):
                conn.execute("DELETE FROM embeddings WHERE model = ?", (self.model_id,))
                conn.executemany("INSERT INTO embeddings(model, hash, vector) VALUES (?,?,?)",
                                 [(self.model_id, h, v.astype("float32").tobytes()) for h, v in vectors.items()])
                # announced like any new vector (other processes probe only what vector_log names)
                conn.executemany("INSERT INTO vector_log(model, hash) VALUES (?,?)", [(self.model_id, h) for h in vectors])
                catalog.bump_generation(conn)

        self._run(do)
        # vectors were also removed, which no reader reconciles (the cache only ever grows otherwise):
        # this process starts its vector store over, without the shared file of the previous set
        if self._vectors is not None:
            with contextlib.suppress(OSError):
                self._vectors.path.unlink()
            self._vectors = VectorStore(self.metadata, self.model_id, None)
        self._refresh_vectors()

    def warm_keyword(self) -> None:
        """Start loading/building the in-memory BM25 index in the background (server start)."""
        if self._bm25 is not None:
            self._bm25.start()

    def warm_links(self) -> None:
        """Start building the in-memory link graph in the background (server start, after the sync)."""
        if self._links is not None:
            self._links.start()

    def search(self, query: str, limit: int = 5, min_score: float = 0.0, start_date: str | None = None,
               end_date: str | None = None, folder: str | None = None, *,
               tier_of: Callable[[Any], int | None] | None = None) -> SearchResponse:
        from .search import run_search

        return run_search(self, query, limit, min_score, start_date, end_date, folder=folder, tier_of=tier_of)

    def traverse(self, seeds: list[str], depth: int = 1, direction: str = "both") -> Graph:
        from .graph import traverse

        self.maybe_sync()
        return self._run(lambda conn: traverse(conn, seeds, depth, direction))

    def node_search(self, query: str, limit: int = 20, *,
                    tier_of: Callable[[Any], int | None] | None = None) -> list[NodeHit]:
        """Digest nodes matching ``query``; ``tier_of`` orders them by their project (see tiers.py)."""
        from . import keyword, tiers

        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("node_search: query is empty; give a name or a few words")
        if not 1 <= limit <= 200:
            raise InvalidInputError(f"node_search: limit must be between 1 and 200 (got {limit})")
        self.maybe_sync()

        def q(conn: sqlite3.Connection) -> list[NodeHit]:
            found = keyword.search_nodes(conn, query, limit * 3 if tier_of else limit)
            projects = tiers.file_projects(conn, {path for path, _ in found})
            if tier_of is not None:
                found = tiers.order_by_tier(found, tiers.tier_by_path(lambda f: f[0], projects, tier_of))[:limit]
            out = []
            for path, score in found:
                rec = self._file_info(conn, path)
                out.append(NodeHit(path, rec.name if rec else None, rec.description if rec else None, round(score, 4),
                                   projects.get(path)))
            return out

        return self._run(q)

    def inbound_links(self, target: str, *, prefix: bool = False) -> list[LinkRecord]:
        """Links resolving to ``target`` (or, with prefix=True, to anything under the folder ``target/``),
        plus dangling links written literally as that path."""
        target = self.ws.normalize(target)
        self.maybe_sync()

        def q(conn: sqlite3.Connection) -> list[LinkRecord]:
            if prefix:
                pat = keyword.like_prefix(target)
                rows = conn.execute(
                    "SELECT * FROM links WHERE resolved_path LIKE ? ESCAPE '\\' OR (resolved_path IS NULL AND target LIKE ? ESCAPE '\\') "
                    "ORDER BY source, line", (pat, pat)).fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM links WHERE resolved_path = ? OR (resolved_path IS NULL AND target = ?) ORDER BY source, line",
                    (target, target)).fetchall()
            return [_link(r) for r in rows]

        return self._run(q)

    def outbound_links(self, source: str) -> list[LinkRecord]:
        source = self.ws.normalize(source)
        self.maybe_sync()
        return self._run(lambda conn: [_link(r) for r in conn.execute(
            "SELECT * FROM links WHERE source = ? ORDER BY line", (source,))])

    def file_info(self, path: str) -> FileRecord | None:
        path = self.ws.normalize(path)
        self.maybe_sync()
        return self._run(lambda conn: self._file_info(conn, path))

    @staticmethod
    def _file_info(conn: sqlite3.Connection, path: str) -> FileRecord | None:
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

    def status(self) -> dict[str, Any]:
        self.maybe_sync()

        def q(conn: sqlite3.Connection) -> dict[str, Any]:
            one = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
            unindexed = lambda key: [r[0] for r in conn.execute(  # noqa: E731  (files kept out of search, and why)
                "SELECT path FROM files WHERE indexed=0 AND json_valid(extra) AND "
                f"json_type(extra, '$.{key}') IS NOT NULL ORDER BY path")]
            size = sum(f.stat().st_size for f in self.metadata.glob("index.sqlite*") if f.is_file())
            vec_size = sum(f.stat().st_size for f in self.metadata.glob("vectors-*") if f.is_file())
            return {
                "workspace": str(self.ws.root),
                "mode": self.mode,
                "files": one("SELECT COUNT(*) FROM files"),
                "indexed_files": one("SELECT COUNT(*) FROM files WHERE indexed=1"),
                "chunks": one("SELECT COUNT(*) FROM chunks"),
                "links": one("SELECT COUNT(*) FROM links"),
                "dangling_links": one("SELECT COUNT(*) FROM links WHERE resolved_path IS NULL"),
                "embedding_backend": emb.backend_name(self.config),
                "model": self.model_id,
                "embedding_error": self._embed_error,
                "index_bytes": size + vec_size,
                "generation": catalog.generation(conn),
                "keyword_index": self._bm25.info() if self._bm25 is not None else {"ready": False, "disabled": "fts5 only"},
                "link_graph": self._links.info() if self._links is not None else {"ready": False},
                "last_sync": catalog.get_meta(conn, "last_sync"),
                "conflicts": unindexed(CONFLICT_KEY),
                "hard_linked": unindexed(HARD_LINK_KEY),
                "freshness": self.freshness(),
                **({"left_out": self.left_out()} if self.left_out() else {}),
                "rss_mb": round(rss_mb(), 1),
            }

        out = self._run(q)
        if self.model_id:
            cov = catchup.coverage(self)
            out.update(embedded_chunks=cov["embedded"], embedding_backlog=cov["backlog"], embedding=cov,
                       embedding_summary=catchup.describe(cov))
        else:
            out.update(embedded_chunks=0, embedding_backlog=0)
        return out

    def close(self) -> None:
        if self._closed:
            return
        self._stop.set()
        self._embed_wake.set()
        if self._watcher is not None:
            self._watcher.close()
        if self._bg_write is not None:
            self._bg_write.join(timeout=30)
        if self._bm25 is not None:
            self._bm25.close()
        if self._links is not None:
            self._links.close()
        if self._embed_thread is not None:
            self._embed_thread.join(timeout=30)
        with self._rlock:
            self._closed = True
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()


class _Retry(Exception):
    pass


def _open_rw(metadata: Any) -> sqlite3.Connection:
    conn = catalog.open_db(metadata / catalog.DB_NAME, timeout=10.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


def _link(r: tuple) -> LinkRecord:
    return LinkRecord(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6], r[7] or 0, r[8] or "")


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r / 1e6 if os.uname().sysname == "Darwin" else r / 1e3



