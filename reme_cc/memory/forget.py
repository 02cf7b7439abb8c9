"""Forget: a text, a digest node's name or a note, removed from every place the workspace keeps it.

``plan_forget`` finds every place (notes, digest nodes, session copies, the dream's saved copies and
change lists, logs and other derived files, the index) and writes nothing; ``forget`` applies a plan:

* notes change through the note service: a digest node named by the text, or whose body held nothing
  but it, is deleted, and the links to it are dropped (a list item that was the link goes whole);
  elsewhere the text becomes ``[FORGOTTEN]`` (``FORGOTTEN`` in YAML, where a bracket starts a list);
* the copies in ``session/`` get ``[FORGOTTEN]`` too, the one change of the evidence layer reme makes,
  and only here;
* derived files in ``metadata/`` that hold it are rewritten (logs, change lists, the dream's
  ``before/`` copies) or deleted (the extraction cache); the index is scrubbed (database.scrub: the
  rows, free pages, FTS5 segments, the write-ahead log, orphan embeddings, BM25 snapshot, vector files);
* a git workspace gets a commit of the rewritten files; the older commits that still hold the text are
  listed, and rewritten only by ``purge_history`` (fast-export | fast-import, then the old objects
  pruned), refused for a repository with a remote unless forced.

Then every file is searched again, raw bytes; what is left is reported. Matching is literal and
ignores ASCII case; JSON files are searched for the text's escaped forms as well. ``metadata/forget.json``
records that a forget ran (when, how many places), never what.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import mmap
import os
import re
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import nofollow
from ..base.errors import ConflictError, InvalidInputError, NotFoundError, ReMeError
from ..base.workspace import Workspace
from ..notes.evidence import sources_section
from ..notes.formats import DOCUMENT_EXTS, IMAGE_EXTS, exts
from ..notes.frontmatter import parse_note, split_frontmatter
from ..notes.store import CONTENT_LAYERS
from ..notes.text import looks_binary
from ..notes.wikilinks import parse_links
from . import gitlog
from .context import Context

FORGOTTEN = b"[FORGOTTEN]"
YAML_FORGOTTEN = b"FORGOTTEN"  # "[FORGOTTEN]" would start a YAML list where a value begins
MIN_CHARS = 4  # a shorter text matches everywhere
RECORD = "forget.json"  # under metadata/: when a forget ran and how many places, never what
NOT_WRITTEN = 3  # exit code: shown, nothing written (as `share`)
YAML_EXTS = exts(yaml=True)
DERIVED = ("bm25-", "vectors-")  # derived files rebuilt from the index: deleted, never rewritten
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass
class Place:
    path: str  # workspace-relative
    kind: str  # note | node | link | session | copy | derived | cache | index | document | name | team | other
    count: int  # occurrences (links, for kind "link")
    action: str  # rewrite | delete | drop links | scrub | cannot
    lines: list[int] = field(default_factory=list)  # 1-based, the first few


@dataclass
class ForgetPlan:
    what: str  # text | name | note
    shown: str  # what the user asked for, one line
    text: str | None = None  # the text removed (None: a note forgotten by its path)
    places: list[Place] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # notes deleted
    commits: list[str] = field(default_factory=list)  # git commits that still hold it
    remote: bool = False  # the git workspace has a remote

    @property
    def blockers(self) -> list[Place]:
        return [p for p in self.places if p.action == "cannot"]

    def preview(self) -> str:
        if not self.places and not self.commits:
            return f"{self.shown}: found nowhere in the workspace"
        lines = [f"{self.shown}: {len(self.places)} place(s)"]
        for p in self.places:
            where = f" (line {', '.join(map(str, p.lines[:5]))}{'…' if len(p.lines) > 5 else ''})" if p.lines else ""
            lines.append(f"  {p.action:<10} {p.kind:<8} {p.path}{where}")
        if self.commits:
            lines.append(
                f"  git: {len(self.commits)} commit(s) hold it ({', '.join(c[:10] for c in self.commits[:5])}"
                f"{' …' if len(self.commits) > 5 else ''}); --purge-history rewrites them"
            )
        for p in self.blockers:
            lines.append(f"  cannot rewrite {p.path}: {_BLOCKER[p.kind].format(path=p.path)}")
        return "\n".join(lines)


@dataclass
class ForgetResult:
    plan: ForgetPlan
    rewritten: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    commit: str | None = None
    purged: int = 0  # commits rewritten by purge_history
    refs: list[str] = field(default_factory=list)  # the branches and tags it rewrote
    left: list[str] = field(default_factory=list)  # files that still hold it after the run
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        lines = [
            f"forgotten: {len(self.rewritten)} file(s) rewritten, {len(self.deleted)} deleted, index scrubbed"
            + (f", git commit {self.commit[:10]}" if self.commit else "")
        ]
        if self.purged:
            lines.append(
                f"git history rewritten: {self.purged} commit(s) of {', '.join(self.refs)}; every commit id "
                "changed, the old objects were pruned (other clones keep their copies)"
            )
        lines += [f"  rewritten {p}" for p in self.rewritten] + [f"  deleted   {p}" for p in self.deleted]
        if self.left:
            lines.append(f"STILL THERE: {', '.join(self.left)}")
        for p in self.plan.blockers:
            lines.append(f"  cannot rewrite {p.path}: {_BLOCKER[p.kind].format(path=p.path)}")
        lines += self.notes
        return "\n".join(lines)


_BLOCKER = {
    "document": "a document reme cannot edit; delete it (`reme-cc delete {path}`) or edit it, then forget again",
    "name": "its file name holds the text; rename or delete it, then forget again",
    "other": "not a memory file; edit it by hand",
    "team": "derived from a repository's team memory (.reme/): forget it there, where the team's notes are",
}


# ---- matching -----------------------------------------------------------------------------------
def pattern(text: str) -> re.Pattern[bytes]:
    """The text as raw UTF-8 and as JSON writes it (quotes escaped, non-ASCII as \\u escapes), ASCII
    case ignored."""
    forms = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    alts = sorted((re.escape(f.encode("utf-8")) for f in forms), key=len, reverse=True)
    return re.compile(b"|".join(alts), re.IGNORECASE)


def _count(pat: re.Pattern[bytes], data: bytes) -> tuple[int, list[int]]:
    lines = []
    n = 0
    for m in pat.finditer(data):
        n += 1
        if len(lines) < 20:
            line = data.count(b"\n", 0, m.start()) + 1
            if not lines or lines[-1] != line:
                lines.append(line)
    return n, lines


def _file_holds(path: Path, pat: re.Pattern[bytes]) -> bool:
    """Raw bytes of any size (mapped, not read into memory)."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return False
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return pat.search(m) is not None
    except (OSError, ValueError):
        return False


def replace_in(rel: str, data: bytes, pat: re.Pattern[bytes]) -> bytes:
    """``data`` of the file ``rel`` with every occurrence replaced: YAML gets FORGOTTEN, a Markdown
    note's frontmatter too, everything else [FORGOTTEN]."""
    low = rel.lower()
    if low.endswith(YAML_EXTS):
        return pat.sub(YAML_FORGOTTEN, data)
    if low.endswith(".md"):
        text = data.decode("utf-8", errors="surrogateescape")
        raw, _body, _line, end = split_frontmatter(text)
        if raw is not None:
            head = text[:end].encode("utf-8", errors="surrogateescape")
            return pat.sub(YAML_FORGOTTEN, head) + pat.sub(FORGOTTEN, data[len(head) :])
    return pat.sub(FORGOTTEN, data)


def only_forgotten(text: str) -> bool:
    """A note body with nothing left but headings, its Sources and the forgotten marks."""
    note = parse_note(text)
    body = note.body
    section = sources_section(body)
    if section:
        body = body.replace(section, "")
    rest = [line for line in body.splitlines() if not line.lstrip().startswith("#")]
    rest_text = "\n".join(rest).replace(FORGOTTEN.decode(), "").replace(YAML_FORGOTTEN.decode(), "")
    return not re.search(r"\w", rest_text)


# ---- the plan -----------------------------------------------------------------------------------
def _files(ws: Workspace) -> list[str]:
    """Every regular file under the workspace but .git, as workspace-relative paths (no symlink followed)."""
    out = []
    root = str(ws.root)
    for folder, dirs, names in os.walk(root):
        if folder == root:
            dirs[:] = [d for d in dirs if d != ".git"]
        rel_folder = os.path.relpath(folder, root)
        for name in names:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/")
            try:
                if stat.S_ISREG(os.lstat(os.path.join(folder, name)).st_mode):
                    out.append(rel)
            except OSError:
                continue
    return sorted(out)


def _metadata_rel(ws: Workspace) -> str:
    try:
        return ws.metadata.relative_to(ws.root).as_posix()
    except ValueError:
        return "metadata"


def _kind(ws: Workspace, rel: str) -> str:
    meta = _metadata_rel(ws)
    top = rel.split("/", 1)[0]
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith(meta + "/"):
        inner = rel[len(meta) + 1 :]
        if inner.startswith("index.sqlite"):
            return "index"
        if inner.startswith("team/"):
            return "team"
        if inner.startswith(DERIVED) or inner.startswith("extract/"):
            return "cache"
        return "copy" if inner.startswith(gitlog.RUNS_DIR.split("/", 1)[1] + "/") else "derived"
    if top == "session":
        return "session"
    if top in CONTENT_LAYERS and not name.startswith("."):  # a hidden file is no note: listed, not rewritten
        return "document" if rel.lower().endswith(DOCUMENT_EXTS + IMAGE_EXTS) else "note"
    return "other"


def resolve(ctx: Context, given: str) -> tuple[str, list[str], str | None]:
    """(what, notes to delete, text to remove): a note's path, a digest node's name (its file stem or
    frontmatter name), or any text."""
    given = (given or "").strip()
    if not given or "\n" in given:
        raise InvalidInputError("forget: give one line of text, a digest node's name or a note's path")
    ws = ctx.workspace
    if "/" in given and given.split("/", 1)[0] in (*CONTENT_LAYERS, "session"):
        if given.startswith("session/"):
            raise InvalidInputError(
                f'{given} is a conversation copy (evidence); forget the text it holds instead: reme-cc forget "<text>"'
            )
        rel = ctx.notes.content_path(given)
        if not (ws.root / rel).is_file():
            raise NotFoundError(f"{rel} does not exist; give an existing note, a name or a text")
        return "note", [rel], None
    if len(given) < MIN_CHARS:
        raise InvalidInputError(
            f"forget: {given!r} is too short (it would match everywhere); give {MIN_CHARS}+ characters"
        )
    want = given.casefold()
    nodes = []
    for rel in _files(ws):
        if rel.startswith("digest/") and rel.endswith(".md"):
            stem = rel.rsplit("/", 1)[-1][:-3]
            name = parse_note(ws.read_bytes(rel).decode("utf-8", errors="replace")).name or ""
            if want in (stem.casefold(), name.strip().casefold()):
                nodes.append(rel)
    return ("name" if nodes else "text"), nodes, given


def plan_forget(ctx: Context, given: str) -> ForgetPlan:
    """Every place that holds it; writes nothing."""
    what, deleting, text = resolve(ctx, given)
    ws = ctx.workspace
    plan = ForgetPlan(what, json.dumps(given.strip(), ensure_ascii=False), text)
    plan.nodes = list(deleting)
    pat = pattern(text) if text else None
    for rel in _files(ws):
        kind = _kind(ws, rel)
        if kind == "index":
            continue  # the index is scrubbed as a whole, below
        if rel in deleting:
            plan.places.append(Place(rel, "node" if rel.startswith("digest/") else kind, 1, "delete"))
            continue
        if text is None:
            if kind == "copy" and any(rel.endswith("/before/" + d) for d in deleting):
                plan.places.append(Place(rel, kind, 1, "delete"))
            continue
        if pat.search(rel.encode("utf-8", errors="surrogateescape")):
            plan.places.append(
                Place(rel, "name" if kind != "copy" else kind, 1, "delete" if kind == "copy" else "cannot")
            )
            continue
        if kind == "document":
            continue  # their text is in the index: looked up there
        if not _file_holds(ws.root / rel, pat):
            continue
        data = (ws.root / rel).read_bytes()
        n, lines = _count(pat, data)
        if kind in ("note", "derived") and looks_binary(data[:8192]):
            kind = "document" if kind == "note" else "other"  # never rewritten byte by byte
        if kind == "note" and rel.startswith("digest/") and rel.endswith(".md"):
            new = replace_in(rel, data, pat).decode("utf-8", errors="surrogateescape")
            if only_forgotten(new):
                plan.nodes.append(rel)
                plan.places.append(Place(rel, "node", n, "delete", lines))
                continue
        action = {"cache": "delete", "document": "cannot", "other": "cannot", "team": "cannot"}.get(kind, "rewrite")
        plan.places.append(Place(rel, kind, n, action, lines))
    if text is None:
        plan.places += _extractions(ws, deleting)
    _plan_links(ctx, plan)
    _plan_index(ctx, plan, text)
    plan.commits, plan.remote = _git_holders(ws, pat, plan.nodes)
    return plan


def _extractions(ws: Workspace, deleting: list[str]) -> list[Place]:
    """The cached text of a document forgotten by its path (the cache is keyed by the content)."""
    from ..notes.documents import CACHE_DIR

    out = []
    for rel in deleting:
        if rel.lower().endswith(DOCUMENT_EXTS):
            digest = hashlib.sha256(ws.read_bytes(rel)).hexdigest()
            cached = f"{_metadata_rel(ws)}/{CACHE_DIR}/{digest}.json"
            if (ws.root / cached).is_file():
                out.append(Place(cached, "cache", 1, "delete"))
    return out


def _plan_links(ctx: Context, plan: ForgetPlan) -> None:
    """Notes linking to the notes deleted: their links are dropped."""
    if not plan.nodes:
        return
    sources, _written = ctx.notes.backlinks(set(plan.nodes))
    for src, links in _links_to(ctx, sources, set(plan.nodes)).items():
        if src not in plan.nodes:
            plan.places.append(Place(src, "link", len(links), "drop links", sorted({link.line for link in links})))


def _links_to(ctx: Context, sources: list[str], deleted: set[str]) -> dict[str, list[Any]]:
    stems = {d.rsplit("/", 1)[-1].rsplit(".", 1)[0] for d in deleted}
    out: dict[str, list[Any]] = {}
    for src in sources:
        try:
            text = ctx.workspace.read_bytes(src).decode("utf-8", errors="replace")
        except ReMeError:
            continue
        found = [link for link in parse_links(text) if _points_at(link.target, deleted, stems)]
        if found:
            out[src] = found
    return out


def _points_at(target: str, deleted: set[str], stems: set[str]) -> bool:
    t = target.strip()
    return t in deleted or f"{t}.md" in deleted or ("/" not in t and t.removesuffix(".md") in stems)


def _plan_index(ctx: Context, plan: ForgetPlan, text: str | None) -> None:
    """Chunks of the index that hold the text (documents' extracted text included)."""
    from ..index.readonly import chunks_holding

    ctx.index.sync()
    found = ctx.index.read(lambda conn: chunks_holding(conn, text, plan.nodes))
    seen = {p.path for p in plan.places}
    for path, n in found:
        if _kind(ctx.workspace, path) == "document" and path not in seen:
            plan.places.append(Place(path, "document", n, "cannot"))
    total = sum(n for _p, n in found)
    if total:
        plan.places.append(Place(f"{_metadata_rel(ctx.workspace)}/index.sqlite", "index", total, "scrub"))


# ---- git ----------------------------------------------------------------------------------------
def _git(ws: Workspace, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(ws.root), *args], input=data, capture_output=True, timeout=600)
    except FileNotFoundError:
        raise ReMeError("git is not installed; install git or remove the workspace's .git folder") from None


def _git_holders(ws: Workspace, pat: re.Pattern[bytes] | None, deleting: list[str]) -> tuple[list[str], bool]:
    """(commits whose files, file names or message hold the text -- or that hold the deleted notes --;
    whether the repository has a remote). Each blob is read once, however many commits share it."""
    if not gitlog.is_git_repo(ws):
        return [], False
    remote = bool(_git(ws, "remote").stdout.strip())
    trees: dict[str, list[tuple[bytes, bytes]]] = {}  # commit -> [(blob, path)]
    for rev in _git(ws, "rev-list", "--all").stdout.decode().split():
        entries = [e.split(b"\t", 1) for e in _git(ws, "ls-tree", "-r", "-z", rev).stdout.split(b"\0") if e]
        trees[rev] = [(head.split()[2], path) for head, path in entries if head.split()[1] == b"blob"]
    if pat is None:
        gone = {d.encode() for d in deleting}
        return [rev for rev, files in trees.items() if any(path in gone for _b, path in files)], remote
    blobs = sorted({blob for files in trees.values() for blob, _p in files})
    holding = _blobs_holding(ws, blobs, pat)
    holders = [
        rev
        for rev, files in trees.items()
        if any(blob in holding or pat.search(path) for blob, path in files)
        or pat.search(_git(ws, "cat-file", "commit", rev).stdout)
    ]
    return holders, remote


def _blobs_holding(ws: Workspace, blobs: list[bytes], pat: re.Pattern[bytes]) -> set[bytes]:
    """The blobs whose content holds the text (one ``cat-file --batch`` for all)."""
    if not blobs:
        return set()
    out = _git(ws, "cat-file", "--batch", data=b"\n".join(blobs) + b"\n").stdout
    found, pos = set(), 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        sha, _kind, size = out[pos:end].split()
        data = out[end + 1 : end + 1 + int(size)]
        if pat.search(data):
            found.add(sha)
        pos = end + 1 + int(size) + 1
    return found


def check_purge(ws: Workspace, *, force_remote: bool) -> None:
    """Refuse a history rewrite git or its remote would not survive (before anything is changed)."""
    if _git(ws, "remote").stdout.strip() and not force_remote:
        raise ConflictError(
            "refusing to rewrite the history of a git workspace with a remote (its copies keep the text, "
            "and a push would need --force); add --force-remote to rewrite the local history anyway"
        )
    if _git(ws, "diff", "--cached", "--quiet").returncode != 0:
        raise ConflictError("the workspace's git index has staged changes; commit or unstage them, then run again")


def purge_history(
    ws: Workspace, pat: re.Pattern[bytes] | None, deleted: list[str], *, force_remote: bool
) -> tuple[int, list[str]]:
    """Rewrite every commit: the text replaced (paths and messages too), the deleted notes dropped;
    then the old objects pruned. Returns (commits rewritten, the refs that hold them)."""
    if not gitlog.is_git_repo(ws):
        return 0, []
    check_purge(ws, force_remote=force_remote)
    count = len(_git(ws, "rev-list", "--all").stdout.split())
    refs = _git(ws, "for-each-ref", "--format=%(refname:short)").stdout.decode(errors="replace").split()
    exported = _git(ws, "fast-export", "--all", "--signed-tags=strip", "--tag-of-filtered-object=rewrite")
    if exported.returncode != 0:
        raise ReMeError(f"git fast-export failed: {exported.stderr.decode(errors='replace').strip()[-200:]}")
    stream = _rewrite_stream(exported.stdout, pat, set(deleted))
    imported = _git(ws, "fast-import", "--force", "--quiet", data=stream)
    if imported.returncode != 0:
        raise ReMeError(f"git fast-import failed: {imported.stderr.decode(errors='replace').strip()[-200:]}")
    for args in (("reflog", "expire", "--expire=now", "--all"), ("gc", "--prune=now", "--quiet")):
        proc = _git(ws, *args)
        if proc.returncode != 0:
            raise ReMeError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()[-200:]}")
    return count, refs


def _rewrite_stream(stream: bytes, pat: re.Pattern[bytes] | None, deleted: set[str]) -> bytes:
    """A fast-export stream with every data block and file path rewritten (lengths recomputed)."""
    out = []
    pos = 0
    paths = {p.encode() for p in deleted}
    while pos < len(stream):
        end = stream.find(b"\n", pos)
        end = len(stream) if end < 0 else end
        line = stream[pos:end]
        pos = end + 1
        if line.startswith(b"data "):
            n = int(line[5:])
            data = stream[pos : pos + n]
            pos += n
            new = pat.sub(FORGOTTEN, data) if pat is not None else data
            out.append(b"data %d\n" % len(new) + new)
            continue
        if line.startswith((b"M ", b"D ")):
            path = line.split(b" ", 3)[-1] if line.startswith(b"M ") else line[2:]
            if path.strip(b'"') in paths:
                continue  # a deleted note leaves every commit
            if pat is not None:
                line = pat.sub(YAML_FORGOTTEN, line)
        out.append(line + b"\n")
    return b"".join(out)


# ---- applying -----------------------------------------------------------------------------------
def forget(ctx: Context, plan: ForgetPlan, *, history: bool = False, force_remote: bool = False) -> ForgetResult:
    """Apply ``plan`` (``plan_forget``) under the notes lock, scrub the index, commit in a git
    workspace (``history``: rewrite the older commits too), then search every file again."""
    ws = ctx.workspace
    result = ForgetResult(plan)
    pat = pattern(plan.text) if plan.text else None
    if history and gitlog.is_git_repo(ws):
        check_purge(ws, force_remote=force_remote)  # before anything changes
    ctx.index.read(lambda conn: conn.execute("PRAGMA secure_delete=ON"))  # deleted rows leave zeros behind
    worker = _embed_lock(ws)  # held throughout: no embedding worker starts while the rows change
    if worker is None:
        result.notes.append(
            "note: the embedding worker stayed busy for 30 s; vectors of the old text may come back: "
            "run forget again once `status` shows no embedding backlog"
        )
    try:
        with ctx.notes.lock():
            _apply_notes(ctx, plan, pat, result)
            for place in plan.places:
                if place.kind in ("copy", "derived", "cache"):
                    _rewrite_metadata(ws, place, pat, result)
            if not _scrub_index(ctx):
                result.notes.append("note: a reader kept the index's write-ahead log busy; run forget again")
            _commit(ws, result)
            if history:
                result.purged, result.refs = purge_history(ws, pat, plan.nodes, force_remote=force_remote)
    finally:
        if worker is not None:
            worker.release()
    result.rewritten = [p for p in dict.fromkeys(result.rewritten) if p not in result.deleted]
    result.left = _left(ws, pat, plan.nodes)
    result.notes.append(
        "Claude Code keeps its own transcripts in ~/.claude/projects/: delete those sessions there if they hold it too."
    )
    record_run(ws, len(plan.places), bool(result.purged))
    return result


def _apply_notes(ctx: Context, plan: ForgetPlan, pat: re.Pattern[bytes] | None, result: ForgetResult) -> None:
    """The notes deleted (with the links to them), the notes and session copies rewritten."""
    for rel in plan.nodes:
        if (ctx.workspace.root / rel).is_file():  # gone meanwhile: nothing to delete
            ctx.notes.delete(rel)
            result.deleted.append(rel)
    _drop_links(ctx, plan, result)
    if pat is None:
        return
    for place in plan.places:
        if place.action == "rewrite" and place.kind == "note":
            if ctx.notes.update(place.path, _note_change(place.path, pat), evidence=False).changed:
                result.rewritten.append(place.path)
        elif place.kind == "session":
            _rewrite_session(ctx, place.path, pat)
            result.rewritten.append(place.path)
    ctx.index.update_paths([p.path for p in plan.places if p.kind == "session"])


def _scrub_index(ctx: Context) -> bool:
    """database.scrub; this process's in-memory keyword index and vectors let go (they were built
    from the old rows)."""
    from ..index.database import scrub

    scrubbed = scrub(ctx.index.db)
    ctx.index.keywords.discard()
    ctx.index.vectors.reset()
    return scrubbed


def _embed_lock(ws: Workspace) -> Any:
    """The embedding worker's lock (a worker embedding a chunk it read before the rewrite would put
    its vector back after the scrub; and while it is held no writer starts one), waited for briefly;
    None when a worker keeps it (the scrub then runs without it)."""
    from filelock import Timeout

    from ..index import catchup

    lock = catchup.lock(ws.metadata, timeout=30)
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock


def _note_change(rel: str, pat: re.Pattern[bytes]) -> Any:
    def change(old: str | None) -> str | None:
        if old is None:
            return None
        data = old.encode("utf-8", errors="surrogateescape")
        return replace_in(rel, data, pat).decode("utf-8", errors="surrogateescape")

    return change


def _drop_links(ctx: Context, plan: ForgetPlan, result: ForgetResult) -> None:
    """Links to the deleted notes: a list item that is the link goes whole, any other link becomes
    [FORGOTTEN]."""
    deleted = set(plan.nodes)
    stems = {d.rsplit("/", 1)[-1].rsplit(".", 1)[0] for d in deleted}
    for place in plan.places:
        if place.kind != "link":
            continue

        def change(text: str | None) -> str | None:
            if text is None:
                return None
            links = [link for link in parse_links(text) if _points_at(link.target, deleted, stems)]
            for link in sorted(links, key=lambda k: -k.start):
                line_start = text.rfind("\n", 0, link.start) + 1
                line_end = text.find("\n", link.end)
                line_end = len(text) if line_end < 0 else line_end + 1
                head = text[line_start : link.start]
                if _LIST_ITEM.fullmatch(head):
                    text = text[:line_start] + text[line_end:]
                else:
                    text = text[: link.start] + FORGOTTEN.decode() + text[link.end :]
            return text

        if ctx.notes.update(place.path, change, evidence=False).changed:
            result.rewritten.append(place.path)


def _rewrite_session(ctx: Context, rel: str, pat: re.Pattern[bytes]) -> None:
    """A conversation copy, under its session's lock; the copier's state learns the new size."""
    from .transcript import COPY_DIR, load_state, save_state

    ws = ctx.workspace
    session = rel[len(COPY_DIR) + 1 :].split("/", 1)[0].removesuffix(".jsonl") if rel.startswith(COPY_DIR) else ""
    lock = ws.lock(f"transcript-{session}", timeout=30) if session else ctx.notes.lock()
    with lock:
        data = replace_in(rel, ws.read_bytes(rel), pat)
        ws.write_bytes(rel, data)
        if session:
            state = load_state(ws, session)
            source = (state.get("sources") or {}).get(rel)
            if isinstance(source, dict) and "dest_size" in source:
                source["dest_size"] = len(data)
                save_state(ws, session, state)


def _rewrite_metadata(ws: Workspace, place: Place, pat: re.Pattern[bytes] | None, result: ForgetResult) -> None:
    """Derived files: caches and copies of a deleted note go, logs and change lists are rewritten."""
    if place.action == "delete" or pat is None:
        nofollow.remove(ws.root, place.path)
        result.deleted.append(place.path)
        return
    original = place.path.split("/before/", 1)[-1]  # a dream's copy is rewritten as its note was
    ws.write_bytes(place.path, replace_in(original, ws.read_bytes(place.path), pat))
    result.rewritten.append(place.path)


def _commit(ws: Workspace, result: ForgetResult) -> None:
    if not gitlog.is_git_repo(ws):
        return
    paths = [p for p in result.rewritten + result.deleted if not p.startswith(_metadata_rel(ws) + "/")]
    try:
        result.commit = gitlog.commit_paths(ws, paths, f"reme forget: {len(paths)} file(s) rewritten or deleted")
    except ReMeError as exc:
        result.notes.append(f"note: git commit skipped ({exc})")


def _left(ws: Workspace, pat: re.Pattern[bytes] | None, deleted: list[str]) -> list[str]:
    """Files that still hold it (raw bytes, or in their name): what the run could not remove."""
    if pat is None:
        return [d for d in deleted if (ws.root / d).exists()]
    return [
        rel for rel in _files(ws) if pat.search(rel.encode(errors="surrogateescape")) or _file_holds(ws.root / rel, pat)
    ]


# ---- the record ---------------------------------------------------------------------------------
def record_run(ws: Workspace, places: int, history: bool) -> None:
    """metadata/forget.json: how many forgets ran, the last one's time and number of places."""
    data = last_runs(ws)
    data = {
        "runs": int(data.get("runs", 0)) + 1,
        "last": _dt.datetime.now().isoformat(timespec="seconds"),
        "places": places,
        "history_rewritten": history,
    }
    ws.write_text(f"{_metadata_rel(ws)}/{RECORD}", json.dumps(data))


def last_runs(ws: Workspace) -> dict[str, Any]:
    """What metadata/forget.json says ({} before the first forget)."""
    try:
        data = json.loads((ws.metadata / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
