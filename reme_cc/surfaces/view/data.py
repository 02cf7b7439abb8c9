"""What the viewer's pages show, read from the index's catalog and links (index/readonly.py), the dream
records (memory/gitlog.py) and the logs; nothing here writes. The catalog is read once per index
generation: at 10k notes a page then costs a dictionary walk, not a query of every file's frontmatter."""

from __future__ import annotations

import difflib
import json
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from ...base.errors import ReMeError
from ...index.catalog import generation
from ...index.readonly import catalog_rows, resolved_links
from ...memory.context import Context
from ...memory.daily import date_of
from ...notes.wikilinks import build_stems, resolve_target

DAYS_PER_PAGE = 14
GRAPH_MAX_NODES = 5000  # beyond this the page asks for a narrower filter (the canvas stays fluid)
RECALL_LOG = "metadata/logs/recall.log"
RECALL_LOG_TAIL = 2 * 1024 * 1024  # bytes of the log's end read for the page


@dataclass
class FileRow:
    path: str
    name: str
    description: str
    meta: dict[str, Any]  # the frontmatter beyond name/description (the catalog's extra)
    date: str | None

    @property
    def layer(self) -> str:
        """daily, resource, session, or the digest's kind folder (personal, procedure, wiki)."""
        parts = self.path.split("/")
        if parts[0] == "digest" and len(parts) > 2:
            return parts[1]
        return parts[0]

    @property
    def projects(self) -> list[str]:
        value = self.meta.get("project")
        if isinstance(value, list):
            return [str(v) for v in value if v]
        return [str(value)] if value else []


@dataclass
class Snapshot:
    generation: int = -1
    files: dict[str, FileRow] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)
    derived: dict[Any, Any] = field(default_factory=dict)  # what pages compute from it, kept for its generation

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per snapshot: the day list, the project names, a filtered graph."""
        if key not in self.derived:
            if len(self.derived) > 64:  # filters vary: keep the memory bounded
                self.derived.clear()
            self.derived[key] = compute()
        return self.derived[key]

    def resolve(self, target: str) -> str | None:
        return resolve_target(target, self.files, self.memo("stems", lambda: build_stems(self.files))).path

    def describe(self, path: str) -> str:
        row = self.files.get(path)
        return (row.name + (f" — {row.description}" if row.description else "")) if row else path


def _meta(extra: str | None) -> dict[str, Any]:
    try:
        value = json.loads(extra) if extra else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def index_generation(ctx: Context) -> int:
    """The index's generation once it has taken in what changed on disk (it moves with every change)."""
    ctx.index.maybe_sync()
    return ctx.index.read(generation)


def read_snapshot(ctx: Context) -> Snapshot:
    """The catalog and the resolved links as the index has them now (~0.2-0.4 s at 10k notes)."""
    gen, rows, links = ctx.index.read(lambda conn: (generation(conn), catalog_rows(conn), resolved_links(conn)))
    return Snapshot(gen, {p: FileRow(p, name, desc, _meta(extra), date) for p, name, desc, extra, date in rows}, links)


# ---- timeline ----------------------------------------------------------------------------------------
@dataclass
class Day:
    date: str
    page: FileRow | None  # daily/<date>.md
    cards: dict[str, list[FileRow]]  # project ("" = general) -> cards


def days(snap: Snapshot, project: str | None = None) -> list[Day]:
    """Every day with cards or a day page, newest first; cards grouped by project (only ``project``'s
    days and cards when given)."""
    return snap.memo(("days", project), lambda: _days(snap, project))


def _days(snap: Snapshot, project: str | None) -> list[Day]:
    by_day: dict[str, Day] = {}
    for row in snap.files.values():
        day = date_of(row.path)
        if not day:
            continue
        entry = by_day.setdefault(day, Day(day, None, defaultdict(list)))
        if row.path == f"daily/{day}.md":
            entry.page = row
        elif row.path.endswith(".md"):
            names = row.projects or [""]
            if project and project not in names:
                continue
            for name in names:
                entry.cards[name].append(row)
    out = sorted(by_day.values(), key=lambda d: d.date, reverse=True)
    return [d for d in out if d.cards] if project else out


def projects(snap: Snapshot) -> list[str]:
    return snap.memo("projects", lambda: sorted({p for row in snap.files.values() for p in row.projects}))


def session_of(row: FileRow) -> str:
    """The session a card came from: its conversation copy, else its session id."""
    source = row.meta.get("source_conversation")
    if isinstance(source, str) and source:
        return source.strip("[]")
    sid = row.meta.get("session_id")
    return str(sid) if sid else ""


# ---- graph ---------------------------------------------------------------------------------------------
def graph(
    snap: Snapshot, *, layers: set[str], project: str | None, start: str | None, end: str | None
) -> dict[str, Any]:
    """Nodes (digest nodes; daily cards when the "daily" layer is asked for) and the links between them."""

    def wanted(row: FileRow) -> bool:
        if row.layer not in layers or not row.path.endswith(".md"):
            return False
        if row.layer == "daily" and date_of(row.path) and row.path.count("/") == 1:
            return False  # the day pages link every card: a hub that says nothing
        if project and project not in row.projects:
            return False
        return not ((start and (row.date or "") < start) or (end and (row.date or "9999") > end))

    rows = [r for r in snap.files.values() if wanted(r)]
    cut = len(rows) > GRAPH_MAX_NODES
    rows = rows[:GRAPH_MAX_NODES]
    ids = {r.path: i for i, r in enumerate(rows)}
    edges = sorted({(ids[s], ids[t]) for s, t in snap.links if s in ids and t in ids and s != t})
    return {
        "nodes": [{"path": r.path, "name": r.name or r.path, "layer": r.layer} for r in rows],
        "links": edges,
        "cut": cut,
    }


# ---- dreams ----------------------------------------------------------------------------------------------
def dream_diff(ctx: Context, run: dict[str, Any]) -> str:
    """What a dream run changed, as a unified diff: its git commit when it has one, else its saved
    before-copies against the files as they are now (while unchanged since the dream)."""
    from ...memory.gitlog import RUNS_DIR, is_git_repo, sha256

    ws = ctx.workspace
    commit = run.get("commit")
    if commit and is_git_repo(ws):
        proc = subprocess.run(
            ["git", "-C", str(ws.root), "show", "--no-color", "--format=", "--no-ext-diff", commit],
            capture_output=True,
            timeout=30,
        )
        if proc.returncode == 0:
            return proc.stdout.decode("utf-8", "replace")
    parts = []
    for ch in run.get("changes") or []:
        rel = ch["path"]
        before = b"" if ch.get("before_sha") is None else _read(ws, f"{RUNS_DIR}/{run['run']}/before/{rel}")
        after = _read(ws, rel)
        if after is not None and sha256(after) != ch.get("after_sha"):
            parts.append(f"--- {rel}: changed again since this dream (diff not shown)\n")
            continue
        parts.extend(
            difflib.unified_diff(
                (before or b"").decode("utf-8", "replace").splitlines(keepends=True),
                (after or b"").decode("utf-8", "replace").splitlines(keepends=True),
                f"a/{rel}",
                f"b/{rel}",
            )
        )
    return "".join(parts)


def _read(ws: Any, rel: str) -> bytes | None:
    try:
        return ws.read_bytes(rel)
    except (OSError, ReMeError):  # absent, or refused (a symlink, a hard link): no text to show
        return None


# ---- recall log --------------------------------------------------------------------------------------------
def recall_entries(ctx: Context, limit: int = 200) -> list[dict[str, Any]] | None:
    """The newest ``limit`` entries of metadata/logs/recall.log (JSON lines), newest first; None when there
    is no log. A line that is not a JSON object is shown as its text."""
    path = ctx.workspace.root / RECALL_LOG
    if not path.is_file():
        return None
    with open(path, "rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(max(0, size - RECALL_LOG_TAIL))
        lines = fh.read().decode("utf-8", "replace").splitlines()
    if size > RECALL_LOG_TAIL:
        lines = lines[1:]  # the first line read is cut
    out: list[dict[str, Any]] = []
    for line in reversed(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        out.append(entry if isinstance(entry, dict) else {"text": line})
        if len(out) >= limit:
            break
    return out
