"""The Index facade: one object per process over the derived index in ``metadata/``.

Files are the truth; this is a cache of them. The state lives in objects of their own, each with a
small public API: ``db`` (database.py: the connection, the writers' lock, damage rebuilds),
``writer`` (writer.py: sync, watch, update, reindex, background bursts), ``keywords``
(keyword_half.py: BM25 in memory, FTS5 until then), ``vectors`` (vector_half.py: the vector store,
the models, the embedding backlog), ``links`` (graph.LinkGraph: the link graph in memory) and
``residency`` (idle.py: release after idle). Fusion (search.py) is a function of one ``Recall``
(recall.py). Writers serialise on ``metadata/index.lock``; readers use SQLite's WAL snapshots and
reconcile the shared vector file when the generation counter moves or ``vector_log`` announces new
vectors. Chunks without a vector are handed to the workspace's one low-priority embedding worker
(``catchup``).
"""

from __future__ import annotations

import contextlib
import os
import resource
import sqlite3
import threading
from typing import Any
from collections.abc import Callable, Sequence

from ..base.config import Config
from ..base.errors import InvalidInputError, ReMeError
from ..base.workspace import Workspace
from . import catalog, catchup, embedder as emb, keyword, tiers
from .bm25 import trim_heap
from .budget import Budget
from .database import Database
from .graph import LinkGraph, neighbors
from .idle import Residency
from .keyword_half import KeywordHalf
from .records import (
    FileRecord,
    Graph,
    GraphEdge,
    GraphNode,
    Hit,
    LinkRecord,
    Neighbor,
    NodeHit,
    Only,
    Recall,
    SearchResponse,
)
from .sync import CONFLICT_KEY, HARD_LINK_KEY, SyncReport, backfill_labels, backfill_scripts, rechunk, retokenize
from .vector_half import VectorHalf
from .writer import CatalogWriter

__all__ = [
    "Index",
    "SyncReport",
    "FileRecord",
    "LinkRecord",
    "Neighbor",
    "Hit",
    "SearchResponse",
    "Recall",
    "NodeHit",
    "Graph",
    "GraphNode",
    "GraphEdge",
]


class Index:
    def __init__(
        self, ws: Workspace, config: Config, *, background_embedding: bool = True, budget: Budget | None = None
    ):
        """``budget``: a repository's team memory -- what is indexed is bounded (budget.py) and every
        write but a handful of files runs in the background, so its content never holds a query.
        ``background_embedding=False``: new chunks wait for ``embed_pending`` (benchmarks, tests)."""
        self.ws = ws
        self.config = config
        self.metadata = ws.metadata
        self.budget = budget
        self._stop = threading.Event()  # closing: background work stops
        self.db = Database(self.metadata)
        if self.mode == "rw":  # stored tokens of an older tokenizer are made again (sync.retokenize)
            self.db.run(lambda conn: retokenize(conn, self.db.writer, self.metadata))
            # chunks of an older chunker are made again by the next sync (sync.rechunk)
            self.db.run(lambda conn: rechunk(conn, self.db.writer, self.metadata))
            # and an index made before search's tag filter gets its labels (sync.backfill_labels)
            self.db.run(lambda conn: backfill_labels(conn, self.db.writer, ws, self.metadata))
            # and one made before the vector search per script gets its list of CJK chunks
            self.db.run(lambda conn: backfill_scripts(conn, self.db.writer, self.metadata))
        self.vectors = VectorHalf(self.db, ws, config, self._stop, background=background_embedding)
        self.keywords = KeywordHalf(self.db)
        # the link graph in memory for search's expansion; the database answers until it is built
        self.links = LinkGraph(lambda: catalog.reader(self.metadata, self.mode)) if self.mode in ("rw", "ro") else None
        self.writer = CatalogWriter(self.db, ws, config, self._stop, self.keywords, self.vectors, budget)
        self.residency = Residency(self.db, self.keywords, self.vectors, self.links)
        self.db.on_rebuilt.append(self.vectors.reset)
        self.db.resync = lambda: self.sync(force=True)

    @property
    def mode(self) -> str:
        """rw | ro (an existing index on a read-only filesystem) | memory (a private in-memory index)."""
        return self.db.mode

    @property
    def model_id(self) -> str | None:
        return self.vectors.model_id

    def read(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """``fn(conn)`` on the index database, for read-only queries of the layers above."""
        return self.db.run(fn)

    # ---- the files ---------------------------------------------------------------------------------
    def sync(self, force: bool = False, disk: dict[str, tuple[int, int]] | None = None) -> SyncReport:
        """Bring the index up to date with the files (incremental; cheap when nothing changed).
        ``disk``: a walk already made (the watcher's periodic check) instead of walking now."""
        return self.writer.sync(disk)

    def maybe_sync(self) -> None:
        """Before a query: what changed since the last one (notifications), else a walk at most once a second."""
        self.residency.queried()
        self.writer.maybe_sync()

    def update_paths(self, paths: list[str]) -> None:
        """Re-index these workspace paths now (written, moved or deleted by a tool)."""
        self.writer.update(paths)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Wipe the derived index (keeping the embedding cache, keyed by content) and rebuild it."""
        return self.writer.reindex(progress)

    def watch(self, wait: float = 0.0) -> dict[str, object]:
        """Learn about changed files from the OS from now on (a long-lived process: the MCP server)
        instead of walking before queries; until the watches are in place queries answer from this
        process's last sync (the watcher's first walk then brings what changed; before any, they walk),
        and whenever they fail queries walk as before. ``wait``: seconds to wait for the watches (tests)."""
        return self.writer.watch(wait)

    def indexing(self) -> tuple[int, int] | None:
        """(files written, files) while a background write runs, else None."""
        return self.writer.indexing()

    def left_out(self) -> str | None:
        """A team index: what its budget left out, as one line for the answer (None: nothing)."""
        return self.writer.left_out()

    def freshness(self) -> dict[str, object]:
        return self.writer.freshness()

    # ---- vectors -----------------------------------------------------------------------------------
    def set_embeddings(self, vectors: dict[str, Any]) -> None:
        """Replace the embedding cache of the current model with these {content hash: vector}, announced
        in vector_log like the embedding worker's (benchmarks and tests raise the coverage with it, a
        nested subset at a time; vectors must be L2-normalized)."""
        self.vectors.set_embeddings(vectors)

    def chunk_texts(self) -> dict[str, str]:
        """{content hash: text} of every chunk (the keys of the embedding cache)."""
        return self.db.run(lambda conn: dict(conn.execute("SELECT hash, MIN(text) FROM chunks GROUP BY hash")))

    def vector_coverage(self) -> tuple[int, int]:
        """(distinct chunk texts with a vector for the current model, distinct chunk texts)."""
        return self.vectors.coverage()

    def embed_pending(self, limit: int | None = None, stop: threading.Event | None = None) -> int:
        """Embed chunks that have no vector yet, here and now, unless another process is at it
        (metadata/embed.lock). Returns how many chunks were embedded."""
        return self.vectors.embed_pending(limit, stop)

    def embed_backlog(
        self, report: Callable[[int], None] | None = None, limit: int | None = None, stop: threading.Event | None = None
    ) -> int:
        """The embedding loop (the caller holds the embed lock); see VectorHalf.embed_backlog."""
        return self.vectors.embed_backlog(report, limit, stop)

    def share_vectors(self) -> None:
        """Write a new shared vector file when many vectors are only in this process's memory."""
        self.vectors.share()

    def catch_up(self) -> int | None:
        """A long-lived process (the server): make sure the backlog is being embedded, whoever made it.
        Returns the worker's pid when one was started."""
        if self.residency.released:
            return None  # released while idle: checked again once a query has come
        return self.vectors.catch_up()

    # ---- warm-up and release -----------------------------------------------------------------------
    def warm_keyword(self) -> None:
        """Start loading/building the in-memory BM25 index in the background (server start)."""
        self.keywords.warm()

    def warm_links(self) -> None:
        """Start building the in-memory link graph in the background (server start, after the sync)."""
        if self.links is not None:
            self.links.start()

    def warm_vectors(self) -> None:
        """Map the vectors (the shared file) and load the query model now, not in the first search."""
        self.vectors.warm()

    def release_idle(self, idle: float | None = None) -> bool:
        """After ``idle`` seconds without a query, let go of the query model, the vectors' mapping and
        the in-memory BM25 and link graph (see idle.Residency). Returns whether anything was released."""
        idle = self.config.idle_release_s if idle is None else idle
        return self.residency.release_idle(idle)

    def trim_memory(self) -> None:
        """Hand back what a server need not keep: SQLite's page cache (FTS5 answers before the BM25
        snapshot was in fill it by tens of MB) and glibc's free heap."""
        with contextlib.suppress(ReMeError, sqlite3.Error):
            self.db.run(lambda conn: conn.execute("PRAGMA shrink_memory"))
        trim_heap()

    # ---- queries -----------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = 5,
        min_score: float = 0.0,
        start_date: str | None = None,
        end_date: str | None = None,
        folder: str | None = None,
        *,
        tier_of: Callable[[Any], int | None] | None = None,
        chunks: bool = False,
        tags: Sequence[str] = (),
    ) -> SearchResponse:
        """``limit`` distinct notes, each hit its note's best chunk (``chunks``: the best chunks); with
        ``tags``, only notes carrying all of them (run_search)."""
        from .search import run_search

        return run_search(
            self,
            query,
            limit,
            min_score,
            start_date,
            end_date,
            folder=folder,
            tier_of=tier_of,
            chunks=chunks,
            tags=tags,
        )

    def recall(
        self,
        query: str,
        k: int,
        start: str | None = None,
        end: str | None = None,
        modes: tuple[str, ...] = ("vector", "keyword"),
        folder: str | None = None,
        notes: bool = False,
        rare: int = 0,
        scripts: bool = False,
        only: Only | None = None,
    ) -> Recall:
        """Both recall halves for one query (see recall.py)."""
        from .recall import recall

        return recall(
            self.db, self.keywords, self.vectors, query, k, start, end, modes, folder, notes, rare, scripts, only
        )

    def rare_term_chunks(self, query: str, max_df: int) -> set[int]:
        return self.db.run(lambda conn: keyword.rare_term_chunks(conn, query, max_df))

    def chunk_total(self) -> int:
        return self.db.run(self.keywords.chunk_total)

    def chunk_paths(self, ids: list[int]) -> dict[int, str]:
        """{chunk id: file path} (note-level signals group chunks by their file)."""
        return self.keywords.chunk_paths(ids)

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
                around = self.links.neighbors(conn, paths) if self.links is not None else neighbors(conn, paths)
                for hit in hits:
                    hit.outlinks, hit.outlinks_total, hit.inlinks, hit.inlinks_total = around[hit.path]
            return hits

        return self.db.run(load)

    def traverse(self, seeds: list[str], depth: int = 1, direction: str = "both") -> Graph:
        from .graph import traverse

        self.maybe_sync()
        return self.db.run(lambda conn: traverse(conn, seeds, depth, direction))

    def node_search(
        self, query: str, limit: int = 20, *, tier_of: Callable[[Any], int | None] | None = None
    ) -> list[NodeHit]:
        """Digest nodes matching ``query``; ``tier_of`` orders them by their project (see tiers.py)."""
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
                rec = catalog.file_record(conn, path)
                out.append(
                    NodeHit(
                        path,
                        rec.name if rec else None,
                        rec.description if rec else None,
                        round(score, 4),
                        projects.get(path),
                    )
                )
            return out

        return self.db.run(q)

    def inbound_links(self, target: str, *, prefix: bool = False) -> list[LinkRecord]:
        """Links resolving to ``target`` (or, with prefix=True, to anything under the folder ``target/``),
        plus dangling links written literally as that path."""
        from .graph import inbound_links

        target = self.ws.normalize(target)
        self.maybe_sync()
        return self.db.run(lambda conn: inbound_links(conn, target, prefix))

    def outbound_links(self, source: str) -> list[LinkRecord]:
        from .graph import outbound_links

        source = self.ws.normalize(source)
        self.maybe_sync()
        return self.db.run(lambda conn: outbound_links(conn, source))

    def file_info(self, path: str) -> FileRecord | None:
        path = self.ws.normalize(path)
        self.maybe_sync()
        return self.db.run(lambda conn: catalog.file_record(conn, path))

    def status(self) -> dict[str, Any]:
        self.maybe_sync()

        def q(conn: sqlite3.Connection) -> dict[str, Any]:
            def one(sql: str, *a: Any) -> Any:
                return conn.execute(sql, a).fetchone()[0]

            def unindexed(key: str) -> list[str]:  # files kept out of search, and why
                sql = (
                    "SELECT path FROM files WHERE indexed=0 AND json_valid(extra) AND "
                    f"json_type(extra, '$.{key}') IS NOT NULL ORDER BY path"
                )
                return [r[0] for r in conn.execute(sql)]

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
                "embedding_error": self.vectors.error,
                "index_bytes": size + vec_size,
                "generation": catalog.generation(conn),
                "keyword_index": self.keywords.info(),
                "link_graph": self.links.info() if self.links is not None else {"ready": False},
                "last_sync": catalog.get_meta(conn, "last_sync"),
                "conflicts": unindexed(CONFLICT_KEY),
                "hard_linked": unindexed(HARD_LINK_KEY),
                "freshness": self.freshness(),
                **({"left_out": self.left_out()} if self.left_out() else {}),
                "rss_mb": round(rss_mb(), 1),
            }

        out = self.db.run(q)
        if self.model_id:
            cov = catchup.coverage(self)
            out.update(
                embedded_chunks=cov["embedded"],
                embedding_backlog=cov["backlog"],
                embedding=cov,
                embedding_summary=catchup.describe(cov),
            )
        else:
            out.update(embedded_chunks=0, embedding_backlog=0)
        return out

    def close(self) -> None:
        if self.db.closed:
            return
        self._stop.set()
        self.writer.close()
        self.keywords.close()
        if self.links is not None:
            self.links.close()
        self.vectors.close()
        self.db.close()


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r / 1e6 if os.uname().sysname == "Darwin" else r / 1e3
