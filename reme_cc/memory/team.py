"""Team memory: a repository's shared, git-tracked memory folder, and ``reme-cc share``.

A repository may carry ``.reme/`` at its root with the personal workspace's layout (``digest/``,
``daily/``, ``resource/``), committed with the code. When a session works in that repository, recall
spans both workspaces and every hit says which one it came from. Each keeps its own ``metadata/``
(the index), which git never sees: ``.reme/.gitignore`` lists it.

Nothing goes there automatically. ``reme-cc share <digest node>`` copies (``--move``: moves) one node
into the repository's memory: personal daily cards and transcripts never leave the personal workspace,
so every link that would point outside the shared folder is rewritten to plain text (a source becomes
``session "<card name>" of <date>``; in code and frontmatter too), only ``SHARED_KEYS`` of the
frontmatter go (in ``.reme/`` every note belongs to the repository's project), and ``<private>`` spans,
e-mail addresses, home paths and secrets stay behind. The command shows the text before writing it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import InvalidInputError, NotFoundError, ReMeError
from ..base.workspace import Workspace, team_metadata
from .project import find_root


TEAM_DIR = ".reme"
LAYERS = ("daily", "digest", "resource")
GITIGNORE = "# reme-cc: the index is derived per clone (rebuilt from these files); never commit it\nmetadata/\n"


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
        return TeamFolder(
            repo,
            None,
            f"{folder} points outside the repository (to {real}); "
            "not used as team memory — make it a real folder inside the repository",
        )
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
        return (
            None
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
            else f"cannot update {path}: {exc.strerror or exc}"
        )
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
        raise ReMeError(
            f"cannot create the team memory folder {folder}: {exc.strerror or exc}; check the repository's permissions"
        ) from None
    ensure_gitignore(folder)
    return folder


# ---- share ------------------------------------------------------------------------------------------
# What goes into the repository (to be pushed, read by others): only these frontmatter keys, each value
# cleaned like the body; every other key (sources, source_resource, project, cwd, …) may name personal
# notes, folders or people and stays behind.
SHARED_KEYS = ("name", "description", "tags", "aliases", "type", "kind", "status", "created", "updated", "date")
NOT_WRITTEN = 3  # exit code of `reme-cc share` that showed the node and wrote nothing (no --yes)
_ANY_WIKILINK = re.compile(r"\[\[([^\[\]\n]{1,500})\]\]")  # also in code, which the link parser skips
# a file of a layer named in the text (`cat session/claude_code/s1.jsonl`); "daily/ and digest/" is prose
_LAYER_PATH = re.compile(
    r"(?<![\w/.-])(?:daily|session|resource|digest)/[^\s\[\]()|#`'\"<>]*\.[A-Za-z0-9]{1,10}(?![\w-])"
)
_OTHER_HOME = re.compile(r"(?<![\w.~/-])(?:/home/|/Users/|[A-Za-z]:\\Users\\)[^/\\\s'\"`<>:]+(?=[/\\\s'\"`<>):,;.]|$)")


@dataclass
class ShareResult:
    source: str
    dest: Path
    moved: bool
    links_to_text: int
    redactions: int
    content: str = ""  # the file as written (or, from plan_share, as it would be)
    emails: int = 0
    private_spans: int = 0
    home_paths: int = 0
    dropped_keys: list[str] = field(default_factory=list)

    def left_out(self) -> str:
        parts = [
            f"{n} {what}"
            for n, what in (
                (self.private_spans, "<private> span(s) removed"),
                (self.links_to_text, "link(s) to personal notes written as plain text"),
                (self.emails, "e-mail address(es) redacted"),
                (self.home_paths, "home path(s) written as ~"),
                (self.redactions, "secret(s) redacted"),
            )
            if n
        ]
        if self.dropped_keys:
            parts.append("personal frontmatter keys dropped: " + ", ".join(self.dropped_keys))
        return "; ".join(parts) or "nothing personal found"

    def preview(self) -> str:
        return (
            f"{self.source} -> {self.dest}\nleft out: {self.left_out()}\n"
            f"----- the file as it will be written -----\n{self.content.rstrip()}\n----- end -----"
        )

    def text(self) -> str:
        out = f"shared {self.source} -> {self.dest} ({self.left_out()})"
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
        if target.endswith(".md"):  # read by the one file rule: a symlinked card lends no name
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


class _Cleaner:
    """Turns the personal text of a node (its body, each kept frontmatter value) into what the team may
    read, counting what it left out: <private> spans (the transcript rule, notes/redact.remove_private),
    links to personal notes (wikilinks in prose and code, bare paths of the layers), home paths, e-mail
    addresses and secrets."""

    def __init__(self, ws: Workspace, team_root: Path | None):
        self.ws, self.team_root = ws, team_root
        home = os.path.expanduser("~").rstrip("/")
        self._home = re.compile(re.escape(home) + r"(?=[/\\\s'\"`<>):,;.]|$)") if home not in ("", "~") else None
        self.links = self.emails = self.spans = self.homes = self.secrets = 0

    def __call__(self, text: str) -> str:
        from ..notes.redact import hide_emails, redact_counts, remove_private_counts

        text, spans = remove_private_counts(text)
        text = self._links(text)
        text = self._home_paths(text)
        text, emails = hide_emails(text)
        text, counts = redact_counts(text)
        self.spans, self.emails, self.secrets = (
            self.spans + spans,
            self.emails + emails,
            self.secrets + sum(counts.values()),
        )
        return text

    def _kept(self, target: str) -> bool:
        """A digest node the team already has: a link to it keeps working in the team memory."""
        from ..base import nofollow

        if self.team_root is None or not target.startswith("digest/"):
            return False
        try:
            return nofollow.lstat(self.team_root, self.ws.normalize(target)) is not None
        except ReMeError:
            return False

    def _links(self, text: str) -> str:
        from ..notes.wikilinks import parse_links

        for link in sorted(parse_links(text), key=lambda l: -l.start):
            if not self._kept(link.target):
                text = text[: link.start] + _plain(self.ws, link.target, link.alias) + text[link.end :]
                self.links += 1

        def raw_link(m: re.Match[str]) -> str:  # in code: the same plain text
            inner = m.group(1)
            target, _, alias = inner.partition("|")
            target = target.split("#", 1)[0].strip()
            if self._kept(target):
                return m.group(0)
            self.links += 1
            return _plain(self.ws, target, alias.strip() or None)

        def bare_path(m: re.Match[str]) -> str:
            if self._kept(m.group(0)):
                return m.group(0)
            self.links += 1
            return _plain(self.ws, m.group(0), None)

        return _LAYER_PATH.sub(bare_path, _ANY_WIKILINK.sub(raw_link, text))

    def _home_paths(self, text: str) -> str:
        for rx in (self._home, _OTHER_HOME):
            if rx is not None:
                text, n = rx.subn("~", text)
                self.homes += n
        return text

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v


def shareable_text(ws: Workspace, rel: str, team_root: Path | None) -> tuple[str, _Cleaner, list[str]]:
    """The node as it goes into the team folder: (text, what was left out, frontmatter keys dropped).
    Read by the one file rule (Workspace.read_bytes): never through a symlink nor a hard link."""
    from ..notes.frontmatter import parse_note, render_note

    note = parse_note(ws.read_bytes(rel).decode("utf-8", errors="replace"))
    if note.error:
        raise InvalidInputError(f"{rel} has broken frontmatter ({note.error}); fix it before sharing")
    clean = _Cleaner(ws, team_root)
    meta = {k: clean.value(v) for k, v in note.meta.items() if k in SHARED_KEYS}
    dropped = sorted(k for k in note.meta if k not in SHARED_KEYS)
    return render_note(meta, clean(note.body)), clean, dropped


def plan_share(ctx: Any, node: str, cwd: str | os.PathLike[str]) -> ShareResult:
    """What ``share`` would write, and where; nothing is written (not even the team folder)."""
    ws: Workspace = ctx.workspace
    rel = ws.normalize(node)
    if not rel.startswith("digest/") or not rel.endswith(".md"):
        raise InvalidInputError(
            f"share takes a digest node (digest/…/x.md), not {rel}: daily cards and "
            "conversations stay in the personal workspace"
        )
    found = locate(cwd, ws.root)
    if found is None:
        raise ReMeError(
            f"{os.fspath(cwd)} is not inside a git repository; run share from the repository "
            "whose team memory should get the node"
        )
    if found.problem:
        raise ReMeError(found.problem)
    if found.personal:
        raise ReMeError(
            f"{found.repo / TEAM_DIR} is your personal workspace; point REME_WORKSPACE elsewhere "
            "to keep a separate team memory in this repository"
        )
    try:
        text, clean, dropped = shareable_text(ws, rel, found.root)
    except NotFoundError:
        raise NotFoundError(
            f"{rel} does not exist in the personal workspace; find it with `reme-cc node-search`"
        ) from None
    dest = (found.root or found.repo / TEAM_DIR) / rel
    if os.path.lexists(dest):
        raise ReMeError(f"{dest} already exists in the team memory; edit it there (it merges like any file)")
    return ShareResult(
        rel, dest, False, clean.links, clean.secrets, text, clean.emails, clean.spans, clean.homes, dropped
    )


def share(ctx: Any, node: str, cwd: str | os.PathLike[str], *, move: bool = False) -> ShareResult:
    """Write the node into the repository's team memory as ``plan_share`` shows it (``--move``: then
    delete it from the personal workspace)."""
    ws: Workspace = ctx.workspace
    plan = plan_share(ctx, node, cwd)
    found = locate(cwd, ws.root)
    assert found is not None  # plan_share checked it
    folder = found.root or create_folder(found.repo)
    ensure_gitignore(folder)
    team = team_workspace(folder, ws)  # its derived state, if any, stays out of the repository
    if os.path.lexists(folder / plan.source):
        raise ReMeError(
            f"{folder / plan.source} already exists in the team memory; edit it there (it merges like any file)"
        )
    from ..notes.store import NoteStore

    try:  # through the team's note service (its lock; no symlink followed). Not its evidence rule: the
        # node's source links are plain text in the team's copy (they would point into this workspace)
        NoteStore(team).update(plan.source, lambda _old: plan.content, evidence=False)
    except (ReMeError, OSError) as exc:
        raise ReMeError(f"cannot write {plan.dest}: {exc}; nothing was changed") from None
    if move:
        ctx.notes.delete(plan.source)
    plan.moved = move
    return plan
