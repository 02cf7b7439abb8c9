"""The wikilink graph, from the links table: one-hop neighbors for search expansion (in memory,
LinkGraph) and breadth-first traversal for the traverse tool."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from ..base.errors import InvalidInputError, NotFoundError
from . import catalog
from .catalog import rows_in
from .bm25 import stop_thread, trim_heap

if TYPE_CHECKING:  # pragma: no cover
    from .records import Graph, LinkRecord, Neighbor

EXPANSION_CAP = 10


def _names(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[str | None, str | None]]:
    return {
        p: (n, d)
        for p, n, d in rows_in(conn, "SELECT path, name, description FROM files WHERE path IN ({marks})", paths)
    }


Expansion = tuple[list["Neighbor"], int, list["Neighbor"], int]
_NO_NAME = (None, None)
# A link as file rowids (a dangling target as its text): a build creates next to no Python strings
# besides the ones it keeps (they were 3 per link, and pinned ~20 MB of the heap at 25k links)
_LINKS = (
    "SELECT s.rowid, t.rowid, CASE WHEN t.rowid IS NULL THEN COALESCE(NULLIF(l.resolved_path, ''), l.target) END, "
    "l.resolved_path IS NOT NULL, l.predicate, l.resolved_path IS NOT NULL AND l.resolved_path != l.source "
    "FROM links l JOIN files s ON s.path = l.source "
    "LEFT JOIN files t ON t.path = COALESCE(NULLIF(l.resolved_path, ''), l.target)"
)
_ORDER = " ORDER BY l.source, l.line, l.rowid"


class Adjacency:
    """Distinct one-hop neighbors per path as search shows them: outlinks in line order, inlinks by
    source path, a link with a predicate preferred to a plain one to the same note; with the names
    and descriptions of the neighbors that are files."""

    def __init__(self) -> None:
        self.out: dict[Any, Any] = {}  # source -> {neighbor: (predicate, resolved)}, then its Neighbors
        self.inn: dict[Any, Any] = {}  # resolved target -> {source: predicate}, then its Neighbors

    @classmethod
    def of(cls, conn: sqlite3.Connection, paths: list[str] | None = None) -> Adjacency:
        """The links of ``paths`` (both directions), or every link (one scan of the table), read in one
        snapshot (a file removed between the queries would leave a rowid without its path)."""
        adj = cls()
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            if paths is None:
                adj._add(conn.execute(_LINKS + _ORDER), out=True, inn=True)
            else:  # a path's links all come in one part, in order
                adj._add(rows_in(conn, _LINKS + " WHERE l.source IN ({marks})" + _ORDER, paths), out=True, inn=False)
                adj._add(
                    rows_in(conn, _LINKS + " WHERE l.resolved_path IN ({marks})" + _ORDER, paths), out=False, inn=True
                )
            adj._freeze(conn)
        finally:
            if own:
                conn.execute("COMMIT")
        return adj

    def _add(self, rows: Any, out: bool, inn: bool) -> None:
        """Link rows in (source, line, rowid) order: the outlinks of their sources, the inlinks of
        their resolved targets."""
        for source, target, dangling, resolved, predicate, inlink in rows:
            key = dangling if target is None else target
            if out:
                mine = self.out.setdefault(source, {})
                if key not in mine or (mine[key][0] is None and predicate):
                    mine[key] = (predicate, bool(resolved))
            if inn and inlink and target is not None:
                into = self.inn.setdefault(target, {})
                if source not in into or (into[source] is None and predicate):
                    into[source] = predicate

    def _freeze(self, conn: sqlite3.Connection) -> None:
        """Rowids into paths, and each path's neighbors into a tuple of (immutable) Neighbors, each one
        made once however many notes link to or from it (12k for 51k links)."""
        from .records import Neighbor

        ids = set(self.out) | set(self.inn)
        ids.update(k for d in self.out.values() for k in d if isinstance(k, int))
        ids.update(k for d in self.inn.values() for k in d)
        files = {
            rowid: (path, name, description)
            for rowid, path, name, description in rows_in(
                conn, "SELECT rowid, path, name, description FROM files WHERE rowid IN ({marks})", sorted(ids)
            )
        }
        made: dict[tuple[Any, str | None, bool], Neighbor] = {}

        def neighbor(key: Any, predicate: str | None, resolved: bool) -> Neighbor:
            got = made.get((key, predicate, resolved))
            if got is None:
                path, name, description = files[key] if isinstance(key, int) else (key, None, None)
                got = made[(key, predicate, resolved)] = Neighbor(path, name, description, predicate, resolved)
            return got

        self.out = {
            files[s][0]: tuple(neighbor(k, pred, res) for k, (pred, res) in d.items()) for s, d in self.out.items()
        }
        self.inn = {files[t][0]: tuple(neighbor(k, pred, True) for k, pred in d.items()) for t, d in self.inn.items()}

    def expansion(self, path: str, cap: int = EXPANSION_CAP) -> Expansion:
        o, i = self.out.get(path, ()), self.inn.get(path, ())
        return list(o[:cap]), len(o), list(i[:cap]), len(i)


def neighbors(conn: sqlite3.Connection, paths: list[str], cap: int = EXPANSION_CAP) -> dict[str, Expansion]:
    """{path: (outlinks[:cap], total distinct outlinks, inlinks[:cap], total distinct inlinks)} for every
    path, from the database in three queries (outlinks, inlinks, names) whatever the number of paths."""
    uniq = list(dict.fromkeys(paths))
    adj = Adjacency.of(conn, uniq)
    return {p: adj.expansion(p, cap) for p in uniq}


class LinkGraph:
    """The workspace's whole link graph in memory, for search's expansion (its queries were a quarter
    of a keyword search's time). It holds for one database state (db_id, generation): when the
    generation moves (and then holds still for a second) it is rebuilt in a background thread (0.15 s
    at 25k links), and ``neighbors`` asks the database meanwhile, so an expansion never shows a stale
    link. Past MAX_LINKS links it is not kept (6 MB live, 11 MB of RSS at 25k) and the database answers."""

    MAX_LINKS = 100_000
    SETTLE_S = 1.0

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect  # a read-only connection of the background thread's own
        self._state: tuple[tuple[str, int], Adjacency | None] | None = None
        self._thread: threading.Thread | None = None
        self._not_before = 0.0  # builds are spaced
        self._moved: tuple[tuple[str, int], float] | None = None  # the newest version queries saw, since when
        self._kept = False  # a long-lived process (the server) asked for the graph: a CLI call asks the database
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.last_build: dict[str, Any] = {}

    def neighbors(self, conn: sqlite3.Connection, paths: list[str], cap: int = EXPANSION_CAP) -> dict[str, Expansion]:
        uniq = list(dict.fromkeys(paths))
        key, state = catalog.version(conn), self._state
        adj = state[1] if state is not None and state[0] == key else None
        if adj is None:
            if self._kept and (state is None or (state[0] != key and self._settled(key))):
                self._kick()
            adj = Adjacency.of(conn, uniq)
        return {p: adj.expansion(p, cap) for p in uniq}

    def _settled(self, key: tuple[str, int]) -> bool:
        """Whether the database has held still at ``key`` for SETTLE_S: a bulk import (a `git checkout`)
        moves it every batch, and a graph built meanwhile would be stale before it is in."""
        now = time.monotonic()
        if self._moved is None or self._moved[0] != key:
            self._moved = (key, now)
        return now - self._moved[1] >= self.SETTLE_S

    def start(self) -> None:
        """Keep a graph from now on (a long-lived process): build it in the background, and again
        whenever the database moved."""
        self._kept = True
        self._kick()

    def _kick(self) -> None:
        """Build unless a build is under way or one finished less than a moment ago."""
        with self._lock:
            t = self._thread
            if self._stop.is_set() or (t is not None and t.is_alive()) or time.monotonic() < self._not_before:
                return
            self._thread = threading.Thread(target=self._build, name="reme-links", daemon=True)
            self._thread.start()

    def _build(self) -> None:
        t0 = time.perf_counter()
        try:
            conn = self._connect()
            try:
                conn.execute("BEGIN")  # one snapshot: the version and the links it holds
                key = catalog.version(conn)
                n = conn.execute("SELECT COUNT(*) FROM links").fetchone()[0]
                adj = Adjacency.of(conn) if n <= self.MAX_LINKS else None
                conn.execute("COMMIT")
            finally:
                conn.close()
        except sqlite3.Error as exc:  # the database answers expansions meanwhile; tried again later
            self.last_build = {"error": str(exc)}
            self._not_before = time.monotonic() + 30.0
            return
        trim_heap()  # the build's temporaries (the GIL, not the CPU, is what a query waits for: normal priority)
        took = time.perf_counter() - t0
        if not self._stop.is_set():
            self._state = (key, adj)
        self.last_build = {"links": n, "kept": adj is not None, "s": round(took, 3)}
        self._not_before = time.monotonic() + max(1.0, 5 * took)  # at most ~20 % of a core on rebuilds

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Block until a build under way is in (tests, benchmarks)."""
        t = self._thread
        if t is not None:
            t.join(timeout)
        return self.ready

    @property
    def ready(self) -> bool:
        return self._state is not None and self._state[1] is not None

    @property
    def version(self) -> tuple[str, int] | None:
        """The database version (db_id, generation) of the last build, or None."""
        state = self._state
        return state[0] if state is not None else None

    @property
    def started(self) -> bool:
        """A build was ever started (only a long-lived process keeps a graph)."""
        return self._thread is not None

    def may_rebuild_now(self, settled: bool = False) -> None:
        """Let the next expansion start a build at once, however recent the last one (tests);
        ``settled``: as if the database had held still for SETTLE_S since it last moved."""
        self._not_before = 0.0
        if settled and self._moved is not None:
            self._moved = (self._moved[0], time.monotonic() - self.SETTLE_S)

    def info(self) -> dict[str, Any]:
        return {"ready": self.ready, "last_build": self.last_build}

    def discard(self) -> None:
        """Forget the graph (an idle window's memory); the next expansion asks the database and rebuilds."""
        self._state = None

    def close(self) -> None:
        stop_thread(self._stop, self._thread)


def traverse(conn: sqlite3.Connection, seeds: list[str], depth: int, direction: str) -> Graph:
    """Breadth-first over resolved wikilinks from ``seeds`` up to ``depth`` hops."""
    from ..notes.wikilinks import build_stems, resolve_target
    from .records import Graph, GraphEdge, GraphNode

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
            hint = (
                " (the short name matches several files; give the full path)" if res and res.how == "ambiguous" else ""
            )
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
                    "SELECT source, target, resolved_path, predicate, anchor, alias, line FROM links WHERE source=?",
                    (path,),
                ).fetchall()
            if direction in ("in", "both"):
                rows += conn.execute(
                    "SELECT source, target, resolved_path, predicate, anchor, alias, line FROM links WHERE resolved_path=?",
                    (path,),
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


def inbound_links(conn: sqlite3.Connection, target: str, prefix: bool = False) -> list[LinkRecord]:
    """Links resolving to ``target`` (or, with prefix=True, to anything under the folder ``target/``),
    plus dangling links written literally as that path."""
    from .keyword import like_prefix

    if prefix:
        pat = like_prefix(target)
        rows = conn.execute(
            "SELECT * FROM links WHERE resolved_path LIKE ? ESCAPE '\\' OR (resolved_path IS NULL AND target LIKE ? ESCAPE '\\') "
            "ORDER BY source, line",
            (pat, pat),
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT * FROM links WHERE resolved_path = ? OR (resolved_path IS NULL AND target = ?) ORDER BY source, line",
            (target, target),
        ).fetchall()
    return [_link(r) for r in rows]


def outbound_links(conn: sqlite3.Connection, source: str) -> list[LinkRecord]:
    return [_link(r) for r in conn.execute("SELECT * FROM links WHERE source = ? ORDER BY line", (source,))]


def _link(r: tuple) -> LinkRecord:
    from .records import LinkRecord

    return LinkRecord(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6], r[7] or 0, r[8] or "")
