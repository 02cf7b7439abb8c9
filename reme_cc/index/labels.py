"""Labels: what search filters on before ranking, kept per indexed file in the ``labels`` table
(catalog.ADDED): kind ``tag`` holds a note's tags and every level above them (notes/tags.py: a filter
on ``a`` finds a note tagged ``a/b``), kind ``project`` its frontmatter ``project`` value as JSON (the
value tiers.project_of reads from ``files.extra``). Written with the file's rows (sync.store), read by
``allowed_paths`` in the recall's own transaction, so both halves see the same notes."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..base.errors import ReMeError
from ..notes import tags as note_tags
from .catalog import rows_in
from .records import Only
from .tiers import FIELD

TAG = "tag"
PROJECT = FIELD


def labels_of(meta: dict[str, Any], body: str) -> list[tuple[str, str]]:
    """(kind, value) rows of a note with this frontmatter and body."""
    rows = [(TAG, t) for t in sorted(note_tags.with_parents(note_tags.note_tags(meta, body)))]
    value = meta.get(FIELD)
    if value is not None:  # as files.extra stores it, so json.loads gives what project_of gives
        rows.append((PROJECT, json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)))
    return rows


def store(conn: sqlite3.Connection, path: str, rows: list[tuple[str, str]]) -> None:
    conn.executemany("INSERT INTO labels(path, kind, value) VALUES (?, ?, ?)", [(path, k, v) for k, v in rows])


def allowed_paths(conn: sqlite3.Connection, only: Only | None) -> set[str] | None:
    """The files a search may return under ``only``, or None when it keeps every file."""
    if only is None or (not only.tags and only.project is None):
        return None
    if not _has_table(conn):
        if only.tags:  # an older index on a read-only disk (a writable one gets the table on open)
            raise ReMeError(
                "search: this index predates tag filters and the workspace is read-only; search without "
                "tags, or run `reme-cc reindex` where the workspace is writable"
            )
        return None  # the project preference then leaves notes out after ranking, as before
    found: set[str] | None = tagged(conn, only.tags) if only.tags else None
    if only.project is not None and (found is None or found):
        by_project = of_projects(conn, only.project)
        if by_project is not None:
            found = by_project if found is None else found & by_project
    return found


def tagged(conn: sqlite3.Connection, tags: tuple[str, ...]) -> set[str]:
    """The files carrying every one of ``tags`` (canonical): one index-only lookup per tag (5,000 of
    10k notes: ~5 ms; one query with GROUP BY over them all took twice that)."""
    sql = "SELECT path FROM labels WHERE kind = ? AND value = ?"
    return set.intersection(*({r[0] for r in conn.execute(sql, (TAG, t))} for t in tags))


# the distinct values of one kind, one index seek each (every search with a project preference asks:
# DISTINCT read all 100k rows of a 100k-note workspace, 17 ms; this 0.04 ms)
_DISTINCT = (
    "WITH RECURSIVE v(x) AS (SELECT MIN(value) FROM labels WHERE kind = ?1 UNION ALL "
    "SELECT (SELECT MIN(value) FROM labels WHERE kind = ?1 AND value > x) FROM v WHERE x IS NOT NULL) "
    "SELECT x FROM v WHERE x IS NOT NULL"
)


def of_projects(conn: sqlite3.Connection, keep: Any) -> set[str] | None:
    """The files whose ``project`` value ``keep`` keeps, or None when it keeps them all. Asked per
    distinct value (a workspace holds a few), so the index needs no idea of what a project is."""
    values = [r[0] for r in conn.execute(_DISTINCT, (PROJECT,))]
    kept = [v for v in values if keep(json.loads(v))]
    unlabelled = keep(None)
    if unlabelled and len(kept) == len(values):
        return None
    out = {
        r[0]
        for r in rows_in(conn, "SELECT path FROM labels WHERE kind = ? AND value IN ({marks})", kept, before=(PROJECT,))
    }
    if unlabelled:
        out.update(
            r[0]
            for r in conn.execute(
                "SELECT path FROM files WHERE indexed = 1 AND path NOT IN (SELECT path FROM labels WHERE kind = ?)",
                (PROJECT,),
            )
        )
    return out


def known_tags(conn: sqlite3.Connection, limit: int) -> list[tuple[str, int]]:
    """The most used tags (tag, notes), as a hint when a tag filter found nothing."""
    if not _has_table(conn):
        return []
    sql = "SELECT value, COUNT(*) AS n FROM labels WHERE kind = ? GROUP BY value ORDER BY n DESC, value LIMIT ?"
    return [(r[0], r[1]) for r in conn.execute(sql, (TAG, limit))]


def _has_table(conn: sqlite3.Connection) -> bool:
    """False for an index made before the labels table on a read-only disk (catalog.add_missing)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name='labels'").fetchone() is not None
