"""Release: what a server lets go of after a while without a query (the next query loads it again
from the shared files)."""

from __future__ import annotations

import time
from typing import Any

from .bm25 import trim_heap
from .database import Database
from .keyword_half import KeywordHalf
from .vector_half import VectorHalf


class Residency:
    """What this process holds in memory for queries: the query model, the vectors' mapping, the
    in-memory BM25 and link graph, and when a query last came."""

    def __init__(self, db: Database, keywords: KeywordHalf, vectors: VectorHalf, links: Any):
        self.db = db
        self.keywords = keywords
        self.vectors = vectors
        self.links = links  # graph.LinkGraph, or None
        self._last_query = time.monotonic()
        self.released = False  # release_idle let go of models and in-memory indexes; no query since

    def queried(self) -> None:
        """A query came."""
        self._last_query = time.monotonic()
        self.released = False

    def release_idle(self, idle: float) -> bool:
        """After ``idle`` seconds without a query, let go of what the next query can load again from
        the shared files: the query model (~0.1 s to reload), the vectors (the shared file's mapping) and
        the in-memory BM25 (its snapshot, in the background; FTS5 answers meanwhile). An idle window
        then holds little more than the interpreter. Returns whether anything was released."""
        with self.db.lock:
            if self.db.closed or time.monotonic() - self._last_query < idle:
                return False
            if not (self.vectors.held or self.keywords.held or (self.links is not None and self.links.ready)):
                return False
            self.vectors.release()
            self.keywords.discard()
            if self.links is not None:
                self.links.discard()
            self.released = True
        import gc

        gc.collect()
        trim_heap()
        return True
