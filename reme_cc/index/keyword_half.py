"""The keyword half of recall: BM25 over chunks and over whole notes, from the in-memory index
(bm25.py) once it is in, from SQLite's FTS5 until then and for folder filters (the same answers)."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any
from collections.abc import Collection, Iterator

from . import catalog, keyword, tiers
from .bm25 import BM25Index, ChunkNotes, search_notes_fts
from .database import Database

Hits = list[tuple[int, float]]


class KeywordHalf:
    def __init__(self, db: Database):
        self.db = db
        # in-memory BM25 (same answers as FTS5's bm25(), ~100x faster at 50k chunks); None: FTS5 only (memory mode)
        self.bm25: BM25Index | None = BM25Index(db.metadata, db.mode) if db.mode in ("rw", "ro") else None
        self._chunk_count = (-1, 0)  # (generation, chunks)
        self._note_map: tuple[int, Any] = (-1, None)  # (generation, ChunkNotes)

    def chunks(
        self,
        conn: sqlite3.Connection,
        query: str,
        k: int,
        start: str | None = None,
        end: str | None = None,
        folder: str | None = None,
        paths: Collection[str] | None = None,
    ) -> Hits:
        """Top-k BM25 (chunk id, score) among the chunks of ``paths`` (None: every file). A folder
        filter (the dream's recall over digest/) is answered exactly by FTS5; else the in-memory index
        when it is ready."""
        if paths is not None and not paths:
            return []
        if folder:
            return keyword.search_chunks(conn, query, k, start, end, keyword.like_prefix(folder), paths)
        if self.bm25 is not None:
            hits = self.bm25.search(conn, query, k, start, end, paths)
            if hits is not None:
                return hits
        return keyword.search_chunks(conn, query, k, start, end, paths=paths)

    def notes(
        self,
        conn: sqlite3.Connection,
        query: str,
        k: int,
        start: str | None,
        end: str | None,
        folder: str | None,
        paths: Collection[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Top-k notes by whole-note BM25 (note path, score), among ``paths`` (None: every file)."""
        if paths is not None and not paths:
            return []
        if self.bm25 is not None:
            return self.bm25.search_notes(conn, query, k, start, end, folder, paths)
        return search_notes_fts(
            conn, query, k, start, end, keyword.like_prefix(folder) if folder else None, paths=paths
        )

    def chunk_ids(self, conn: sqlite3.Connection, paths: Collection[str]) -> Any:
        """The chunk ids of the files in ``paths`` (an array) from the in-memory index, or None while
        it is not in (the caller asks SQL)."""
        return self.bm25.chunk_ids(conn, paths) if self.bm25 is not None else None

    def note_share(self, ids: Any) -> float:
        """Share of notes with a chunk among ``ids`` (the chunks with a vector)."""

        def share(conn: sqlite3.Connection) -> float:
            got = self.bm25.note_share(conn, ids) if self.bm25 is not None else None
            if got is None:  # the in-memory keyword index is not in: the same share from SQL (~75 ms at 49k chunks)
                gen = catalog.generation(conn)
                if self._note_map[0] != gen:
                    self._note_map = (gen, ChunkNotes(conn))
                got = self._note_map[1].share(ids)
            return got

        return self.db.run(share)

    def chunk_paths(self, ids: list[int]) -> dict[int, str]:
        """{chunk id: file path}. A chunk's path never changes (a changed file gets new chunk ids), so the
        in-memory index answers for the live chunks it holds and the database for the rest."""

        def q(conn: sqlite3.Connection) -> dict[int, str]:
            known = self.bm25.paths(conn, ids) if self.bm25 is not None else {}
            missing = [cid for cid in ids if cid not in known]
            if missing:
                known.update(tiers.chunk_paths(conn, missing))
            return known

        return self.db.run(q)

    def chunk_total(self, conn: sqlite3.Connection) -> int:
        gen = catalog.generation(conn)
        if self._chunk_count[0] != gen:
            self._chunk_count = (gen, conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        return self._chunk_count[1]

    @contextlib.contextmanager
    def fts5_only(self) -> Iterator[None]:
        """Answer from FTS5 alone meanwhile (benchmarks and tests compare the two)."""
        keep, self.bm25 = self.bm25, None
        try:
            yield
        finally:
            self.bm25 = keep

    def warm(self) -> None:
        """Start loading/building the in-memory index in the background (server start)."""
        if self.bm25 is not None:
            self.bm25.start()

    @property
    def held(self) -> bool:
        return self.bm25 is not None and self.bm25.ready

    def discard(self) -> None:
        """Let go of the in-memory index (FTS5 answers until it is loaded again)."""
        if self.bm25 is not None:
            self.bm25.discard()

    def info(self) -> dict[str, Any]:
        return self.bm25.info() if self.bm25 is not None else {"ready": False, "disabled": "fts5 only"}

    def close(self) -> None:
        if self.bm25 is not None:
            self.bm25.close()
