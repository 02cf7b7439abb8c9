"""Vector recall: a faiss IndexIDMap2(IndexFlatIP) over chunk ids, cached on disk.

The truth is the embedding cache in SQLite (model, chunk hash) -> vector. The faiss file
``metadata/vectors-<model>.faiss`` (+ ``.json`` sidecar with the generation it reflects) is only a
warm start shared by every process of the workspace: on load it is reconciled with the database by a
set difference of chunk ids (chunk ids are never reused, so an id always means the same text). A
missing, truncated or foreign file is simply rebuilt from the cache. New vectors are announced in
``vector_log`` (model, hash, seq), so a process only looks up the chunks it still lacks. Writes go to a temp file + os.replace, so readers never see half a file.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from pathlib import Path

import numpy as np

from ..errors import ReMeError
from ..workspace import atomic_write
from .bm25 import chunk_ids, trim_heap
from .catalog import get_meta, index_log


def log_range(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """(last, first) sequence number of ``vector_log`` ((0, 0) when empty or absent: a read-only index
    of an older version has no log; its vectors are found by the full probe at load)."""
    try:
        row = conn.execute("SELECT MAX(seq), MIN(seq) FROM vector_log").fetchone()
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
        self.path = metadata / f"vectors-{_safe(model)}.faiss"
        self.sidecar = metadata / f"vectors-{_safe(model)}.json"
        self._index = None  # faiss.IndexIDMap2 | None
        self._ids: set[int] = set()
        self.generation = -1
        self._key: tuple[int, int] = (-1, -1)   # (generation, vector_log seq) last reconciled
        self._log_seq = 0
        self._max_chunk = 0
        self._missing: dict[str, list[int]] = {}  # hash -> chunk ids without a vector here yet
        self._lock = threading.Lock()
        self._loaded = False
        self.db_id = ""  # the database the vectors' chunk ids belong to (ids restart in a re-created one)

    # ---- persistence ------------------------------------------------------------------------------
    def _load_file(self) -> None:
        import faiss

        self._loaded = True
        if not self.path.exists():
            return
        try:
            side = json.loads(self.sidecar.read_text(encoding="utf-8"))
            index = faiss.read_index(str(self.path))
            if side.get("model") != self.model or index.ntotal != side.get("count"):
                raise ValueError("sidecar does not match the file")
            if side.get("db_id", "") != self.db_id:
                raise ValueError("it was built from another index database")
            if self.dim is not None and index.d != self.dim:
                raise ValueError(f"dimension {index.d} != {self.dim}")
            self._index = index
            self._ids = set(int(i) for i in faiss.vector_to_array(index.id_map)) if index.ntotal else set()
            self.dim = index.d
        except Exception as exc:  # noqa: BLE001 - any unreadable cache is rebuilt, never fatal
            index_log(self.metadata, f"vector file {self.path.name} unusable ({exc}): rebuilding from the cache")
            self._index, self._ids = None, set()

    def save(self, generation: int) -> None:
        """Atomically persist (best effort: a read-only workspace just keeps it in memory)."""
        import faiss

        with self._lock:
            if self._index is None:
                return
            side = {"model": self.model, "generation": generation, "count": int(self._index.ntotal), "dim": self.dim,
                    "db_id": self.db_id}
            try:
                atomic_write(self.path, faiss.serialize_index(self._index).tobytes())
                atomic_write(self.sidecar, json.dumps(side).encode())
            except ReMeError:
                pass

    # ---- reconcile with the database ---------------------------------------------------------------
    def refresh(self, conn: sqlite3.Connection, generation: int) -> bool:
        """Bring the in-memory index up to the database; returns True when something changed.

        Incremental: when the chunks changed (``generation``) the chunk ids are diffed through the
        ``chunks_hash`` index (never the 75 MB embeddings table); when vectors were added (``vector_log``)
        only the chunks still without one are probed. A full probe of every such chunk happens once per
        process (after loading the file) or when the log was pruned past what this process has seen."""
        import faiss

        with self._lock:
            seq, low = log_range(conn, self.model)
            key = (generation, seq)
            if key == self._key:
                return False
            first = not self._loaded
            if first:
                self.db_id = get_meta(conn, "db_id") or ""
                self._load_file()
                trim_heap()  # the file's read buffer (~the index's size) goes back to the OS
            probe: set[str] = set()
            chunks_moved = first or generation != self._key[0]
            if chunks_moved:
                gone, fresh = self._diff_chunks(conn)
                if gone and self._index is not None:
                    self._index.remove_ids(np.fromiter(gone, dtype=np.int64))
                    self._ids -= gone
                probe |= fresh
            if first or low > self._log_seq + 1:
                probe |= set(self._missing)  # the log does not reach back to what we saw: probe them all
            elif seq > self._log_seq:
                probe |= {h for (h,) in conn.execute(
                    "SELECT hash FROM vector_log WHERE model = ? AND seq > ?", (self.model, self._log_seq))
                    if h in self._missing}
            added = 0
            if probe:
                vecs, ids = self._fetch(conn, sorted(probe))
                if len(ids):
                    if self._index is None:
                        self.dim = vecs.shape[1]
                        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
                    self._index.add_with_ids(vecs, ids)
                    self._ids |= set(int(i) for i in ids)
                    added = len(ids)
            self._key, self._log_seq, self.generation = key, seq, generation
            return added > 0 or chunks_moved

    def _diff_chunks(self, conn: sqlite3.Connection) -> tuple[set[int], set[str]]:
        """(chunk ids gone, hashes of chunks new since the last look), keeping ``_missing`` current:
        ids come from the small chunks_hash index, hashes only for the new ids (a rowid range)."""
        now = chunk_ids(conn)
        tracked = np.fromiter(self._ids, np.int64, len(self._ids))
        gone = set(np.setdiff1d(tracked, now, assume_unique=True).tolist())
        waiting = np.fromiter((i for ids in self._missing.values() for i in ids), np.int64)
        dropped = set(np.setdiff1d(waiting, now, assume_unique=True).tolist())
        if dropped:  # chunks removed before they ever got a vector
            for h in list(self._missing):
                left = [i for i in self._missing[h] if i not in dropped]
                if left:
                    self._missing[h] = left
                else:
                    del self._missing[h]
        fresh: set[str] = set()
        for cid, h in conn.execute("SELECT id, hash FROM chunks WHERE id > ?", (self._max_chunk,)):
            if cid not in self._ids:
                self._missing.setdefault(h, []).append(cid)
                fresh.add(h)
        if len(now):
            self._max_chunk = max(self._max_chunk, int(now.max()))
        return gone, fresh

    def _fetch(self, conn: sqlite3.Connection, hashes: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of the missing chunks with these hashes (one row per chunk id); pops them from ``_missing``."""
        out_v: list[bytes] = []
        out_i: list[int] = []
        for start in range(0, len(hashes), 500):
            part = hashes[start : start + 500]
            marks = ",".join("?" * len(part))
            for h, blob in conn.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})", (self.model, *part)):
                for cid in self._missing.pop(h, ()):
                    out_i.append(cid)
                    out_v.append(blob)
        if not out_i:
            return np.zeros((0, self.dim or 1), np.float32), np.zeros(0, np.int64)
        vecs = np.frombuffer(b"".join(out_v), dtype=np.float32).reshape(len(out_i), -1)
        if self.dim is not None and self._index is not None and vecs.shape[1] != self.dim:
            raise ValueError("embedding dimension changed within one model id")
        return np.ascontiguousarray(vecs), np.array(out_i, dtype=np.int64)

    def coverage(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """(distinct chunk texts with a vector, distinct chunk texts) as of the last refresh."""
        texts = conn.execute("SELECT COUNT(DISTINCT hash) FROM chunks").fetchone()[0]  # index only
        with self._lock:
            return texts - len(self._missing), texts

    # ---- search ----------------------------------------------------------------------------------
    def __contains__(self, cid: object) -> bool:
        """Does this chunk id have a vector (as of the last refresh)?"""
        return cid in self._ids

    @property
    def count(self) -> int:
        return int(self._index.ntotal) if self._index is not None else 0

    def search(self, q: np.ndarray, k: int, allowed: list[int] | None = None) -> list[tuple[int, float]]:
        import faiss

        with self._lock:
            if self._index is None or self._index.ntotal == 0 or k <= 0:
                return []
            q = np.ascontiguousarray(q.reshape(1, -1), dtype=np.float32)
            if q.shape[1] != self._index.d:
                return []
            params = None
            if allowed is not None:
                if not allowed:
                    return []
                sel = faiss.IDSelectorBatch(np.array(allowed, dtype=np.int64))
                params = faiss.SearchParameters(sel=sel)
            # One query over ~50k rows is ~4 ms on one core; OpenMP threads only add barrier waits
            # on a shared machine (measured under load: 78 ms with 2 threads, 3.8 ms with 1).
            # The setting is per calling thread.
            faiss.omp_set_num_threads(1)
            scores, ids = self._index.search(q, min(k, self._index.ntotal), params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]
