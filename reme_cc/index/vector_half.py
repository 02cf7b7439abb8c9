"""The vector half of recall: the current model's vectors (vectors.py, shared between processes
through one mapped file), the embedding models, and the embedding of chunks that have no vector
yet (here, or by the workspace's one low-priority worker, ``catchup``)."""

from __future__ import annotations

import contextlib
import threading
from typing import Any
from collections.abc import Callable

from ..base.config import Config
from ..base.errors import ReMeError
from ..base.workspace import Workspace
from . import catalog, catchup, embedder as emb
from .catalog import index_log, rows_in
from .database import Database, NoLock, open_rw
from .vectors import VectorStore

EMBED_BATCH = 8
VECTOR_LOG_KEEP = 20000  # rows of vector_log kept (announcements of new vectors)


class VectorHalf:
    def __init__(self, db: Database, ws: Workspace, config: Config, stop: threading.Event, *, background: bool = True):
        self.db = db
        self.ws = ws
        self.config = config
        self.background = background  # new chunks are embedded in the background (not by a benchmark)
        self.model_id = emb.model_id_for(config)  # validates config.embedding early; None: no vectors
        self.store: VectorStore | None = VectorStore(db.metadata, self.model_id, None) if self.model_id else None
        self.error: str | None = None  # the last background embedding failure
        self._stop = stop  # the index is closing
        self._query_embedder: emb.Embedder | None = None
        self._passage_embedder: emb.Embedder | None = None
        self._recent_queries: dict[tuple[int, str], Any] = {}  # query_vector's last few
        self._recent_lock = threading.Lock()
        self._thread: threading.Thread | None = None  # a private in-memory index's own embedding thread
        self._wake = threading.Event()
        if self.model_id and db.mode == "rw":
            with db.guard() as conn:
                catalog.set_meta(conn, "model", self.model_id)

    def reset(self) -> None:
        """Start the store over from the shared file (the database was rebuilt or wiped, or idle)."""
        if self.store is not None:
            self.store = VectorStore(self.db.metadata, self.model_id or "", None)

    def refresh(self) -> None:
        """Take in the vectors other processes added since (vector_log) or a new shared file."""
        if self.store is None:
            return
        gen = self.db.generation()
        with self.db.lock:
            self.store.refresh(self.db.conn, gen)

    def embedder(self, role: str) -> emb.Embedder:
        """The model for ``role`` (query | passage): queries get their own handle, so a running
        background batch never delays a search."""
        attr = "_query_embedder" if role == "query" else "_passage_embedder"
        with self.db.lock:
            model = getattr(self, attr, None)
            if model is None:
                model = emb.make_embedder(self.config)
                setattr(self, attr, model)
            return model  # type: ignore[return-value]

    def query_vector(self, text: str) -> Any:
        """The query model's vector of ``text``; the last few are kept, since one prompt is embedded by
        the search and again by per-prompt recall's evidence (about 20 ms each on 2 cores)."""
        model = self.embedder("query")
        key = (id(model), text)
        with self._recent_lock:
            hit = self._recent_queries.get(key)
        if hit is not None:
            return hit
        vec = model.query(text)
        with self._recent_lock:
            self._recent_queries[key] = vec
            while len(self._recent_queries) > 8:
                self._recent_queries.pop(next(iter(self._recent_queries)))
        return vec

    def use_embedder(self, role: str, model: emb.Embedder) -> None:
        """Embed with ``model`` for ``role`` from now on (tests: a fake or a slow model)."""
        setattr(self, "_query_embedder" if role == "query" else "_passage_embedder", model)

    def warm(self) -> None:
        """Map the vectors (the shared file) and load the query model now, not in the first search."""
        if self.store is None:
            return
        self.refresh()
        self.share()
        if self.store.count:
            self.embedder("query")

    def share(self) -> None:
        """Many vectors only in this process's memory (no shared file yet, or an old one): write a new
        shared file, which this and every other process then map instead."""
        if self.store is not None and self.db.mode == "rw" and self.store.needs_save:
            self.store.save(self.db.generation())

    def coverage(self) -> tuple[int, int]:
        """(distinct chunk texts with a vector of their own for the current model, distinct chunk
        texts), from the vector store's own reconciliation (no scan of the embeddings table)."""
        own, _lent, texts = self.coverage_with_loans()
        return own, texts

    def coverage_with_loans(self) -> tuple[int, int, int]:
        """(texts with their own vector, texts searched with the vector their note's previous text
        lent them until theirs is made (carried_vectors), distinct chunk texts)."""
        if self.store is None:
            return 0, 0, 0
        self.refresh()
        store = self.store
        return self.db.run(store.coverage)

    def catch_up(self) -> int | None:
        """Make sure the backlog is being embedded, whoever made it; the worker's pid when one was started."""
        if not self.model_id or not self.background or self.db.mode != "rw":
            return None
        embedded, total = self.coverage()
        self.share()
        return catchup.ensure_worker(self.ws, self.config) if total > embedded else None

    def kick(self) -> None:
        """New chunks: hand them to the workspace's one low-priority embedding worker (a private
        in-memory index, which no other process can see, embeds in a thread of its own)."""
        if not self.model_id or not self.background or self.db.mode == "ro":
            return
        if self.db.mode == "rw":
            catchup.ensure_worker(self.ws, self.config)
            return
        self._wake.set()
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="reme-embed", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        from .polite import lower_priority

        lower_priority()
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self.embed_pending(stop=self._stop)
            except Exception as exc:  # noqa: BLE001 - background: record, retry on next change
                self.error = str(exc)
                index_log(self.db.metadata, f"embedding failed: {exc}")
            self._wake.wait(timeout=30.0)

    def embed_pending(self, limit: int | None = None, stop: threading.Event | None = None) -> int:
        """Embed chunks that have no vector for the current model yet, here and now, unless another
        process is at it (metadata/embed.lock). Returns how many chunks were embedded."""
        if not self.model_id or self.db.mode == "ro":
            return 0
        from filelock import Timeout

        try:
            with NoLock() if self.db.mode == "memory" else catchup.lock(self.db.metadata):
                return self.embed_backlog(limit=limit, stop=stop)
        except Timeout:
            return 0  # another process is embedding; its vectors reach us through vector_log

    def embed_backlog(
        self, report: Callable[[int], None] | None = None, limit: int | None = None, stop: threading.Event | None = None
    ) -> int:
        """The embedding loop (the caller holds the embed lock): batches of EMBED_BATCH chunk texts,
        each one transaction that stores the vectors and announces them in vector_log."""
        if not self.model_id or self.db.mode == "ro":
            return 0
        model = self.embedder("passage")
        memory = self.db.mode == "memory"
        if self.store is not None and not memory:
            # a backlog of lent vectors (an upgrade) is shared now, not after hours: each process maps
            # the file instead of reading every loan from the database (~3 s of CPU at 49k chunks)
            self.refresh()
            self.share()
        conn = self.db.conn if memory else open_rw(self.db.metadata)
        done = 0
        try:
            while (limit is None or done < limit) and not (stop and stop.is_set()):
                self.refresh()  # incremental: this batch's vectors, chunks written meanwhile
                with self.db.lock if memory else NoLock():
                    rows = backlog_batch(conn, self.model_id, EMBED_BATCH, self.store)
                if not rows:
                    break
                vecs = model.passages([r[1] for r in rows])
                with self.db.lock if memory else NoLock():
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        conn.executemany(
                            "INSERT OR IGNORE INTO embeddings(model, hash, vector) VALUES (?,?,?)",
                            [(self.model_id, r[0], vecs[i].astype("float32").tobytes()) for i, r in enumerate(rows)],
                        )
                        conn.executemany(
                            "INSERT INTO vector_log(model, hash) VALUES (?,?)", [(self.model_id, r[0]) for r in rows]
                        )
                        conn.executemany(  # their own vectors now: no loan any more
                            "DELETE FROM carried_vectors WHERE model = ? AND hash = ?",
                            [(self.model_id, r[0]) for r in rows],
                        )
                        # keep the log short: a reader that falls behind its start probes everything once
                        conn.execute(
                            "DELETE FROM vector_log WHERE seq <= (SELECT MAX(seq) FROM vector_log) - ?",
                            (VECTOR_LOG_KEEP,),
                        )
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                done += len(rows)
                if report:
                    report(len(rows))
        finally:
            if not memory:
                conn.close()
        if done and self.store is not None:
            self.refresh()
            self.store.save(self.db.generation())  # the warm start of every other process
        return done

    def set_embeddings(self, vectors: dict[str, Any]) -> None:
        """Replace the embedding cache of the current model with these {content hash: vector} (see Index)."""
        if not self.model_id or self.db.mode == "ro":
            raise ReMeError("set_embeddings needs a writable index with an embedding model")

        def do(conn: Any) -> None:
            with self.db.writer, catalog.transaction(conn):
                conn.execute("DELETE FROM embeddings WHERE model = ?", (self.model_id,))
                conn.execute("DELETE FROM carried_vectors WHERE model = ?", (self.model_id,))  # exactly these vectors
                conn.executemany(
                    "INSERT INTO embeddings(model, hash, vector) VALUES (?,?,?)",
                    [(self.model_id, h, v.astype("float32").tobytes()) for h, v in vectors.items()],
                )
                # announced like any new vector (other processes probe only what vector_log names)
                conn.executemany(
                    "INSERT INTO vector_log(model, hash) VALUES (?,?)", [(self.model_id, h) for h in vectors]
                )
                catalog.bump_generation(conn)

        self.db.run(do)
        # vectors were also removed, which no reader reconciles (the cache only ever grows otherwise):
        # this process starts its vector store over, without the shared file of the previous set
        if self.store is not None:
            with contextlib.suppress(OSError):
                self.store.path.unlink()
            self.reset()
        self.refresh()

    @property
    def held(self) -> bool:
        """Models or vectors in memory that ``release`` would let go of."""
        return (
            self._query_embedder is not None
            or self._passage_embedder is not None
            or (self.store is not None and self.store.count > 0)
        )

    def release(self) -> None:
        """Let go of the models and the vectors' mapping (the next query loads them again)."""
        self._query_embedder = self._passage_embedder = None
        self.reset()

    def close(self) -> None:
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)


def backlog_batch(conn: Any, model: str, size: int, store: VectorStore | None) -> list[tuple[str, str]]:
    """The next (hash, text) pairs to embed: texts with no vector at all first (the vector store's
    list: no scan of the chunks), then those searched with a loan (carried_vectors), loans of edited
    texts (the least like theirs) before those differing from the lender in the context line only;
    last, anything else the embeddings table lacks (what the store has not seen yet)."""
    if store is not None:
        waiting = store.waiting(size)
        rows = list(rows_in(conn, "SELECT hash, MIN(text) FROM chunks WHERE hash IN ({marks}) GROUP BY hash", waiting))
        if rows:
            return rows
    while True:
        lent = conn.execute(
            "SELECT k.hash, (SELECT MIN(c.text) FROM chunks c WHERE c.hash = k.hash), EXISTS (SELECT 1 FROM "
            "embeddings e WHERE e.model = k.model AND e.hash = k.hash) FROM carried_vectors k WHERE k.model = ? "
            "ORDER BY k.same_body LIMIT ?",
            (model, size),
        ).fetchall()
        live = [(h, text) for h, text, own in lent if text is not None and not own]
        idle = [(model, h) for h, text, own in lent if text is None or own]
        if idle:  # the chunks are gone, or the text has its own vector: the loan serves nothing
            with catalog.transaction(conn):
                conn.executemany("DELETE FROM carried_vectors WHERE model = ? AND hash = ?", idle)
        if live or not lent:
            break
    return (
        live
        or conn.execute(
            "SELECT c.hash, MIN(c.text) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
            "WHERE e.model = ? AND e.hash = c.hash) GROUP BY c.hash LIMIT ?",
            (model, size),
        ).fetchall()
    )
