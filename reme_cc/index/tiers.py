"""A caller's preference applied to fused results: each candidate's file gets a tier from its
frontmatter ``project`` value (lower first, None = left out), and the fused order is kept within a
tier. The index knows nothing of what a project is; memory/project.py's ``Preference.tier`` does.

Tiers reorder only the candidates that are about equally relevant: those scoring at least
RELEVANT_BAND of the best fused score, then the rest. Measured (bench/projects.py, hybrid): with
strict tiers, vector recall's weak neighbors from the current project (found by vectors alone, ~0.7
of a hit both halves found) outranked the general preference that answered the question (0/5 found),
and from an unrelated folder general notes pushed both projects' answers out of the top two (0/22)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, TypeVar
from collections.abc import Callable

from .catalog import rows_in

FIELD = "project"
RELEVANT_BAND = 0.75
T = TypeVar("T")
TierOf = Callable[[Any], "float | None"]  # lower first; fractions allowed


def project_of(extra: str | None) -> Any:
    """A file's frontmatter ``project`` value from its catalog row's ``extra`` (None when it has none)."""
    try:
        return json.loads(extra or "{}").get(FIELD)
    except (ValueError, AttributeError):
        return None


def file_projects(conn: sqlite3.Connection, paths: set[str]) -> dict[str, Any]:
    """{path: its frontmatter ``project`` value (None when it has none)}."""
    return {
        path: project_of(extra)
        for path, extra in rows_in(conn, "SELECT path, extra FROM files WHERE path IN ({marks})", sorted(paths))
    }


def chunk_rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[str, int, int, str, Any]]:
    """{chunk id: (path, start_line, end_line, text, its file's ``project``)} in one query per 500 ids."""
    return {
        cid: (path, start, end, text, project_of(extra))
        for cid, path, start, end, text, extra in rows_in(
            conn,
            "SELECT c.id, c.path, c.start_line, c.end_line, c.text, f.extra FROM chunks c "
            "LEFT JOIN files f ON f.path = c.path WHERE c.id IN ({marks})",
            ids,
        )
    }


def chunk_paths(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    return dict(rows_in(conn, "SELECT id, path FROM chunks WHERE id IN ({marks})", ids))


def chunk_lines(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[int, int]]:
    """{chunk id: (start_line, end_line)}."""
    return {
        cid: (start, end)
        for cid, start, end in rows_in(conn, "SELECT id, start_line, end_line FROM chunks WHERE id IN ({marks})", ids)
    }


def order_by_tier(
    items: list[T], tier_of_item: Callable[[T], float | None], score_of: Callable[[T], float] | None = None
) -> list[T]:
    """``items`` (best first) reordered by tier, stable within a tier; items whose tier is None dropped.
    With ``score_of``, the relevant band (>= RELEVANT_BAND x the best score) is ordered before the rest."""
    best = max((score_of(i) for i in items), default=0.0) if score_of else 0.0
    keyed = []
    for pos, item in enumerate(items):
        tier = tier_of_item(item)
        if tier is not None:
            band = 0 if score_of is None or score_of(item) >= RELEVANT_BAND * best else 1
            keyed.append((band, tier, pos, item))
    keyed.sort(key=lambda t: t[:3])
    return [t[3] for t in keyed]


def tier_by_path(
    path_of: Callable[[T], str | None], projects: dict[str, Any], tier_of: TierOf
) -> Callable[[T], float | None]:
    def tier(item: T) -> float | None:
        path = path_of(item)
        return tier_of(projects.get(path)) if path is not None else None

    return tier


def prefer_chunks(conn: sqlite3.Connection, ranked: list[tuple[int, Any]], tier_of: TierOf) -> list[tuple[int, Any]]:
    """The project preference step of search: fused (chunk id, (score, …)) pairs reordered by tier. A
    chunk another process removed since the recall keeps a place (the best tier): reading the hits
    then finds it gone and the search runs again, instead of answering without that note."""
    paths = chunk_paths(conn, [cid for cid, _ in ranked])
    projects = file_projects(conn, set(paths.values()))
    tier = tier_by_path(lambda r: paths[r[0]], projects, tier_of)
    return order_by_tier(ranked, lambda r: tier(r) if r[0] in paths else 0, lambda r: r[1][0])
