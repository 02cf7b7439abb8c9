"""Team memory: a repository's shared, git-tracked memory folder, and ``reme-cc share``.

A repository may carry ``.reme/`` at its root with the personal workspace's layout (``digest/``,
``daily/``, ``resource/``), committed with the code. When a session works in that repository, recall
spans both workspaces and every hit says which one it came from. Each keeps its own ``metadata/``
(the index), which git never sees: ``.reme/.gitignore`` lists it.

Nothing goes there automatically. ``reme-cc share <digest node>`` copies (``--move``: moves) one node
into the repository's memory: personal daily cards and transcripts never leave the personal workspace,
so every link that would point outside the shared folder is rewritten to plain text (a source becomes
``session "<card name>" of <date>``), project keys are dropped (in ``.reme/`` every note belongs to
the repository's project) and secrets are redacted again on the way out.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, NotFoundError, ReMeError
from ..workspace import Workspace, team_metadata
from .project import find_root


TEAM_DIR = ".reme"
LAYERS = ("daily", "digest", "resource")
GITIGNORE = "# reme-cc: the index is derived per clone (rebuilt from these files); never commit it\nmetadata/\n"
PERSONAL_KEYS = ("project", "project_root", "cwd", "session_id", "source_conversation")


@dataclass(frozen=True)
class TeamFolder:
    repo: Path  # the repository root
    root: Path | None  # the usable shared memory folder, or None
    problem: str | None = None  # why an existing .reme/ is not used
    personal: bool = False  # .reme/ IS the personal workspace


def locate(cwd: str | os.PathLike[str], personal_root: Path | None = None) -> TeamFolder | None:
    """The shared memory folder of the repository containing ``cwd``; None outside a repository.
    A ``.reme`` that is a symlink out of the repository (or the personal workspace itself) is not
    used, and ``problem`` says why."""
    repo, is_git = find_root(cwd)
    if not is_git:
        return None
    folder = repo / TEAM_DIR
    if not folder.is_dir():
        return TeamFolder(repo, None)
    real, real_repo = folder.resolve(), repo.resolve()
    if real != real_repo and real_repo not in real.parents:
        return TeamFolder(repo, None, f"{folder} points outside the repository (to {real}); "
                                      "not used as team memory — make it a real folder inside the repository")
    if personal_root is not None and real == Path(personal_root).resolve():
        return TeamFolder(repo, None, personal=True)  # the personal workspace lives here: one workspace
    return TeamFolder(repo, real)


def team_workspace(folder: Path, personal: Workspace) -> Workspace:
    """The team memory ``folder`` as a workspace whose derived state lives in the personal workspace
    (``workspace.team_metadata``): a ``metadata/`` committed to the repository is never read or written."""
    return Workspace(folder, create=False, metadata=team_metadata(personal.metadata, folder))


def ensure_gitignore(root: Path) -> str | None:
    """Make sure the shared folder's own .gitignore keeps metadata/ out of git (an older reme kept the
    index there). Best effort: a read-only checkout needs none. Never through a symlink, which a
    repository may commit pointing anywhere (a dangling one would create its target): the problem is
    returned instead, for the caller to log."""
    path = root / ".gitignore"
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        if os.path.islink(path):
            return f"{path} is a symlink; reme does not write through it (make it a regular file to let reme add metadata/)"
        return None if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) else f"cannot update {path}: {exc.strerror or exc}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return f"{path} is not a regular file; left alone"
        with os.fdopen(os.dup(fd), "rb") as fh:
            current = fh.read(1 << 20).decode("utf-8", errors="replace")
        if "metadata/" not in current.split():
            os.write(fd, (("\n" if current and not current.endswith("\n") else "") + GITIGNORE).encode("utf-8"))
    except OSError as exc:
        return f"cannot update {path}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None


def create_folder(repo: Path) -> Path:
    """Create ``<repo>/.reme`` with its layout and .gitignore, or say clearly why not."""
    folder = repo / TEAM_DIR
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise ReMeError(f"{folder} exists but is not a folder inside the repository; move it away first")
    try:
        for layer in LAYERS:
            (folder / layer).mkdir(parents=True, exist_ok=True)
        path = folder / ".gitignore"
        if not path.exists():
            path.write_text(GITIGNORE, encoding="utf-8")
    except OSError as exc:
        raise ReMeError(f"cannot create the team memory folder {folder}: {exc.strerror or exc}; "
                        "check the repository's permissions") from None
    ensure_gitignore(folder)
    return folder


# ---- share ------------------------------------------------------------------------------------------


@dataclass
class ShareResult:
    source: str
    dest: Path
    moved: bool
    links_to_text: int
    redactions: int

    def text(self) -> str:
        out = f"shared {self.source} -> {self.dest}"
        if self.links_to_text:
            out += f" ({self.links_to_text} links to personal notes written as plain text)"
        if self.redactions:
            out += f"; {self.redactions} secrets redacted"
        if self.moved:
            out += f"; removed {self.source} from the personal workspace"
        return out + ". Commit it with the code to share it."


def _plain(ws: Workspace, target: str, alias: str | None) -> str:
    """What a link into the personal workspace becomes in a shared note."""
    from ..notes.frontmatter import parse_note
    from . import daily

    if alias:
        return alias
    name = None
    try:
        if target.endswith(".md"):
            name = parse_note(ws.read_bytes(target).decode("utf-8", errors="replace")).name
    except (ReMeError, OSError):
        name = None
    stem = Path(target).stem
    if target.startswith("daily/"):
        date = daily.date_of(target)
        return f'session "{name or stem}"' + (f" of {date}" if date else "")
    if target.startswith("session/"):
        return "a recorded conversation"
    if target.startswith("resource/"):
        return f'resource "{stem}"'
    return name or stem


def shareable_text(ws: Workspace, rel: str, team: Workspace) -> tuple[str, int, int]:
    """The node as it goes into the team folder: (text, links turned to text, secrets redacted)."""
    from ..notes.frontmatter import parse_note, render_note
    from ..notes.wikilinks import parse_links
    from ..notes.redact import redact_counts

    note = parse_note(ws.read_bytes(rel).decode("utf-8", errors="replace"))
    if note.error:
        raise InvalidInputError(f"{rel} has broken frontmatter ({note.error}); fix it before sharing")
    body = note.body
    changed = 0
    for link in sorted(parse_links(body), key=lambda l: -l.start):
        target = link.target
        if target.startswith("digest/") and team.exists(target):
            continue  # a node the team already has: the link keeps working there
        body = body[: link.start] + _plain(ws, target, link.alias) + body[link.end:]
        changed += 1
    meta = {k: v for k, v in note.meta.items() if k not in PERSONAL_KEYS}
    text, counts = redact_counts(render_note(meta, body))
    return text, changed, sum(counts.values())


def share(ctx: Any, node: str, cwd: str | os.PathLike[str], *, move: bool = False) -> ShareResult:
    ws: Workspace = ctx.workspace
    rel = ws.normalize(node)
    if not rel.startswith("digest/") or not rel.endswith(".md"):
        raise InvalidInputError(f"share takes a digest node (digest/…/x.md), not {rel}: daily cards and "
                                "conversations stay in the personal workspace")
    if not ws.exists(rel):
        raise NotFoundError(f"{rel} does not exist in the personal workspace; find it with `reme-cc node-search`")
    found = locate(cwd, ws.root)
    if found is None:
        raise ReMeError(f"{os.fspath(cwd)} is not inside a git repository; run share from the repository "
                        "whose team memory should get the node")
    if found.problem:
        raise ReMeError(found.problem)
    if found.personal:
        raise ReMeError(f"{found.repo / TEAM_DIR} is your personal workspace; point REME_WORKSPACE elsewhere "
                        "to keep a separate team memory in this repository")
    folder = found.root or create_folder(found.repo)
    ensure_gitignore(folder)
    team = team_workspace(folder, ws)  # its derived state, if any, stays out of the repository
    dest = folder / rel
    if dest.exists():
        raise ReMeError(f"{dest} already exists in the team memory; edit it there (it merges like any file)")
    text, links, redactions = shareable_text(ws, rel, team)
    try:
        team.write_text(rel, text)
    except (ReMeError, OSError) as exc:
        raise ReMeError(f"cannot write {dest}: {exc}; nothing was changed") from None
    if move:
        ctx.notes.delete(rel)
    return ShareResult(rel, dest, move, links, redactions)


def _cmd_share(args: Any) -> int:
    from .context import Context

    ctx = Context.open(getattr(args, "workspace", None))
    try:
        print(share(ctx, args.node, os.getcwd(), move=args.move).text())
    finally:
        ctx.close()
    return 0


def register_cli(subparsers: Any) -> None:
    import argparse

    p = subparsers.add_parser(
        "share", help="Copy a digest node into this repository's team memory (.reme/).",
        description="Copy (--move: move) a digest node into the team memory of the git repository you are in "
                    "(<repo>/.reme/, created on first use): links to personal notes become plain text, "
                    "project keys are dropped, secrets are redacted. Commit the file to share it.")
    p.add_argument("node", help="the digest node, e.g. digest/procedure/run-the-tests.md")
    p.add_argument("--move", action="store_true", help="remove it from the personal workspace afterwards")
    p.add_argument("--workspace", metavar="DIR", default=argparse.SUPPRESS, help="the personal memory workspace")
    p.set_defaults(func=_cmd_share)
