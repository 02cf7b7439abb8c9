"""Recall: both halves for one query, gathered into one ``Recall`` with everything fusion reads."""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

import numpy as np

from . import keyword, labels, translate
from .terms import SCRIPT_CHARS, dominant_script
from .database import Database
from .keyword_half import Hits, KeywordHalf
from .records import Only, Recall
from .catalog import get_meta, rows_in
from .vector_half import VectorHalf
from .vectors import NO_IDS, in_sorted


def recall(
    db: Database,
    keywords: KeywordHalf,
    vectors: VectorHalf,
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
    """BM25 top-k in this thread while the query is embedded in another, then vector top-k (date range,
    folder and ``only``'s tags and project applied to both, before either ranks); with ``notes`` also
    the top-k notes by whole-note BM25 (read in the same transaction as the chunks) and the candidates'
    notes; with ``rare`` the query terms in at most that many chunks; with ``scripts`` the candidates
    whose dominant script is not the query's (``foreign``: one half cannot rank them fairly). Embedding
    failures leave the vector half empty with a warning; ``coverage`` is the share of chunks that have
    a vector now."""
    out = Recall(keyword_searched="keyword" in modes)
    query_cjk = dominant_script(query) == "cjk"
    store = vectors.store if "vector" in modes else None
    qvec: dict[str, Any] = {}
    worker = None
    if store is not None:
        vectors.refresh()
        if store.count:

            def embed() -> None:
                try:
                    qvec["v"] = vectors.query_vector(query)
                except Exception as exc:  # noqa: BLE001 - vectors are optional: fall back to BM25
                    qvec["error"] = str(exc)

            worker = threading.Thread(target=embed, daemon=True)
            worker.start()

    def keyword_and_filter(conn: sqlite3.Connection) -> tuple[Hits, Any, int]:
        paths = labels.allowed_paths(conn, only)  # in this transaction: both halves see the same notes
        kw: Hits = []
        if "keyword" in modes:
            kw = keywords.chunks(conn, query, k, start, end, folder, paths)
            if notes:
                out.notes = keywords.notes(conn, query, k, start, end, folder, paths)
        allowed = None
        if worker is not None and paths is not None and not (start or end or folder):
            allowed = keywords.chunk_ids(conn, paths)
        if worker is not None and allowed is None and (start or end or folder or paths is not None):
            allowed = allowed_chunks(conn, start, end, folder, paths)
        marked = cjk_ids(conn) if scripts else None  # this transaction's chunks
        if marked is not None and "keyword" in modes:
            out.translated = _translated(conn, keywords, marked, query, query_cjk, k, start, end, folder, paths)
        return (
            kw,
            allowed,
            keywords.chunk_total(conn) if store is not None else 0,
            marked,
        )  # total: the coverage's denominator

    out.keyword, allowed, total, marked = db.run(keyword_and_filter)
    if worker is not None:
        worker.join()
    if "error" in qvec:
        out.warnings.append(f"vector search unavailable ({qvec['error']}); keyword results only")
    elif store is not None and vectors.model_id:
        # one snapshot: vectors that arrive meanwhile (another thread's refresh) must not make a
        # keyword hit count as embedded when the vector search could not find it (it would lose
        # its stand-in vector rank), nor change the coverage the ranks are read with
        with db.lock:
            if "v" in qvec:  # no list of the scripts' chunks (not asked, or an older index): one scale
                out.vector, out.vector_scripts, out.foreign_z, out.scale = store.search_scripts(
                    qvec["v"], k, allowed, NO_IDS if marked is None else marked, query_cjk
                )
            count = store.count
            ids = store.ids() if notes and count < total else None
            have = frozenset([c for c, _ in out.keyword if c in store] + [c for c, _ in _vector_hits(out)])
        out.coverage = min(1.0, count / total) if total else 1.0
        out.embedded = have.__contains__
        if notes:  # notes with a vector in some chunk (a long note is embedded in part long before all of it)
            out.note_coverage = 1.0 if out.coverage >= 1.0 else keywords.note_share(ids)
    if scripts and out.vector and out.keyword_searched:
        ids = list(dict.fromkeys([c for c, _ in _vector_hits(out)] + [c for c, _ in out.keyword]))
        if marked is not None:  # the stored list: no chunk text to read
            cjk = in_sorted(np.array(ids, np.int64), marked)
            out.foreign = frozenset(c for c, is_cjk in zip(ids, cjk.tolist()) if is_cjk != query_cjk)
        else:
            out.foreign = db.run(lambda conn: foreign_hits(conn, query, ids))
    if rare and out.keyword and out.vector:
        out.rare_terms = db.run(lambda conn: keyword.rare_terms(conn, query, rare))
    if notes and (out.keyword or out.vector or out.translated):
        out.paths = keywords.chunk_paths(
            list(dict.fromkeys([c for c, _ in _vector_hits(out) + out.keyword + out.translated]))
        )
        out.chunks = db.run(keywords.chunk_total)
    return out


def _translated(
    conn: sqlite3.Connection,
    keywords: KeywordHalf,
    marked: np.ndarray,
    query: str,
    query_cjk: bool,
    k: int,
    start: str | None,
    end: str | None,
    folder: str | None,
    paths: Any,
) -> Hits:
    """BM25 top-k of the query's words in the other language (translate.py) among the other script's
    chunks; nothing (and no dictionary read) in an index without that script."""
    other_exists = len(marked) < keywords.chunk_total(conn) if query_cjk else len(marked) > 0
    words = translate.other_language(query) if other_exists else ""
    if not words:
        return []
    hits = keywords.chunks(conn, words, k, start, end, folder, paths)
    if not hits:
        return []
    cjk = in_sorted(np.array([c for c, _ in hits], np.int64), marked).tolist()
    return [hit for hit, is_cjk in zip(hits, cjk) if is_cjk != query_cjk]


def _vector_hits(rec: Recall) -> list[tuple[int, float]]:
    """Both vector rankings' hits (the per-script one holds foreign chunks the plain one lacks)."""
    return rec.vector + (rec.vector_scripts or [])


_CJK: dict[str, tuple[int, np.ndarray]] = {}  # database id -> (last chunk id read, the CJK chunks' ids, sorted)


def cjk_ids(conn: sqlite3.Connection) -> np.ndarray | None:
    """The ids of the CJK chunks (cjk_chunks, written with them), sorted; None for an index that has
    no such list yet (read-only and older: no per-script ranking). Read once per process, then only
    the ids added since (chunk ids only grow; a removed chunk's id is never a live row again)."""
    if get_meta(conn, "scripts") is None:
        return None
    db = get_meta(conn, "db_id") or ""
    last, ids = _CJK.get(db, (0, np.zeros(0, np.int64)))
    new = [r[0] for r in conn.execute("SELECT id FROM cjk_chunks WHERE id > ? ORDER BY id", (last,))]
    if new or db not in _CJK:
        ids = np.concatenate([ids, np.array(new, np.int64)])
        _CJK[db] = (int(ids[-1]) if len(ids) else last, ids)
    return ids


def allowed_chunks(
    conn: sqlite3.Connection, start: str | None, end: str | None, folder: str | None, paths: set[str] | None
) -> list[int]:
    """The chunk ids the vector half may rank: dated in the range, below the folder, of the files in ``paths``."""
    sql, where, args = "SELECT c.id FROM chunks c", [], []
    if start or end:
        sql += " JOIN files f ON f.path = c.path"
        where.append("f.date BETWEEN ? AND ?")
        args += [start or "0000-00-00", end or "9999-99-99"]
    if folder:
        where.append("c.path LIKE ? ESCAPE '\\'")
        args.append(keyword.like_prefix(folder))
    if paths is not None:
        where.append("c.path IN (SELECT value FROM json_each(?))")
        args.append(json.dumps(list(paths)))
    return [r[0] for r in conn.execute(sql + " WHERE " + " AND ".join(where), args)]


_SCRIPTS: dict[tuple[str, int], str] = {}  # (database id, chunk id) -> its dominant script (an id's text never changes)
SCRIPTS_KEPT = 20_000


def foreign_hits(conn: sqlite3.Connection, query: str, ids: list[int]) -> frozenset[int]:
    """For an index without cjk_chunks (read-only and older): the chunks among ``ids`` whose dominant
    script differs from the query's, read from their first SCRIPT_CHARS characters (the whole text costs ~4 ms for 100 chunks; on the benchmark
    sets the first 600 decide as the whole does for all but 1 of 2,710 chunks). Each chunk's is
    remembered: the candidates of one session's queries are mostly the same chunks (~6 ms each time)."""
    mine = dominant_script(query)
    db = get_meta(conn, "db_id") or ""
    missing = [cid for cid in ids if (db, cid) not in _SCRIPTS]
    if missing:
        if len(_SCRIPTS) + len(missing) > SCRIPTS_KEPT:
            _SCRIPTS.clear()
        sql = f"SELECT id, substr(text, 1, {SCRIPT_CHARS}) FROM chunks WHERE id IN ({{marks}})"
        _SCRIPTS.update(((db, cid), dominant_script(text)) for cid, text in rows_in(conn, sql, missing))
    return frozenset(cid for cid in ids if _SCRIPTS.get((db, cid), mine) != mine)
