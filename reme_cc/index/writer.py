"""Keeping the catalog up to date with the files: ``sync`` compares the layers with the catalog (a
stat walk: at most once a second before a query, or, in a server that ``watch``es, only the paths the
OS reported), ``update_paths`` re-indexes what a tool just wrote, ``reindex`` rebuilds it all. Big
bursts, and a team index's writes, are indexed by a background thread while queries answer from the
index as it was."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from typing import Any
from collections.abc import Callable, Iterable

from ..base.config import Config
from ..base.errors import ReMeError
from ..notes.documents import DOCUMENT_EXTS
from ..base.workspace import Workspace, own_stat
from . import catalog, keyword
from .budget import Budget, Spending
from .catalog import index_log
from .database import Database, open_rw
from .keyword_half import KeywordHalf
from .sync import CONFLICT_KEY, HARD_LINK_KEY, WALK_LAYERS, SyncReport, apply_changes, walk, wants_chunks
from .vector_half import VectorHalf
from .watch import Watcher

SYNC_INTERVAL = 1.0  # seconds between stat walks before queries when not watching (freshness target is 2 s)
INLINE_FILES = 300  # a server indexes more changed files than this at once in the background
TEAM_INLINE_FILES = 20  # a team index (budget): more than this, or any document, in the background

Stats = dict[str, tuple[int, int]]  # {path: (mtime_ns, size)}
Todo = dict[str, tuple[int, int] | None]  # None: deleted


class Stopped(Exception):
    """The index is closing: a background write stops after its last committed batch."""


class CatalogWriter:
    def __init__(
        self,
        db: Database,
        ws: Workspace,
        config: Config,
        stop: threading.Event,
        keywords: KeywordHalf,
        vectors: VectorHalf,
        budget: Budget | None = None,
    ):
        self.db = db
        self.ws = ws
        self.config = config
        self.budget = budget
        self._stop = stop  # the index is closing
        self._keywords = keywords
        self._vectors = vectors  # told about new chunks, and started over by reindex
        self._spending = Spending(budget) if budget is not None else None
        self.last_sync = 0.0  # monotonic time of the last walk; a query walks again SYNC_INTERVAL after it
        self._synced = False  # this process has compared the files with the index at least once
        self._catalog_cache: tuple[Any, Stats, set[str], list[str]] | None = None
        self.watcher: Watcher | None = None
        self._bg_write: threading.Thread | None = None  # a burst being indexed in the background
        self._bg_files = 0
        self._bg_progress = (0, 0)  # (files written, files) of the background write
        db.on_rebuilt.append(self._forget)

    def _forget(self) -> None:
        self.last_sync = 0.0
        self._synced = False
        self._catalog_cache = None

    def sync(self, disk: Stats | None = None) -> SyncReport:
        """Bring the index up to date with the files (incremental; cheap when nothing changed).
        ``disk``: a walk already made (the watcher's periodic check) instead of walking now."""
        t0 = time.perf_counter()
        report = SyncReport()
        if self.db.mode == "ro":
            return report
        if disk is None:
            disk = walk(self.ws.root)
        if self._spending is not None:
            disk = self._spending.select(disk)

        def diff(conn: sqlite3.Connection) -> Todo:
            stats, stale = self._catalog_snapshot(conn)
            if not stale and disk == stats:
                return {}  # the common case: one C-level dict comparison
            todo: Todo = {p: disk.get(p) for p in stale}
            for path, st in stats.items():
                now = disk.get(path)
                if now != st:
                    todo[path] = now  # changed, or None = deleted
            for path, st in disk.items():
                if path not in stats and path not in stale:
                    todo[path] = st
            return todo

        todo = self.db.run(diff)
        if todo:
            self._write(todo, None, report)  # paths as of the writer lock
        self.last_sync = time.monotonic()
        self._synced = True
        report.seconds = time.perf_counter() - t0
        return report

    def _catalog_snapshot(self, conn: sqlite3.Connection) -> tuple[Stats, set[str]]:
        """The files table as ({path: (mtime_ns, size)}, {paths to read again though their stat is the
        same}), re-read only when the database moved on (generation + last write stamp; read before the
        rows, so a commit in between only causes one extra reload). Read again: a file whose indexed
        flag disagrees with the config, and a hard-linked one whose other links are gone now. A file
        kept out of search for its content (hard links, conflict markers) is not read again until it
        changes: that rewrote it, and moved the generation, on every walk."""
        key = tuple(conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'last_sync') ORDER BY key"))
        cached = self._catalog_cache
        if cached is None or cached[0] != key:
            stats: Stats = {}
            stale: set[str] = set()
            linked: list[str] = []
            held = "indexed = 0 AND json_valid(extra) AND json_type(extra, '$.{}') IS NOT NULL"
            for path, mtime_ns, size, indexed, hard_linked, conflicted in conn.execute(
                f"SELECT path, mtime_ns, size, indexed, {held.format(HARD_LINK_KEY)}, {held.format(CONFLICT_KEY)} "
                "FROM files"
            ):
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

    def _write(
        self,
        todo: Todo,
        all_paths: set[str] | None,
        report: SyncReport,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """``all_paths=None``: the catalog's paths read under the writer lock, plus/minus ``todo`` (another
        process may have added or deleted files while this one waited for the lock)."""
        # a server: big batches in the background, at low priority; a team index: all but a handful of files
        polite = self.watcher is not None or self.budget is not None
        background = (
            self.db.mode == "rw"
            and all_paths is None
            and (
                len(todo) > (INLINE_FILES if self.budget is None else TEAM_INLINE_FILES)
                or (self.budget is not None and any(p.lower().endswith(DOCUMENT_EXTS) for p in todo))
            )
        )

        def do(conn: sqlite3.Connection, writer: Any = self.db.writer, track: Any = progress) -> None:
            with writer:
                paths = all_paths
                if paths is None:
                    known = {r[0] for r in conn.execute("SELECT path FROM files")}
                    paths = (known | {p for p, st in todo.items() if st is not None}) - {
                        p for p, st in todo.items() if st is None
                    }
                apply_changes(
                    conn,
                    self.ws.root,
                    self.config,
                    todo,
                    paths,
                    report,
                    track,
                    polite=polite,
                    metadata=self.db.metadata,
                    model=self._vectors.model_id,  # a re-indexed note's old vectors stand in for its new ones
                )

        if polite and background:
            self._write_in_background(todo, do)
            return
        try:
            self.db.run(do)
        except OSError as exc:  # lock file on a read-only filesystem, etc.
            raise ReMeError(f"cannot update the index in {self.db.metadata}: {exc.strerror or exc}") from None
        if report.touched or report.chunks:
            self._vectors.kick()

    def _stopping(self) -> None:
        if self._stop.is_set():
            raise Stopped()

    def _write_in_background(self, todo: Todo, do: Callable[[sqlite3.Connection, Any, Any], None]) -> None:
        """A burst (a `git checkout`, a folder copied in), or a team index's write: indexed by a thread on
        its own connection, so queries keep answering from the index as it was (with a note in ``status``
        and, for a team, in the answer: ``indexing()``) instead of waiting. Closing stops it after the
        batch being written."""
        if self._bg_write is not None and self._bg_write.is_alive():
            return  # the running batch's walk-and-diff catches these too on its next round
        metadata = self.db.metadata

        def track(done: int, total: int) -> None:
            self._bg_progress = (done, total)
            self._stopping()

        def run() -> None:
            from .polite import lower_priority

            lower_priority()
            try:
                if self._spending is not None:
                    self._spending.extract(self.ws.root, metadata, todo, self._stopping)
                conn = open_rw(metadata)
                try:
                    do(conn, self.db.writer_lock(), track)
                finally:
                    conn.close()
                self._vectors.kick()
            except Stopped:
                index_log(metadata, f"background indexing stopped (closing) after {self._bg_progress[0]} files")
            except Exception as exc:  # noqa: BLE001 - the next query's check tries again
                index_log(metadata, f"background indexing of {len(todo)} files failed: {exc}")
            finally:
                self._bg_files = 0
                self.last_sync = 0.0  # and the next query looks again (changes made meanwhile)

        self._bg_files = len(todo)
        self._bg_progress = (0, len(todo))
        index_log(metadata, f"{len(todo)} files changed at once: indexing them in the background")
        self._bg_write = threading.Thread(target=run, name="reme-index-burst", daemon=True)
        self._bg_write.start()

    def watch(self, wait: float = 0.0) -> dict[str, object]:
        """Learn about changed files from the OS from now on (see Index.watch)."""
        if self.watcher is None and self.db.mode == "rw":
            self.watcher = Watcher(self.ws.root, WALK_LAYERS, lambda m: index_log(self.db.metadata, m), walk)
        if self.watcher is not None:
            self.watcher.start(wait)
        return self.freshness()

    def indexing(self) -> tuple[int, int] | None:
        """(files written, files) while a background write runs, else None."""
        if self._bg_write is not None and self._bg_write.is_alive():
            return self._bg_progress
        return None

    def left_out(self) -> str | None:
        """A team index: what its budget left out, as one line for the answer (None: nothing)."""
        return self._spending.left_out() if self._spending is not None else None

    def freshness(self) -> dict[str, object]:
        if self.watcher is None:
            return {"mode": "walk", "reason": "not watching (only a server watches the files)"}
        info = self.watcher.info()
        if self._bg_files:
            info["indexing_in_background"] = self._bg_files
        return info

    def maybe_sync(self) -> None:
        """Before a query: what changed since the last one (notifications), else a walk at most once a second."""
        if self._bg_write is not None and self._bg_write.is_alive():
            return  # a burst is being indexed; queries answer from the index as it is meanwhile
        w = self.watcher
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
                    self.update(changes.paths, only_changed=True)
                return
            if w.mode == "notify":  # overflow: more changed than is worth listing
                self.sync()
                return
        if time.monotonic() - self.last_sync >= SYNC_INTERVAL:
            self.sync()

    def update(self, paths: Iterable[str], only_changed: bool = False) -> None:
        """Re-index these workspace paths now. ``only_changed``: skip paths whose size and mtime the
        catalog already has (notified paths include the server's own writes, already indexed)."""
        if self.db.mode == "ro" or not paths:
            return
        todo: Todo = {}
        for rel in paths:
            rel = self.ws.normalize(rel)
            st = own_stat(self.ws.root, rel)
            if st is not None and stat.S_ISDIR(st.st_mode):  # a moved/created folder: everything under it
                todo.update(walk(self.ws.root, (rel,)))
            elif not rel.startswith(("daily/", "digest/", "resource/", "session/")) or os.path.basename(rel).startswith(
                "."
            ):
                continue
            elif st is not None and stat.S_ISREG(st.st_mode):
                todo[rel] = (st.st_mtime_ns, st.st_size)
                continue
            else:  # gone (a file or a folder), or not the workspace's own file: out of the index
                todo[rel] = None
            # a folder's or a gone path's files that the catalog holds and the disk no longer has
            for sub in self.db.run(
                lambda c: [
                    r[0]
                    for r in c.execute(
                        "SELECT path FROM files WHERE path LIKE ? ESCAPE '\\'", (keyword.like_prefix(rel),)
                    )
                ]
            ):
                todo.setdefault(sub, None)
        if only_changed and todo:
            stats, stale = self.db.run(self._catalog_snapshot)
            todo = {p: st for p, st in todo.items() if p in stale or stats.get(p) != st}
        if not todo:
            return
        self._write(todo, None, SyncReport())

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Wipe the derived index (keeping the embedding cache, keyed by content) and rebuild it."""
        if self.db.mode == "ro":
            raise ReMeError("the workspace is read-only: cannot rebuild its index")
        t0 = time.perf_counter()

        def wipe(conn: sqlite3.Connection) -> None:
            with self.db.writer, catalog.transaction(conn):
                for table in ("files", "chunks", "chunks_fts", "cjk_chunks", "links", "nodes_fts", "labels"):
                    conn.execute(f"DELETE FROM {table}")
                catalog.bump_generation(conn)
                for f in self.db.metadata.glob("vectors-*"):
                    with contextlib.suppress(OSError):
                        f.unlink()

        self.db.run(wipe)
        self._keywords.discard()
        self._vectors.reset()
        disk = walk(self.ws.root)
        report = SyncReport()
        if progress:
            progress(0, len(disk))
        self._write(dict(disk), set(disk), report, progress)
        self.last_sync, self._synced = time.monotonic(), True
        bm25 = self._keywords.bm25
        if bm25 is not None:  # build + save the BM25 snapshot now, so the next process just loads it
            try:
                bm25.build(use_snapshot=False)
            except Exception as exc:  # noqa: BLE001 - FTS5 answers; the next search builds it again
                index_log(self.db.metadata, f"bm25 build after reindex failed: {exc}")
        report.seconds = time.perf_counter() - t0
        return report

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        if self._bg_write is not None:
            self._bg_write.join(timeout=30)
