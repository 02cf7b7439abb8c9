"""The wikilink graph, served from the links table: one-hop neighbours for search expansion and
breadth-first traversal for the traverse tool."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..errors import InvalidInputError, NotFoundError

if TYPE_CHECKING:  # pragma: no cover
    from . import Graph, Index, Neighbor

EXPANSION_CAP = 10


def _names(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[str | None, str | None]]:
    out: dict[str, tuple[str | None, str | None]] = {}
    for start in range(0, len(paths), 900):
        part = paths[start : start + 900]
        marks = ",".join("?" * len(part))
        for p, n, d in conn.execute(f"SELECT path, name, description FROM files WHERE path IN ({marks})", part):
            out[p] = (n, d)
    return out


def neighbours(conn: sqlite3.Connection, path: str, cap: int = EXPANSION_CAP) -> tuple[list["Neighbor"], int, list["Neighbor"], int]:
    """(outlinks[:cap], total distinct outlinks, inlinks[:cap], total distinct inlinks) of one file."""
    from . import Neighbor

    outs: dict[str, tuple[str | None, bool]] = {}
    for target, resolved, predicate in conn.execute(
        "SELECT target, resolved_path, predicate FROM links WHERE source=? ORDER BY line", (path,)
    ):
        key = resolved or target
        if key not in outs or (outs[key][0] is None and predicate):
            outs[key] = (predicate, resolved is not None)
    ins: dict[str, str | None] = {}
    for source, predicate in conn.execute(
        "SELECT source, predicate FROM links WHERE resolved_path=? AND source != ? ORDER BY source, line", (path, path)
    ):
        if source not in ins or (ins[source] is None and predicate):
            ins[source] = predicate
    out_keys = list(outs)[:cap]
    in_keys = list(ins)[:cap]
    names = _names(conn, out_keys + in_keys)
    out_list = [Neighbor(k, *names.get(k, (None, None)), outs[k][0], outs[k][1]) for k in out_keys]
    in_list = [Neighbor(k, *names.get(k, (None, None)), ins[k], True) for k in in_keys]
    return out_list, len(outs), in_list, len(ins)


def traverse(index: "Index", conn: sqlite3.Connection, seeds: list[str], depth: int, direction: str) -> "Graph":
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
