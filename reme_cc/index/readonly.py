"""Read-only queries on the index database, standard library only (no numpy or jieba): what
the SessionStart hook's brief reads, before the plugin's environment may exist, and the project names
the notes record. The schema is catalog.py's; nothing outside the index layer writes SQL against it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from collections.abc import Callable

from . import terms as terms_
from .catalog import DB_NAME, open_db, version

BRIEF_STATEMENT_S = 2.0  # the SessionStart hook waits for the brief: no statement of it may take longer


def with_index(metadata: Path, fn: Callable[[sqlite3.Connection], Any], default: Any) -> Any:
    """``fn(conn)`` on the index in ``metadata`` (the workspace's derived-state folder,
    ``Workspace.metadata``; a team memory's is in the personal workspace) opened read-only -- it never
    waits long for a writer, and a statement stops after BRIEF_STATEMENT_S; ``default`` when there is
    no index yet, it holds objects reme never makes, or on any database problem."""
    path = Path(metadata) / DB_NAME
    if not path.is_file():
        return default
    try:
        conn = open_db(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0.2, statement_s=BRIEF_STATEMENT_S)
    except sqlite3.Error:
        return default
    try:
        conn.execute("PRAGMA query_only=1")
        return fn(conn)
    except sqlite3.Error:
        return default
    finally:
        conn.close()


def recent_cards(conn: sqlite3.Connection, project: str, cwd: str, since: str, limit: int = 40) -> list[str]:
    """Daily cards since ``since`` (ISO date) that belong to ``project``: its ``project`` key, or the
    name or working directory mentioned in their frontmatter (cards recorded before projects existed)."""
    like = f"%{project}%"
    return [
        r[0]
        for r in conn.execute(
            "SELECT path FROM files WHERE path LIKE 'daily/%' AND date >= ? AND "
            "((json_valid(extra) AND json_extract(extra, '$.project') = ?) "
            "OR extra LIKE ? OR extra LIKE ? OR name LIKE ? OR description LIKE ?) ORDER BY date DESC LIMIT ?",
            (since, project, f"%{cwd}%" if cwd else like, like, like, like, limit),
        )
    ]


def digest_citing(conn: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    """{digest node: how many of its links point at ``paths``}."""
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    return {
        src: int(n)
        for src, n in conn.execute(
            f"SELECT source, COUNT(*) FROM links WHERE source LIKE 'digest/%' AND "
            f"(resolved_path IN ({marks}) OR target IN ({marks})) GROUP BY source",
            (*paths, *paths),
        )
    }


def node_matches(conn: sqlite3.Connection, terms: list[str], limit: int = 20) -> list[str]:
    """Digest nodes whose name, description or path match any of ``terms``, best BM25 first."""
    if not terms:
        return []
    try:  # nodes_fts holds English words by their stem (terms.py); this process may have no stemmer
        stored = dict.fromkeys(terms_.stored_form(t, terms_.fts_exists(conn, "nodes_fts")) for t in terms)
        expr = " OR ".join('"' + t.replace('"', '""') + '"' for t in stored)
        return [
            r[0]
            for r in conn.execute(
                "SELECT path FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY bm25(nodes_fts) LIMIT ?", (expr, limit)
            )
        ]
    except sqlite3.Error:  # a term FTS5 cannot parse: no matches rather than no brief
        return []


def summary(conn: sqlite3.Connection, path: str) -> tuple[str, str, str | None] | None:
    """(name, description, extra JSON: the other frontmatter keys) of an indexed file, or None."""
    row = conn.execute("SELECT name, description, extra FROM files WHERE path = ?", (path,)).fetchone()
    return None if row is None else (row[0] or "", row[1] or "", row[2])


def known_projects(conn: sqlite3.Connection) -> dict[str, str]:
    """{name: root} of the projects the workspace's indexed notes record (the catalog's ``extra``
    column holds their frontmatter beyond name/description)."""
    out: dict[str, str] = {}
    rows = conn.execute(
        "SELECT json_extract(extra, '$.project'), json_extract(extra, '$.project_root') FROM files "
        "WHERE json_valid(extra) AND json_type(extra, '$.project_root') = 'text' ORDER BY path"
    )
    for name, root in rows:
        if isinstance(name, str) and name and name not in out:
            out[name] = root
    return out


def catalog_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None, str | None]]:
    """(path, name, description, extra JSON, date) of every catalogued file, in path order: the memory
    viewer's listings (surfaces/view)."""
    return [
        (r[0], r[1] or "", r[2] or "", r[3], r[4])
        for r in conn.execute("SELECT path, name, description, extra, date FROM files ORDER BY path")
    ]


def resolved_links(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(source, resolved path) of every link that resolves to a file: the viewer's graph."""
    return conn.execute("SELECT source, resolved_path FROM links WHERE resolved_path IS NOT NULL").fetchall()


# ---- per-prompt recall (memory/prompt_recall.py): the keyword evidence for one prompt --------------


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def term_counts(conn: sqlite3.Connection, terms: list[str]) -> tuple[int, dict[str, int]]:
    """(chunks in the index, {term: chunks holding it}): FTS5 counts a term's rows from its doclist,
    about 1 ms for a term in 24k of 49k chunks."""
    total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    counts = {}
    for term in terms:
        try:
            row = conn.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (_phrase(term),)).fetchone()
        except sqlite3.Error:  # a term FTS5 cannot parse holds nothing
            row = (0,)
        counts[term] = int(row[0])
    return int(total), counts


def matching_chunks(conn: sqlite3.Connection, terms: list[str], k: int) -> list[tuple[int, float]]:
    """The ``k`` chunks best matching any of ``terms`` (id, FTS5 bm25: lower is better)."""
    if not terms:
        return []
    expr = " OR ".join(_phrase(t) for t in terms)
    try:
        return conn.execute(
            "SELECT rowid, bm25(chunks_fts) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
            (expr, k),
        ).fetchall()
    except sqlite3.Error:
        return []


def chunk_details(
    conn: sqlite3.Connection, ids: list[int]
) -> dict[int, tuple[str, int, int, str, str, str, str, str | None, str | None]]:
    """{chunk id: (path, start line, end line, text, stored tokens, note name, description, extra JSON,
    date)} for the chunks that still exist."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT c.id, c.path, c.start_line, c.end_line, c.text, f.tokens, fi.name, fi.description, fi.extra, fi.date "
        f"FROM chunks c JOIN chunks_fts f ON f.rowid = c.id LEFT JOIN files fi ON fi.path = c.path WHERE c.id IN ({marks})",
        ids,
    )
    return {
        r[0]: (r[1], int(r[2] or 0), int(r[3] or 0), r[4] or "", r[5] or "", r[6] or "", r[7] or "", r[8], r[9])
        for r in rows
    }


_PINNED: dict[tuple[str, int], list[str]] = {}  # (database id, generation) -> its pinned notes


def pinned_notes(conn: sqlite3.Connection, limit: int = 50) -> list[str]:
    """Notes whose frontmatter pins them (notes/pinned.py), in path order. Remembered per index
    generation (the scan reads every file's frontmatter: ~7 ms at 10k files, on every prompt)."""
    import json

    from ..notes.pinned import PINNED_KEY, is_pinned

    key = version(conn)  # read before the files: a write in between only makes this entry older
    found = _PINNED.get(key)
    if found is None:
        rows = conn.execute(
            "SELECT path, extra FROM files WHERE json_valid(extra) AND json_type(extra, ?) IS NOT NULL ORDER BY path",
            (f"$.{PINNED_KEY}",),
        )
        found = [path for path, extra in rows if is_pinned(json.loads(extra))]
        if len(_PINNED) >= 8:  # the personal and a team index or two
            _PINNED.clear()
        _PINNED[key] = found
    return found[:limit]


def session_card(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The daily card whose frontmatter ``session_id`` is ``session_id`` (the newest), or None."""
    row = conn.execute(
        "SELECT path FROM files WHERE path LIKE 'daily/%' AND json_valid(extra) "
        "AND json_extract(extra, '$.session_id') = ? ORDER BY date DESC, path DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return row[0] if row else None


def chunks_holding(conn: sqlite3.Connection, text: str | None, paths: list[str] = ()) -> list[tuple[str, int]]:
    """(path, chunks) of the files whose chunks hold ``text`` (ASCII case ignored), or of ``paths``
    when ``text`` is None: what ``forget`` finds in the index."""
    if text is None:
        marks = ",".join("?" * len(paths))
        sql = f"SELECT path, COUNT(*) FROM chunks WHERE path IN ({marks}) GROUP BY path ORDER BY path"
        return conn.execute(sql, list(paths)).fetchall()
    like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    sql = "SELECT path, COUNT(*) FROM chunks WHERE text LIKE ? ESCAPE '\\' GROUP BY path ORDER BY path"
    return conn.execute(sql, (like,)).fetchall()


def note_chunk_ids(conn: sqlite3.Connection, paths: list[str]) -> list[int]:
    """The chunk ids of these notes, in path then line order."""
    if not paths:
        return []
    marks = ",".join("?" * len(paths))
    rows = conn.execute(f"SELECT id FROM chunks WHERE path IN ({marks}) ORDER BY path, start_line", paths)
    return [r[0] for r in rows]


def title_matches(conn: sqlite3.Connection, words: list[str], limit: int = 20) -> list[str]:
    """Notes whose name or description holds one of ``words`` (a stored form is a prefix of the word
    as written): the chunks hold a note's body only, and a card's name says what it is about."""
    if not words:
        return []
    like = " OR ".join("lower(name) LIKE ? OR lower(description) LIKE ?" for _ in words)
    args = [f"%{w}%" for w in words for _ in (0, 1)]
    return [r[0] for r in conn.execute(f"SELECT path FROM files WHERE {like} ORDER BY path LIMIT ?", (*args, limit))]
