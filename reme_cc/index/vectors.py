"""Vector recall: exact inner-product top-k over a memory-mapped matrix shared by every process.

The truth is the embedding cache in SQLite (model, chunk hash) -> vector. The file
``metadata/vectors-<model>.vec`` is only a warm start shared by every process of the workspace: a
header (model, database id, count, dimension), the chunk ids (int64, ascending) and their float32
rows. Processes map it read-only, so its pages live once in the page cache however many windows
are open (a private faiss copy was ~75 MB per process at 49k chunks). A search keeps them mapped for
the next one, and PAGES_HELD_S after the last search the process lets go of them
(``madvise(DONTNEED)``; faulting them back in from the page cache costs a search ~5 ms at 49k x 384:
the price of an idle window not holding 75 MB). On load the file is reconciled with the database by
a set difference of chunk ids (chunk ids are never reused, so an id always means the same text):
rows of removed chunks are masked, vectors the file lacks are kept in memory (``_extra``) until a
writer saves a new file. A missing, truncated or foreign file is simply rebuilt from the cache. New
vectors are announced in ``vector_log`` (model, hash, seq), so a process only looks up the chunks it
still lacks. Writes go to a temp file + os.replace, so readers never see half a file; a reader maps
the newer file at its next refresh.

A chunk without a vector of its own may hold the vector its note's previous text lent it
(``carried_vectors``, sync.carry_vectors) until the embedding worker makes its own: such rows are
listed in ``_carried``, and after the file's rows (header "carried": their ids), so a process mapping
the file knows them; the real vector's announcement in vector_log replaces the row.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import mmap
import os
import re
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ..base.workspace import fsync_dir
from .bm25 import chunk_ids
from .catalog import get_meta, index_log, rows_in

MAGIC = b"REMEVEC1"
HEADER = 4096  # bytes: MAGIC + JSON, zero-padded; then ids int64[count], then float32[count, dim]
NO_IDS = np.zeros(0, np.int64)
GATHER_SHARE = 4  # rows are copied out for scoring only when fewer than 1/4 of them are wanted
PAGES_HELD_S = 60.0  # a search keeps the pages mapped this long for the next (prompts, an agent's calls)
SAVE_EXTRA = 1000  # vectors held only in memory before a writer saves a new shared file
SCRIPT_ROWS = 20  # rows of each script below which search_scripts has no scale to read a z-score on
# a foreign row's z-score is read this much lower: the question's own language first on a near tie
# (bilingual set at 100 %, margin 0 -> 0.5: same-language titles R@1 0.796 -> 0.845, en->zh R@5
# 0.642 -> 0.618, zh->en 0.524 -> 0.455; bench/README "A vector search per script")
FOREIGN_MARGIN = 0.5


def log_range(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """(last, first) sequence number of ``vector_log`` ((0, 0) when empty or absent: a read-only index
    of an older version has no log; its vectors are found by the full probe at load). Two subqueries:
    SQLite answers a lone MIN or MAX from the key's b-tree, but both in one SELECT scan the table
    (6 ms at 49k rows, before every search)."""
    try:
        row = conn.execute("SELECT (SELECT MAX(seq) FROM vector_log), (SELECT MIN(seq) FROM vector_log)").fetchone()
    except sqlite3.OperationalError:
        return 0, 0
    return int(row[0] or 0), int(row[1] or 0)


def _safe(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model)


class VectorStore:
    def __init__(self, metadata: Path, model: str, dim: int | None):
        self.metadata = metadata
        self.model = model
        self.dim = dim
        self.path = metadata / f"vectors-{_safe(model)}.vec"
        self._legacy = [metadata / f"vectors-{_safe(model)}.{ext}" for ext in ("faiss", "json")]  # before the .vec file
        self._map: mmap.mmap | None = None
        self._file_key: tuple[int, int] | None = None  # (inode, mtime) of the mapped file
        self._base_ids = np.zeros(0, np.int64)  # ascending, a view of the mapped file
        self._base = np.zeros((0, 0), np.float32)  # rows of the mapped file
        self._live = np.zeros(0, bool)  # False: that row's chunk is gone
        self._extra_ids = np.zeros(0, np.int64)  # vectors the file lacks, in memory
        self._extra = np.zeros((0, 0), np.float32)
        self._count = 0
        self.generation = -1
        self._key: tuple[int, int] = (-1, -1)  # (generation, vector_log seq) last reconciled
        self._log_seq = 0
        self._max_chunk = 0
        self._missing: dict[str, list[int]] = {}  # hash -> chunk ids without a vector here yet
        self._carried: dict[str, list[int]] = {}  # hash -> chunk ids holding a lent vector here
        self._file_carried = np.zeros(0, np.int64)  # the mapped file's lent rows, until refresh checks them
        self._file_log_seq = 0  # the vector_log seq its writer had seen: own vectors announced later replace loans
        self._carried_epoch: str | None = None  # meta 'carried_epoch' last seen (database.scrub moves it)
        self._lock = threading.Lock()
        self._last_search = 0.0  # time.monotonic() of the last search: its pages stay mapped PAGES_HELD_S
        self._pages_timer: threading.Timer | None = None
        self._loaded = False
        self.db_id = ""  # the database the vectors' chunk ids belong to (ids restart in a re-created one)

    # ---- persistence ------------------------------------------------------------------------------
    def _map_file(self) -> bool:
        """Map the shared file as the base (no extra rows); False when there is none or it is unusable."""
        self._loaded = True
        try:
            fh = open(self.path, "rb")
        except OSError:
            return False
        try:
            with fh:
                st = os.fstat(fh.fileno())
                self._file_key = (st.st_ino, st.st_mtime_ns)  # an unusable file is not tried again
                m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                if m[: len(MAGIC)] != MAGIC:
                    raise ValueError("not a reme vector file")
                head = json.loads(m[len(MAGIC) : HEADER].rstrip(b"\0"))
                count, dim, lent = int(head["count"]), int(head["dim"]), int(head.get("carried", 0))
                if head.get("model") != self.model:
                    raise ValueError("another model's vectors")
                if head.get("db_id", "") != self.db_id:
                    raise ValueError("it was built from another index database")
                if self.dim is not None and dim != self.dim:
                    raise ValueError(f"dimension {dim} != {self.dim}")
                if len(m) != HEADER + count * 8 + count * dim * 4 + lent * 8:
                    raise ValueError("truncated")
            except Exception:
                m.close()
                raise
        except Exception as exc:  # noqa: BLE001 - any unreadable cache is rebuilt, never fatal
            index_log(self.metadata, f"vector file {self.path.name} unusable ({exc}): rebuilding from the cache")
            return False
        self._release_map()
        self._map = m
        self._base_ids = np.frombuffer(m, np.int64, count, HEADER)
        self._base = np.frombuffer(m, np.float32, count * dim, HEADER + count * 8).reshape(count, dim)
        self._live = np.ones(count, bool)
        self._extra_ids, self._extra = np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        self._count, self.dim = count, dim
        self._missing, self._max_chunk, self._carried = {}, 0, {}
        self._file_carried = np.frombuffer(m, np.int64, lent, HEADER + count * 8 + count * dim * 4).copy()
        self._file_log_seq = int(head.get("log_seq", 0))
        self.release_pages()
        return True

    def _release_map(self) -> None:
        if self._map is not None:
            self._base_ids, self._base = np.zeros(0, np.int64), np.zeros((0, self.dim or 0), np.float32)
            with contextlib.suppress(BufferError):  # a search still holds a view: the GC closes it later
                self._map.close()
            self._map = None

    def _file_changed(self) -> bool:
        try:
            st = self.path.stat()
        except OSError:
            return False
        return (st.st_ino, st.st_mtime_ns) != self._file_key

    @property
    def needs_save(self) -> bool:
        """Many vectors live only in this process's memory: a new shared file would spare everyone that."""
        return len(self._extra_ids) >= min(SAVE_EXTRA, max(1, self._count // 10))

    def save(self, generation: int) -> None:
        """Atomically persist every live vector as the shared file, then map it (best effort: a read-only
        workspace just keeps them in memory). Rows are written in blocks: no second copy in memory."""
        with self._lock:
            if self._count == 0 or self.dim is None:
                return
            live_rows = np.flatnonzero(self._live)
            ids = np.concatenate([self._base_ids[live_rows], self._extra_ids])
            order = np.argsort(ids, kind="stable")
            lent = np.sort(np.fromiter((i for ids_ in self._carried.values() for i in ids_), np.int64))
            head = json.dumps(
                {
                    "model": self.model,
                    "generation": generation,
                    "count": len(ids),
                    "dim": self.dim,
                    "db_id": self.db_id,
                    **({"carried": len(lent)} if len(lent) else {}),  # without: the layout older versions read
                    "log_seq": self._log_seq,
                }
            ).encode()
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.metadata)
            except OSError:
                return
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write((MAGIC + head).ljust(HEADER, b"\0"))
                    fh.write(ids[order].tobytes())
                    nb = len(live_rows)
                    for start in range(0, len(order), 4096):
                        part = order[start : start + 4096]
                        rows = np.empty((len(part), self.dim), np.float32)
                        inb = part < nb
                        if inb.any():
                            rows[inb] = self._base[live_rows[part[inb]]]
                        if not inb.all():
                            rows[~inb] = self._extra[part[~inb] - nb]
                        fh.write(rows.tobytes())
                    fh.write(lent.tobytes())
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
                fsync_dir(self.metadata)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                return
            for old in self._legacy:
                with contextlib.suppress(OSError):
                    old.unlink()
            missing, max_chunk, key, seq = self._missing, self._max_chunk, self._key, self._log_seq
            carried = self._carried
            if self._map_file():  # the same vectors, now shared; what this process still lacks stays known
                self._missing, self._max_chunk, self._key, self._log_seq = missing, max_chunk, key, seq
                self._carried, self._file_carried = carried, np.zeros(0, np.int64)
                self.generation = generation

    # ---- reconcile with the database ---------------------------------------------------------------
    def refresh(self, conn: sqlite3.Connection, generation: int) -> bool:
        """Bring the vectors up to the database; returns True when something changed.

        Incremental: when the chunks changed (``generation``) the chunk ids are diffed through the
        ``chunks_hash`` index (never the 75 MB embeddings table); when vectors were added (``vector_log``)
        only the chunks still without one are probed. A full probe of every such chunk happens once per
        process (after mapping the file, or a newer one another process saved) or when the log was
        pruned past what this process has seen."""
        with self._lock:
            seq, low = log_range(conn, self.model)
            key = (generation, seq)
            if key == self._key and self._loaded:
                return False
            first = not self._loaded
            probe: set[str] = set()
            mapped = False
            if first or self._file_changed():  # first look, or another process saved a newer file
                self.db_id = get_meta(conn, "db_id") or ""
                mapped = self._map_file()
                first = first or mapped
            chunks_moved = first or generation != self._key[0]
            if chunks_moved:
                probe |= self._diff_chunks(conn)
                epoch = get_meta(conn, "carried_epoch")
                if mapped:  # the file's lent rows may have lost their loan, or have their own vectors by now
                    probe |= self._check_carried(conn, self._file_carried.tolist())
                    self._file_carried = np.zeros(0, np.int64)
                    probe |= self._announced(conn, self._file_log_seq, low, self._carried)
                elif epoch != self._carried_epoch and not first:  # scrubbed: a loan may hold forgotten text
                    probe |= self._check_carried(conn, [i for ids in self._carried.values() for i in ids])
                self._carried_epoch = epoch
            if first:
                probe |= set(self._missing)  # (the mapped file's lent rows were checked above)
            elif low > self._log_seq + 1:  # the log does not reach back to what we saw: probe them all
                probe |= set(self._missing) | set(self._carried)
            elif seq > self._log_seq:
                probe |= self._announced(conn, self._log_seq, low, self._missing.keys() | self._carried.keys())
            added = 0
            if probe:
                vecs, ids = self._fetch(conn, sorted(probe))
                if len(ids):
                    if self.dim is None or self._count == 0:
                        self.dim = vecs.shape[1]
                        self._extra = self._extra.reshape(-1, self.dim)
                    self._extra_ids = np.concatenate([self._extra_ids, ids])
                    self._extra = np.concatenate([self._extra, vecs])
                    self._count += len(ids)
                    added = len(ids)
            self._key, self._log_seq, self.generation = key, seq, generation
            return added > 0 or chunks_moved

    def _tracked(self) -> np.ndarray:
        return np.concatenate([self._base_ids[self._live], self._extra_ids])

    def _diff_chunks(self, conn: sqlite3.Connection) -> set[str]:
        """Drop the vectors of chunks that are gone; returns the hashes of chunks new since the last look,
        keeping ``_missing`` current. Ids come from the small chunks_hash index, hashes only for new ids."""
        now = chunk_ids(conn)
        gone = np.setdiff1d(self._tracked(), now, assume_unique=True)
        if len(gone):
            self._drop(gone)
            if self._carried:
                _leave_out(self._carried, set(gone.tolist()))
        waiting = np.fromiter((i for ids in self._missing.values() for i in ids), np.int64)
        dropped = set(np.setdiff1d(waiting, now, assume_unique=True).tolist())
        if dropped:  # chunks removed before they ever got a vector
            _leave_out(self._missing, dropped)
        fresh_ids = np.setdiff1d(now[now > self._max_chunk], self._tracked(), assume_unique=True).tolist()
        fresh: set[str] = set()
        for cid, h in rows_in(conn, "SELECT id, hash FROM chunks WHERE id IN ({marks})", fresh_ids):
            self._missing.setdefault(h, []).append(cid)
            fresh.add(h)
        if len(now):
            self._max_chunk = max(self._max_chunk, int(now.max()))
        return fresh

    def _drop(self, gone: np.ndarray) -> None:
        """Let go of the rows of these chunk ids (masked in the mapped file, removed from memory)."""
        pos = np.searchsorted(self._base_ids, gone)
        inside = pos < len(self._base_ids)
        pos, in_base = pos[inside], gone[inside]
        self._live[pos[self._base_ids[pos] == in_base]] = False
        keep = ~np.isin(self._extra_ids, gone)
        self._extra_ids, self._extra = self._extra_ids[keep], self._extra[keep]
        self._count = int(self._live.sum()) + len(self._extra_ids)

    def _announced(self, conn: sqlite3.Connection, since: int, low: int, waiting: Any) -> set[str]:
        """The hashes of ``waiting`` whose vectors vector_log announced after ``since`` (all of them when
        the log no longer reaches back that far)."""
        if not waiting:
            return set()
        if low > since + 1:
            return set(waiting)
        sql = "SELECT hash FROM vector_log WHERE model = ? AND seq > ?"
        return {h for (h,) in conn.execute(sql, (self.model, since)) if h in waiting}

    def _check_carried(self, conn: sqlite3.Connection, ids: list[int]) -> set[str]:
        """Rows held as lent (a mapped file's, or this process's after a scrub) that the database may no
        longer lend: a row stays while its chunk's text still has a loan (the small carried_vectors
        table; own vectors made since are announced in vector_log); the others are dropped and their
        chunks wait in ``_missing``. Returns the hashes to probe again."""
        if not ids:
            return set()
        if self._lends(conn):
            sql = (
                "SELECT c.id, c.hash, EXISTS (SELECT 1 FROM carried_vectors k WHERE k.model = ? AND k.hash = c.hash) "
                "FROM chunks c WHERE c.id IN ({marks})"
            )
            models: tuple[str, ...] = (self.model,)
        else:
            sql, models = "SELECT id, hash, 0 FROM chunks WHERE id IN ({marks})", ()
        _leave_out(self._carried, set(ids))
        probe: set[str] = set()
        dropped = set(ids)
        for cid, h, still in rows_in(conn, sql, ids, before=models):
            if still:
                self._carried.setdefault(h, []).append(cid)
                dropped.discard(cid)
            else:
                self._missing.setdefault(h, []).append(cid)
                probe.add(h)
        if dropped:
            self._drop(np.array(sorted(dropped), np.int64))
        return probe

    def _lends(self, conn: sqlite3.Connection) -> bool:
        """Does the database have carried_vectors (a read-only index of an older version has not)?"""
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'carried_vectors'"
        return conn.execute(sql).fetchone() is not None

    def _fetch(self, conn: sqlite3.Connection, hashes: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of the missing chunks with these hashes (one row per chunk id); pops them from
        ``_missing``. A chunk's own vector replaces a lent one; a chunk with none takes the one its
        note's previous text lends it (carried_vectors) and is listed in ``_carried``."""
        out_v: list[bytes] = []
        out_i: list[int] = []
        replaced: list[int] = []
        for h, blob in rows_in(
            conn,
            "SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
            hashes,
            before=(self.model,),
        ):
            lent = self._carried.pop(h, [])
            replaced += lent
            for cid in self._missing.pop(h, []) + lent:
                out_i.append(cid)
                out_v.append(blob)
        if replaced:
            self._drop(np.array(sorted(replaced), np.int64))
        wanting = [h for h in hashes if h in self._missing]
        if wanting and self._lends(conn):
            for h, blob in rows_in(
                conn,
                "SELECT k.hash, e.vector FROM carried_vectors k JOIN embeddings e ON e.model = k.model "
                "AND e.hash = k.source WHERE k.model = ? AND k.hash IN ({marks})",
                wanting,
                before=(self.model,),
            ):
                cids = self._missing.pop(h, [])
                self._carried.setdefault(h, []).extend(cids)
                out_i += cids
                out_v += [blob] * len(cids)
        if not out_i:
            return np.zeros((0, self.dim or 1), np.float32), np.zeros(0, np.int64)
        vecs = np.frombuffer(b"".join(out_v), dtype=np.float32).reshape(len(out_i), -1)
        if self.dim is not None and self._count and vecs.shape[1] != self.dim:
            raise ValueError("embedding dimension changed within one model id")
        return np.ascontiguousarray(vecs), np.array(out_i, dtype=np.int64)

    def coverage(self, conn: sqlite3.Connection) -> tuple[int, int, int]:
        """(distinct chunk texts with a vector of their own, those holding a lent one, distinct chunk
        texts) as of the last refresh."""
        texts = conn.execute("SELECT COUNT(DISTINCT hash) FROM chunks").fetchone()[0]  # index only
        with self._lock:
            return texts - len(self._missing) - len(self._carried), len(self._carried), texts

    def waiting(self, n: int) -> list[str]:
        """Up to ``n`` hashes of chunk texts with no vector here at all, neither their own nor a loan
        (as of the last refresh): the embedding worker's first work, found without a scan."""
        with self._lock:
            return list(itertools.islice(self._missing, n))

    # ---- search ----------------------------------------------------------------------------------
    def __contains__(self, cid: object) -> bool:
        """Does this chunk id have a vector (as of the last refresh)?"""
        if not isinstance(cid, (int, np.integer)):
            return False
        i = int(np.searchsorted(self._base_ids, cid))
        if i < len(self._base_ids) and self._base_ids[i] == cid:
            return bool(self._live[i])
        return bool(np.any(self._extra_ids == cid))

    @property
    def count(self) -> int:
        return self._count

    def ids(self) -> np.ndarray:
        """The chunk ids that have a vector (as of the last refresh)."""
        with self._lock:
            return self._tracked()

    def release_pages(self) -> None:
        """Unmap the file's pages from this process (they stay in the shared page cache)."""
        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            with contextlib.suppress(OSError, ValueError):
                self._map.madvise(mmap.MADV_DONTNEED)

    def _hold_pages(self) -> None:
        """After a search (the caller holds the lock): keep the pages mapped for the next search
        (faulting 75 MB back in cost each search ~5 ms at 49k x 384), and hand them back once none came
        for PAGES_HELD_S, so an idle process holds none of them."""
        self._last_search = time.monotonic()
        if self._pages_timer is None and self._map is not None:
            self._pages_timer = threading.Timer(PAGES_HELD_S, self._release_when_idle)
            self._pages_timer.daemon = True
            self._pages_timer.start()

    def _release_when_idle(self) -> None:
        with self._lock:
            left = self._last_search + PAGES_HELD_S - time.monotonic()
            if left > 0:  # searched since: wait out the rest
                self._pages_timer = threading.Timer(left, self._release_when_idle)
                self._pages_timer.daemon = True
                self._pages_timer.start()
                return
            self._pages_timer = None
            self.release_pages()

    def search(self, q: np.ndarray, k: int, allowed: list[int] | None = None) -> list[tuple[int, float]]:
        """Exact top-k by inner product (rows are L2-normalized: cosine), best first; equal scores
        (the same text in several notes) newer chunk first, the order faiss gave them. One pass
        (inner_products)."""
        return self.search_scripts(q, k, allowed, NO_IDS, False)[0]

    def search_scripts(
        self, q: np.ndarray, k: int, allowed: list[int] | None, marked: np.ndarray, query_marked: bool
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]] | None, list[tuple[int, float]], Scale | None]:
        """(the top-k, the top-k with each script on its own scale, the foreign top-k with their
        z-scores among the foreign rows, the Scale of the query's own-script rows) from one pass.
        ``marked``: the sorted ids of one script's chunks (cjk_chunks); ``query_marked``: the query is in
        that script.
        The multilingual model scores the query's own language far above another for the same
        meaning, so the second ranking reads every row's cosine as a z-score among the rows of its
        own script (mean and deviation over all of them, this query): a foreign chunk ranks high
        when it stands out among the foreign chunks further (by FOREIGN_MARGIN) than the best
        own-script ones stand out among theirs. None when either script has fewer than SCRIPT_ROWS rows
        (no scale to read; nor foreign z-scores). A foreign row's z-score (without the margin) is how far it
        stands out in its own language: per-prompt recall reads it where cosines favour the prompt's.
        The Scale is over every row when there is no second script to set apart (``marked`` empty: an
        index without cjk_chunks)."""
        with self._lock:
            ids, scores = self._scores(q, allowed)
        plain = _top(ids, scores, scores, k)
        if not len(ids):
            return plain, None, [], None
        if not len(marked):
            return plain, None, [], Scale.of(scores)
        foreign = in_sorted(ids, marked) != query_marked
        n_foreign = int(foreign.sum())
        if min(n_foreign, len(ids) - n_foreign) < SCRIPT_ROWS:
            own = scores[~foreign]
            return plain, None, [], Scale.of(own if len(own) >= SCRIPT_ROWS else scores)
        z = np.empty_like(scores)
        scales = {}
        for name, rows, margin in (("foreign", foreign, FOREIGN_MARGIN), ("own", ~foreign, 0.0)):
            scale = scales[name] = Scale.of(scores[rows])
            z[rows] = scale.z(scores[rows]) - margin
        own_scale = z[foreign] + FOREIGN_MARGIN
        return plain, _top(ids, z, scores, k), _top(ids[foreign], own_scale, own_scale, k), scales["own"]

    def _scores(self, q: np.ndarray, allowed: list[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, cosines) of every live row ``allowed`` keeps (the caller holds the lock)."""
        empty = np.zeros(0, np.int64), np.zeros(0, np.float32)
        if self._count == 0 or self.dim is None:
            return empty
        q = np.ascontiguousarray(np.asarray(q, np.float32).reshape(-1))
        if q.shape[0] != self.dim:
            return empty
        ids_parts, score_parts = [], []
        for ids, rows, live in ((self._base_ids, self._base, self._live), (self._extra_ids, self._extra, None)):
            if not len(ids):
                continue
            mask = live if allowed is None else (np.isin(ids, allowed) & (live if live is not None else True))
            if mask is None or mask.all():
                ids_parts.append(ids)
                score_parts.append(inner_products(rows, q))
                continue
            sel = np.flatnonzero(mask)
            if len(sel) * GATHER_SHARE < len(ids):  # a narrow filter (a folder): score only its rows
                score_parts.append(inner_products(rows[sel], q))
            else:  # a few dead rows: gathering the rest would copy the whole matrix (15 ms at 49k)
                score_parts.append(inner_products(rows, q)[sel])
            ids_parts.append(ids[sel])
        self._hold_pages()
        if not ids_parts:
            return empty
        return np.concatenate(ids_parts), np.concatenate(score_parts)


@dataclass(frozen=True)
class Scale:
    """How a query's cosines spread over a set of rows: their mean, deviation and number."""

    mean: float
    std: float
    rows: int

    @staticmethod
    def of(scores: np.ndarray) -> Scale:
        return Scale(float(scores.mean()), max(float(scores.std()), 1e-6), len(scores))

    def z(self, scores: Any) -> Any:
        return (scores - self.mean) / self.std


def _leave_out(waiting: dict[str, list[int]], ids: set[int]) -> None:
    """Remove these chunk ids from a {hash: chunk ids} table (and hashes left with none)."""
    for h in list(waiting):
        left = [i for i in waiting[h] if i not in ids]
        if left:
            waiting[h] = left
        else:
            del waiting[h]


KERNEL_ROWS = 64  # a multiple of the rows any BLAS kernel takes at once


@functools.cache
def _one_blas_thread() -> None:
    """BLAS on one thread in this process: a matrix-vector product is memory-bound, and on a shared
    2-core machine a second thread only waits for a descheduled peer (49k x 384 under load: 1 thread
    p50 6.4 ms, 2 threads 8.0 ms)."""
    threadpool_limits(1, user_api="blas")


def inner_products(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``rows @ q`` by BLAS (3.3 ms at 49k x 384 where einsum took 8.4; bench/README "Search at 10k
    files"), every row through the same kernel: BLAS kernels take rows in blocks and the last
    ``len % block`` by another path that rounds differently, so identical texts (equal rows) would no
    longer tie. Those last rows are scored as a zero-padded block of their own."""
    _one_blas_thread()
    n = len(rows)
    whole = n - n % KERNEL_ROWS
    out = np.empty(n, np.float32)
    if whole:
        np.matmul(rows[:whole], q, out=out[:whole])
    if whole < n:
        pad = np.zeros((KERNEL_ROWS, rows.shape[1]), np.float32)
        pad[: n - whole] = rows[whole:]
        out[whole:] = (pad @ q)[: n - whole]
    return out


def in_sorted(ids: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Which of ``ids`` are in ``sorted_ids`` (ascending): one binary search each (np.isin sorts both)."""
    if not len(sorted_ids):
        return np.zeros(len(ids), bool)
    pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[pos] == ids


def _top(ids: np.ndarray, rank_by: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The k best by ``rank_by``, with their ``scores``, best first; ties to the newer chunk (and every
    row tied with the k-th is considered, so a tie never depends on the order of the rows)."""
    if k <= 0 or not len(ids):
        return []
    if len(ids) > k:
        kth = rank_by[np.argpartition(-rank_by, k - 1)[k - 1]]
        top = np.flatnonzero(rank_by >= kth)
        ids, rank_by, scores = ids[top], rank_by[top], scores[top]
    order = np.lexsort((-ids, -rank_by))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]
