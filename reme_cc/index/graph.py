"""The wikilink graph, served from the links table: one-hop neighbors for search expansion and
breadth-first traversal for the traverse tool."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..errors import InvalidInputError, NotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from . import Graph, Neighbor

EXPANSION_CAP = 10


def _names(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[str | None, str | None]]:
    out: dict[str, tuple[str | None, str | None]] = {}
    for start in range(0, len(paths), 900):
        part = paths[start : start + 900]
        marks = ",".join("?" * len(part))
        for p, n, d in conn.execute(f"SELECT path, name, description FROM files WHERE path IN ({marks})", part):
            out[p] = (n, d)
    return out


Expansion = tuple[list["Neighbor"], int, list["Neighbor"], int]


def neighbors(conn: sqlite3.Connection, paths: list[str], cap: int = EXPANSION_CAP) -> dict[str, Expansion]:
    """{path: (outlinks[:cap], total distinct outlinks, inlinks[:cap], total distinct inlinks)} for every
    path, in two queries whatever the number of paths (outlinks and inlinks, each with its neighbors'
    names joined): search expands all its hits at once instead of paying look-ups per hit."""
    from . import Neighbor

    uniq = list(dict.fromkeys(paths))
    Link = tuple[str | None, bool, str | None, str | None]  # predicate, resolved, name, description
    outs: dict[str, dict[str, Link]] = {p: {} for p in uniq}
    ins: dict[str, dict[str, Link]] = {p: {} for p in uniq}
    for start in range(0, len(uniq), 900):
        part = uniq[start : start + 900]
        marks = ",".join("?" * len(part))
        for source, target, resolved, predicate, name, description in conn.execute(
            "SELECT l.source, l.target, l.resolved_path, l.predicate, f.name, f.description FROM links l "
            f"LEFT JOIN files f ON f.path = COALESCE(NULLIF(l.resolved_path, ''), l.target) WHERE l.source IN ({marks}) "
            "ORDER BY l.source, l.line, l.rowid", part
        ):
            key = resolved or target
            mine = outs[source]
            if key not in mine or (mine[key][0] is None and predicate):
                mine[key] = (predicate, resolved is not None, name, description)
        for resolved, source, predicate, name, description in conn.execute(
            "SELECT l.resolved_path, l.source, l.predicate, f.name, f.description FROM links l "
            f"LEFT JOIN files f ON f.path = l.source WHERE l.resolved_path IN ({marks}) "
            "AND l.source != l.resolved_path ORDER BY l.resolved_path, l.source, l.line, l.rowid", part
        ):
            mine = ins[resolved]
            if source not in mine or (mine[source][0] is None and predicate):
                mine[source] = (predicate, True, name, description)
    result: dict[str, Expansion] = {}
    for p in uniq:
        o, i = outs[p], ins[p]
        out_list = [Neighbor(k, name, desc, pred, res) for k, (pred, res, name, desc) in list(o.items())[:cap]]
        in_list = [Neighbor(k, name, desc, pred, res) for k, (pred, res, name, desc) in list(i.items())[:cap]]
        result[p] = (out_list, len(o), in_list, len(i))
    return result


def traverse(conn: sqlite3.Connection, seeds: list[str], depth: int, direction: str) -> "Graph":
    """Breadth-first over resolved wikilinks from ``seeds`` up to ``depth`` hops."""
    from ..notes.wikilinks import build_stems, resolve_target
    from . import Graph, GraphEdge, GraphNode

    if direction not in ("in", "out", "both"):
        raise InvalidInputError(f"traverse: direction must be in, out or both (got {direction!r})")
    if not 1 <= depth <= 5:
        raise InvalidInputError(f"traverse: depth must be between 1 and 5 (got {depth})")
    if not seeds:
        raise InvalidInputError("traverse: give at least one seed path")
    known = {r[0] for r in conn.execute("SELECT path FROM files")}
    start: list[str] = []
    for raw in seeds:
        res = resolve_target(raw.strip(), known, build_stems(known)) if raw.strip() not in known else None
        path = raw.strip() if res is None else res.path
        if path is None:
            hint = " (the short name matches several files; give the full path)" if res and res.how == "ambiguous" else ""
            raise NotFoundError(f"traverse: {raw!r} is not in the workspace{hint}; use list or search to find the path")
        start.append(path)
    depth_of: dict[str, int] = {p: 0 for p in start}
    edges: dict[tuple, GraphEdge] = {}
    frontier = list(dict.fromkeys(start))
    for hop in range(1, depth + 1):
        nxt: list[str] = []
        for path in frontier:
            rows = []
            if direction in ("out", "both"):
                rows += conn.execute(
                    "SELECT source, target, resolved_path, predicate, anchor, alias, line FROM links WHERE source=?", (path,)
                ).fetchall()
            if direction in ("in", "both"):
                rows += conn.execute(
                    "SELECT source, target, resolved_path, predicate, anchor, alias, line FROM links WHERE resolved_path=?", (path,)
                ).fetchall()
            for source, target, resolved, predicate, anchor, alias, line in rows:
                dst = resolved or target
                key = (source, dst, line, anchor)
                if key not in edges:
                    edges[key] = GraphEdge(source, dst, predicate, anchor, alias, line or 0, resolved is not None)
                other = dst if source == path else source
                if resolved is not None and other not in depth_of:
                    depth_of[other] = hop
                    nxt.append(other)
                elif resolved is None and dst not in depth_of:
                    depth_of[dst] = hop  # a dangling target is a node too, but is not expanded
        frontier = nxt
    names = _names(conn, list(depth_of))
    nodes = [GraphNode(p, *names.get(p, (None, None)), p in known, d) for p, d in depth_of.items()]
    return Graph(nodes, sorted(edges.values(), key=lambda e: (e.source, e.line, e.target)))
