"""What a dream changed, and how to take it back.

Every dream run writes a change list ``metadata/dream/<run>.json`` (path, sha256 before/after) plus a
copy of each file's previous content under ``metadata/dream/<run>/before/``. When the workspace is a
git repository the run also ends with ONE commit of exactly those paths (the summary is the message,
with a ``Reme-Dream-Run: <run>`` trailer). ``undo_last_run`` reverts the latest run through the note
service — when it was committed, to the files as the commit's parent has them, then committed as git
revert would (``Revert "<subject>"``); from the saved copies otherwise — and refuses when the user
changed any of those files since.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import ConflictError, NotFoundError, ReMeError
from ..notes.store import NoteStore
from ..base.workspace import Workspace

RUNS_DIR = "metadata/dream"
TRAILER = "Reme-Dream-Run"


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def new_run_id() -> str:
    now = _dt.datetime.now()
    return now.strftime("%Y%m%d-%H%M%S-") + f"{now.microsecond // 1000:03d}{os.getpid() % 1000:03d}"


def _read(ws: Workspace, rel: str) -> bytes | None:
    try:
        path = ws.resolve(rel)
        return path.read_bytes() if path.is_file() else None
    except (OSError, ReMeError):
        return None


@dataclass
class ChangeRecorder:
    """Collects the paths a run wrote and their content before the run touched them.

    Call ``snapshot(prefixes)`` at the start (captures every existing file under those folders, so
    writes made by agents through the tools have a "before"), ``before(path)`` ahead of the run's own
    writes, and ``touched(path)`` after any write (the dream's Context calls it from ``changed``)."""

    ws: Workspace
    befores: dict[str, bytes | None] = field(default_factory=dict)
    paths: set[str] = field(default_factory=set)

    def snapshot(self, prefixes: list[str]) -> None:
        for prefix in prefixes:
            base = self.ws.root / prefix
            if not base.is_dir():
                continue
            for p in base.rglob("*"):
                if p.is_file() and not p.name.startswith("."):
                    rel = p.relative_to(self.ws.root).as_posix()
                    self.befores.setdefault(rel, _read(self.ws, rel))

    def before(self, rel: str) -> None:
        self.befores.setdefault(rel, _read(self.ws, rel))

    def touched(self, *rels: str) -> None:
        for rel in rels:
            if rel and not rel.startswith("metadata/"):
                self.paths.add(rel)

    def changes(self) -> list[dict[str, Any]]:
        """[{path, before_sha, after_sha}] for the touched paths whose content really differs."""
        out = []
        for rel in sorted(self.paths):
            before = self.befores.get(rel)
            after = _read(self.ws, rel)
            if before != after:
                out.append({"path": rel, "before_sha": sha256(before), "after_sha": sha256(after)})
        return out


# ---- git ----------------------------------------------------------------------------------------
def _git(root: Path, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    # a workspace repo may have no identity configured; give commits a neutral one then
    for var, val in (
        ("GIT_AUTHOR_NAME", "reme-cc"),
        ("GIT_AUTHOR_EMAIL", "reme-cc@localhost"),
        ("GIT_COMMITTER_NAME", "reme-cc"),
        ("GIT_COMMITTER_EMAIL", "reme-cc@localhost"),
    ):
        if not _git_identity_configured(root):
            env.setdefault(var, val)
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, input=input, timeout=60
        )
    except FileNotFoundError:
        raise ReMeError("git is not installed; install git or remove the workspace's .git folder") from None
    if check and proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise ReMeError(f"git {args[0]} failed: {msg[-1] if msg else proc.returncode}")
    return proc


_IDENTITY: dict[str, bool] = {}


def _git_identity_configured(root: Path) -> bool:
    key = str(root)
    if key not in _IDENTITY:
        try:
            proc = subprocess.run(
                ["git", "-C", key, "config", "user.email"], capture_output=True, text=True, timeout=10
            )
            _IDENTITY[key] = proc.returncode == 0 and bool(proc.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            _IDENTITY[key] = False
    return _IDENTITY[key]


def is_git_repo(ws: Workspace) -> bool:
    """True when the workspace root is itself the top of a git work tree."""
    if not (ws.root / ".git").exists():
        return False
    try:
        proc = _git(ws.root, "rev-parse", "--show-toplevel", check=False)
    except ReMeError:
        return False
    return proc.returncode == 0 and Path(proc.stdout.strip()).resolve() == ws.root


def git_commit(ws: Workspace, paths: list[str], message: str, run_id: str) -> str | None:
    """Commit exactly ``paths`` (additions, edits, deletions) with ``message``; the commit sha or
    None when git ignores all of them. Other staged or unstaged work of the user is left alone."""
    return _commit(ws, paths, f"{message}\n\n{TRAILER}: {run_id}")


def commit_paths(ws: Workspace, paths: list[str], message: str) -> str | None:
    """Commit exactly ``paths`` with ``message`` (forget's own commit); None when git ignores them all."""
    return _commit(ws, paths, message)


def _commit(ws: Workspace, paths: list[str], message: str) -> str | None:
    if not paths:
        return None
    ignored = set(_git(ws.root, "check-ignore", "--stdin", check=False, input="\n".join(paths)).stdout.split("\n"))
    paths = [p for p in paths if p not in ignored]
    if not paths:
        return None
    _git(ws.root, "add", "-A", "--", *paths)
    _git(ws.root, "commit", "-q", "--no-verify", "-m", message, "--only", "--", *paths)
    return _git(ws.root, "rev-parse", "HEAD").stdout.strip()


def _reverted(ws: Workspace, commit: str) -> dict[str, bytes | None]:
    """What ``git revert <commit>`` would leave in the work tree: each file the commit changed as its
    parent has it (None: absent), with git's checkout filters applied. Refused, like git revert,
    while the user has staged changes."""
    if _git(ws.root, "diff", "--cached", "--quiet", check=False).returncode != 0:
        raise ConflictError(
            f"git revert of dream commit {commit[:10]} failed: your local changes would be "
            "overwritten by revert (commit or stash them); revert it by hand"
        )
    names = _git(ws.root, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--name-only", "--root", commit)
    parent = _git(ws.root, "rev-parse", "-q", "--verify", f"{commit}^", check=False).stdout.strip()
    out: dict[str, bytes | None] = {}
    for rel in filter(None, names.stdout.split("\0")):
        blob = f"{parent}:{rel}"
        there = parent and _git(ws.root, "cat-file", "-e", blob, check=False).returncode == 0
        out[rel] = _git_bytes(ws.root, "cat-file", "--filters", blob) if there else None
    return out


def _git_bytes(root: Path, *args: str) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=60)
    except FileNotFoundError:
        raise ReMeError("git is not installed; install git or remove the workspace's .git folder") from None
    if proc.returncode != 0:
        raise ReMeError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()[-200:]}")
    return proc.stdout


# ---- run records --------------------------------------------------------------------------------
def run_record_path(run_id: str) -> str:
    return f"{RUNS_DIR}/{run_id}.json"


def save_run(ws: Workspace, run_id: str, recorder: ChangeRecorder, record: dict[str, Any]) -> dict[str, Any]:
    """Write the change list and the before-copies; return the record (with ``changes``)."""
    changes = recorder.changes()
    for ch in changes:
        before = recorder.befores.get(ch["path"])
        if before is not None:
            ws.write_bytes(f"{RUNS_DIR}/{run_id}/before/{ch['path']}", before)
    record = dict(record, run=run_id, changes=changes)
    ws.write_text(run_record_path(run_id), json.dumps(record, ensure_ascii=False, indent=2))
    return record


def list_runs(ws: Workspace) -> list[dict[str, Any]]:
    base = ws.root / RUNS_DIR
    runs = []
    for p in sorted(base.glob("*.json")) if base.is_dir() else []:
        if p.name == "catalog.json":
            continue
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("run"):
            runs.append(data)
    return runs


def undo_last_run(notes: NoteStore) -> dict[str, Any]:
    """Revert the latest dream run that changed something and was not undone yet, through the note
    service (notes lock, index update). Refuses (ConflictError) when any file it changed was changed
    again since. Returns the record."""
    ws = notes.ws
    runs = [r for r in list_runs(ws) if r.get("changes") and not r.get("undone")]
    if not runs:
        raise NotFoundError("no dream run to undo: no recorded dream changed anything (or all were undone)")
    run = runs[-1]
    edited = [ch["path"] for ch in run["changes"] if sha256(_read(ws, ch["path"])) != ch["after_sha"]]
    if edited:
        raise ConflictError(
            f"refusing to undo dream {run['run']}: {', '.join(edited[:5])} changed since the dream; "
            "undo those edits first or revert by hand"
        )
    commit = run.get("commit") if is_git_repo(ws) else None
    with notes.lock():
        if commit:
            befores = _reverted(ws, commit)
        else:
            befores = {
                ch["path"]: None
                if ch["before_sha"] is None
                else ws.read_bytes(f"{RUNS_DIR}/{run['run']}/before/{ch['path']}")
                for ch in run["changes"]
            }
        for rel, before in befores.items():
            notes.restore(rel, before)
        if commit:
            subject = _git(ws.root, "log", "-1", "--format=%s", commit).stdout.strip()
            _commit(ws, list(befores), f'Revert "{subject}"\n\nThis reverts commit {commit}.')
    run["undone"] = _dt.datetime.now().isoformat(timespec="seconds")
    ws.write_text(run_record_path(run["run"]), json.dumps(run, ensure_ascii=False, indent=2))
    return run
