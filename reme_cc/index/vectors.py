"""Vector recall: a faiss IndexIDMap2(IndexFlatIP) over chunk ids, cached on disk.

The truth is the embedding cache in SQLite (model, chunk hash) -> vector. The faiss file
``metadata/vectors-<model>.faiss`` (+ ``.json`` sidecar with the generation it reflects) is only a
warm start: on load it is reconciled with the database by a set difference of chunk ids (chunk ids
are never reused, so an id always means the same text). A missing, truncated or foreign file is
simply rebuilt from the cache. Writes go to a temp file + os.replace, so readers never see half a file.
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
from .catalog import get_meta, index_log


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
        """Bring the in-memory index up to ``generation``; returns True when something changed."""
        import faiss

        with self._lock:
            if generation == self.generation:
                return False
            if not self._loaded:
                self.db_id = get_meta(conn, "db_id") or ""
                self._load_file()
            rows = conn.execute(
                "SELECT c.id FROM chunks c JOIN embeddings e ON e.model = ? AND e.hash = c.hash", (self.model,)
            ).fetchall()
            want = {r[0] for r in rows}
            gone = self._ids - want
            new = sorted(want - self._ids)
            if gone and self._index is not None:
                self._index.remove_ids(np.fromiter(gone, dtype=np.int64))
            if new:
                vecs, ids = self._fetch(conn, new)
                if len(ids):
                    if self._index is None:
                        self.dim = vecs.shape[1]
                        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
                    self._index.add_with_ids(vecs, ids)
            self._ids = (self._ids - gone) | set(new)
            self.generation = generation
            return bool(gone or new)

    def _fetch(self, conn: sqlite3.Connection, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        out_v: list[bytes] = []
        out_i: list[int] = []
        if len(ids) > 2000:  # many: one scan of the join is cheaper than thousands of probes
            wanted = set(ids)
            for cid, blob in conn.execute(
                "SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.model = ? AND e.hash = c.hash", (self.model,)
            ):
                if cid in wanted:
                    out_i.append(cid)
                    out_v.append(blob)
        else:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ",".join("?" * len(part))
                # CROSS JOIN pins chunks as the outer loop (else SQLite walks every embedding of the model)
                for cid, blob in conn.execute(
                    f"SELECT c.id, e.vector FROM chunks c CROSS JOIN embeddings e ON e.model = ? AND e.hash = c.hash "
                    f"WHERE c.id IN ({marks})",
                    (self.model, *part),
                ):
                    out_i.append(cid)
                    out_v.append(blob)
        if not out_i:
            return np.zeros((0, self.dim or 1), np.float32), np.zeros(0, np.int64)
        vecs = np.frombuffer(b"".join(out_v), dtype=np.float32).reshape(len(out_i), -1)
        if self.dim is not None and self._index is not None and vecs.shape[1] != self.dim:
            raise ValueError("embedding dimension changed within one model id")
        return np.ascontiguousarray(vecs), np.array(out_i, dtype=np.int64)

    # ---- search ----------------------------------------------------------------------------------
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
