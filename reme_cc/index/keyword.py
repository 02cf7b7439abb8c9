"""Keyword recall: jieba-tokenised text in SQLite FTS5, ranked by bm25().

Documents and queries go through the same ``tokenize`` (lower-case, jieba.cut_for_search), so a
Chinese compound like 宁德时代 matches both whole and by its parts, and English works word by word.
FTS5 is incremental, multi-process safe and needs no tombstone handling.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import sqlite3
import threading
from collections.abc import Collection

from . import terms

_init_lock = threading.Lock()
_ready = False

MAX_QUERY_CHARS = 2000  # longer queries are cut: BM25 over thousands of terms is noise and slow
MAX_QUERY_TERMS = 64


_full = False


def full_dictionary() -> None:
    """Use jieba's own in-memory dict in this process (bulk indexing: ~30x faster look-ups, +75 MB)."""
    global _full
    _full = True


def _jieba():
    global _ready
    import jieba

    if not _ready:
        with _init_lock:
            if not _ready:
                jieba.setLogLevel(logging.WARNING)
                table = None
                if not _full:
                    from .dictionary import load

                    table = load(jieba)
                if table is not None:  # the machine-wide shared table: same tokens, no per-process dict
                    with jieba.dt.lock:
                        jieba.dt.FREQ, jieba.dt.total, jieba.dt.initialized = table, table.total, True
                else:
                    jieba.initialize()
                _ready = True
    return jieba


def frequencies():
    """jieba's word frequencies (word -> count; the shared table): how common a Chinese word is."""
    return _jieba().dt.FREQ


def warm_up() -> None:
    """Map the jieba dictionary now rather than inside the first CJK query."""
    _jieba()


STOPWORDS = terms.STOPWORDS
_stem_lock = threading.Lock()
_stemmer = None


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of a lower-case word (cached: a corpus has far fewer distinct words than
    words; the stemmer object keeps state between calls, hence the lock)."""
    global _stemmer
    with _stem_lock:
        if _stemmer is None:
            import snowballstemmer

            _stemmer = snowballstemmer.stemmer("english")
        return _stemmer.stemWord(word)


def _latin(text: str) -> list[str]:
    return [terms.store_form(w, stem) for w in terms.WORD.findall(text) if w not in STOPWORDS]


def tokens(text: str) -> list[str]:
    """The stored terms of a text: English words by their stem (terms.py), CJK runs by jieba, function
    words dropped."""
    text = text.lower()
    out: list[str] = []
    pos = 0
    cut = None
    for m in terms.CJK.finditer(text):
        out += _latin(text[pos : m.start()])
        if cut is None:
            cut = _jieba().cut_for_search
        out += [t for t in cut(m.group()) if t.strip() and t not in STOPWORDS]
        pos = m.end()
    out += _latin(text[pos:])
    return out


def compounds(text: str) -> list[str]:
    """Two adjacent English words of a query written as one ("ice cream" -> the stem of "icecream"):
    a note that writes them together is found too. The other way round (splitting "icecream") would
    need a dictionary of English words; the vector half finds those."""
    out: list[str] = []
    for m in _PAIR.finditer(text.lower()):
        a, b = m.group(1), m.group(2)
        if a not in STOPWORDS and b not in STOPWORDS:
            out.append(stem(a + b))
    return out


_PAIR = re.compile(r"(?<![^\W_])([a-z]{3,})[ \t]+(?=([a-z]{3,})(?![^\W_]))")  # two whole words, spaces between


def tokenize(text: str) -> str:
    """Space-joined tokens stored in the FTS5 column."""
    return " ".join(tokens(text))


# A Sources heading is structure every digest node has (notes/evidence.py): as words it would tie a
# question about a "source" to every node. Its links stay searchable.
_SOURCES_HEADING = re.compile(r"(?mi)^ {0,3}#{1,6}[ \t]+(?:sources?|来源)[ \t#]*$")


def chunk_tokens(text: str) -> str:
    """The tokens stored for a chunk's text: ``tokenize`` without its Sources heading."""
    return tokenize(_SOURCES_HEADING.sub("", text))


def query_terms(query: str) -> list[str]:
    """The distinct query tokens (first MAX_QUERY_TERMS), in order: one FTS5 phrase each."""
    return list(_query_terms(query))


@functools.lru_cache(maxsize=64)
def _query_terms(query: str) -> tuple[str, ...]:
    # one search asks for its query's terms several times (chunk BM25, whole-note BM25, rare terms):
    # jieba runs once per query (tokens depend on the text alone)
    seen: list[str] = []
    text = query[:MAX_QUERY_CHARS]
    for tok in tokens(text) + compounds(text):
        if tok not in seen:
            seen.append(tok)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return tuple(seen)


def match_expression(query: str) -> str | None:
    """FTS5 MATCH expression: every distinct query term as a quoted phrase, OR-ed (BM25 ranks)."""
    seen = query_terms(query)
    if not seen:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in seen)


def like_prefix(folder: str) -> str:
    """The escaped LIKE pattern of the paths below ``folder`` (``ESCAPE '\\'``)."""
    esc = folder.rstrip("/").replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return esc + "/%"


def search_chunks(
    conn: sqlite3.Connection,
    query: str,
    k: int,
    start_date: str | None = None,
    end_date: str | None = None,
    path_like: str | None = None,
    paths: Collection[str] | None = None,
) -> list[tuple[int, float]]:
    """Top-k (chunk id, bm25 score; higher is better) for ``query``, optionally within a date range,
    a folder (``path_like``: an escaped LIKE pattern such as ``digest/%``) and the files of ``paths``."""
    expr = match_expression(query)
    if expr is None:
        return []
    # Equal scores (identical text in several files) are ordered by path and line, not by rowid: the
    # results must depend on the files only, never on the order in which processes indexed them (the
    # id only orders chunks of one file that start on the same line). bm25.BM25Index answers the same.
    sql = "SELECT f.rowid, bm25(chunks_fts) AS s FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
    args: list[object] = [expr]
    where = " WHERE chunks_fts MATCH ?"
    if start_date or end_date:
        sql += " JOIN files fl ON fl.path = c.path"
        where += " AND fl.date IS NOT NULL AND fl.date BETWEEN ? AND ?"
        args += [start_date or "0000-00-00", end_date or "9999-99-99"]
    if path_like:
        where += " AND c.path LIKE ? ESCAPE '\\'"
        args.append(path_like)
    if paths is not None:
        where += " AND c.path IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(list(paths)))
    rows = conn.execute(sql + where + " ORDER BY s, c.path, c.start_line, c.id LIMIT ?", (*args, k)).fetchall()
    return [(int(r[0]), -float(r[1])) for r in rows]


def rare_terms(conn: sqlite3.Connection, query: str, max_df: int) -> list[frozenset[int]]:
    """For each query term that occurs in at most ``max_df`` chunks of the whole index (an identifier,
    a hash, a name), the chunk ids holding it. FTS5 stops after max_df + 1 rows per term, so common
    terms cost next to nothing."""
    out: list[frozenset[int]] = []
    for term in query_terms(query):
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?",
                ('"' + term.replace('"', '""') + '"', max_df + 1),
            )
        ]
        if len(ids) <= max_df:
            out.append(frozenset(ids))
    return out


def rare_term_chunks(conn: sqlite3.Connection, query: str, max_df: int) -> set[int]:
    """Chunk ids holding a query term that occurs in at most ``max_df`` chunks of the whole index."""
    return set().union(*rare_terms(conn, query, max_df))


def search_nodes(conn: sqlite3.Connection, query: str, k: int) -> list[tuple[str, float]]:
    expr = match_expression(query)
    if expr is None:
        return []
    rows = conn.execute(
        "SELECT path, bm25(nodes_fts) AS s FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY s, path LIMIT ?", (expr, k)
    ).fetchall()
    return [(r[0], -float(r[1])) for r in rows]
