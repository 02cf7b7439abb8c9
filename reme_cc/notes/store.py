"""The one note service: every change of a note in the workspace goes through a ``NoteStore``.

It owns, for each change, in this order:

1. the notes lock — one workspace-wide lock (``Workspace.notes_lock``) for every writer: the file
   tools, the recorder, the dream, the resource sync and the day index pages;
2. the path policy — notes live only in the content layers ``daily/``, ``digest/`` and ``resource/``;
   ``session/`` is evidence and read-only; ``metadata/``, ``config.json`` and anything else at the
   root are never reachable (a model driven by injected text must not rewrite the settings);
3. the evidence rule for ``digest/`` (``evidence.check_digest_evidence``), for every way in;
4. the merge: a change is a function of the file's current text, applied under the lock, so
   frontmatter merges (``frontmatter.replace_body`` / ``merge_frontmatter``) work on what is there;
5. the atomic write (temp file + rename, ``Workspace.write_bytes``) — after checking that nobody
   changed the file by hand since it was read (then the change is computed again on the new text);
6. the observers: ``before(path)`` ahead of each change (the dream's undo record keeps the previous
   content) and ``after(paths)`` once it is on disk (the index update).

This layer knows nothing of indexes: the layer above wires ``after`` to ``Index.update_paths`` and
gives ``backlinks`` (which notes link to a path) from the link index. Without them the store still
works: no observers, and ``backlinks`` scans the Markdown files.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator

from ..base.errors import ConflictError, InvalidInputError, NotFoundError, PathError, ReMeError
from ..base import nofollow
from ..base.workspace import DIGEST_BUCKETS, Workspace, real_path
from .evidence import check_digest_evidence
from .formats import NOTE_EXTS
from .frontmatter import merge_frontmatter, parse_note, replace_body
from .text import looks_binary
from .wikilinks import parse_links, rewrite_links

CONTENT_LAYERS = ("daily", "digest", "resource")
READABLE_LAYERS = CONTENT_LAYERS + ("session",)  # session/: the conversations, evidence: read, never changed
# folders that make up the layout: never moved, renamed or deleted through the store
FIXED_FOLDERS = frozenset(CONTENT_LAYERS) | {f"digest/{b}" for b in DIGEST_BUCKETS}
MARKDOWN_EXTS = NOTE_EXTS  # the files a change of links or the evidence rule looks at
EDIT_MAX_BYTES = 8 * 1024 * 1024  # a read-modify-write loads the whole file
_RETRIES = 5  # a file changed by hand while we computed a change: compute again this often

# (targets, folder prefix or None) -> (Markdown files linking to them, the link targets as written)
Backlinks = Callable[[set[str], "str | None"], tuple[list[str], set[str]]]
Change = Callable[["str | None"], "str | None"]  # current text (None: no file) -> new text (None: no change)


@dataclass
class Written:
    path: str
    created: bool
    bytes: int
    changed: bool = True
    notes: list[str] = field(default_factory=list)  # e.g. the index could not be updated


@dataclass
class Moved:
    src: str
    dst: str
    moved_files: int
    links_rewritten: int
    changed_files: list[str]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Backlink:
    source: str
    line: int
    target: str
    link: str  # the link as written, e.g. "[[digest/wiki/a.md|A]]"


@dataclass
class Deleted:
    path: str
    deleted_files: list[str]
    dangling: list[Backlink]  # links elsewhere that still point at what was deleted
    notes: list[str] = field(default_factory=list)


def size_text(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{int(n)} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


class NoteStore:
    """Every change of a note in ``ws``. One store per Context; all stores of a workspace share its
    notes lock (threads and processes alike)."""

    def __init__(self, ws: Workspace, *, backlinks: Backlinks | None = None):
        self.ws = ws
        self._backlinks = backlinks
        self._before: list[Callable[[str], None]] = []
        self._after: list[Callable[[list[str]], None]] = []

    def observe(
        self, *, before: Callable[[str], None] | None = None, after: Callable[[list[str]], None] | None = None
    ) -> None:
        if before is not None:
            self._before.append(before)
        if after is not None:
            self._after.append(after)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The notes lock, for a caller that makes several changes as one (re-entrant)."""
        return self.ws.notes_lock()

    # ---- path policy ------------------------------------------------------------------------------
    def content_path(self, rel: str) -> str:
        """The canonical form of a path a change may touch, or PathError saying why not."""
        norm = self.ws.normalize(rel, allow_root=True)
        # the path as written and the file it really is (a symlink inside the workspace, e.g. daily/x
        # -> .., must not lead a change to config.json or session/; the change itself then never
        # follows a symlink: nofollow)
        real = real_path(self.ws.root / norm) if norm else str(self.ws.root)
        for path in (norm, self.ws.relpath(real) if real != str(self.ws.root) else ""):
            _policy(path, CONTENT_LAYERS, norm)
        return norm

    def readable_path(self, rel: str, *, allow_root: bool = False) -> str:
        """The canonical form of a path a tool may read (list, stat, read, frontmatter_read …): the
        layers a change may touch and session/ (the root itself when ``allow_root``: its listing shows
        only those); config.json, metadata/ and other root files never. Readers open no symlink at
        all (Workspace.open_file), so the path as written is the file."""
        norm = self.ws.normalize(rel, allow_root=allow_root)
        if norm:
            _policy(norm, READABLE_LAYERS, norm)
        return norm

    def _fixed(self, norm: str, what: str) -> None:
        if norm in FIXED_FOLDERS:
            raise PathError(f"{norm}/ is a workspace layer folder; it cannot be {what}")

    def _current(self, norm: str) -> bytes | None:
        """The file's bytes now (None: no file). A change rewrites the whole file, so it is loaded
        whole: larger files are refused before they are read. Opened by the readers' rule
        (Workspace.open_file): a symlink, a pipe or a hard-linked file is refused, never read."""
        try:
            _norm, fh = self.ws.open_file(norm)
        except NotFoundError:
            return None
        except InvalidInputError:
            raise InvalidInputError(f"{norm} is a folder; choose a file path") from None
        with fh:
            try:
                size = os.fstat(fh.fileno()).st_size
                if size > EDIT_MAX_BYTES:
                    raise InvalidInputError(
                        f"{norm} is {size_text(size)}; changes work on files up to {size_text(EDIT_MAX_BYTES)}"
                    )
                return fh.read()
            except OSError as exc:
                raise ReMeError(f"cannot read {norm}: {exc.strerror or exc}") from None

    # ---- the one write path -----------------------------------------------------------------------
    def update(self, rel: str, change: Change, *, full_write: bool = False, evidence: bool = True) -> Written:
        """Apply ``change`` (current text or None -> new text, None for "no change") to one note, under
        the notes lock. ``full_write`` asks the evidence rule for a Sources section (a whole new
        text rather than an edit); ``evidence=False`` only for link rewriting (a retargeted link is
        not a dropped one) and for ``share`` (the team's copy cites no sources in this workspace)."""
        norm = self.content_path(rel)
        with self.lock():
            for _ in range(_RETRIES):
                old = self._current(norm)
                old_text = None if old is None else old.decode("utf-8", errors="surrogateescape")
                new_text = change(old_text)
                if new_text is None or new_text == old_text:
                    return Written(norm, False, len(old or b""), changed=False)
                if evidence:
                    check_digest_evidence(norm, old_text, new_text, full_write=full_write)
                for hook in self._before:
                    hook(norm)
                if self._current(norm) != old:
                    continue  # changed by hand meanwhile: compute the change again on what is there now
                data = new_text.encode("utf-8", errors="surrogateescape")
                self.ws.write_bytes(norm, data)
                return Written(norm, old is None, len(data), notes=self._changed(norm))
        raise ConflictError(f"{norm} kept changing while reme tried to update it; retry when it is quiet")

    def put(self, rel: str, text: str, *, full_write: bool = True) -> Written:
        """Replace a note's whole text (pipelines that generate a card or page)."""
        return self.update(rel, lambda _old: text, full_write=full_write)

    def write_note(self, rel: str, content: str, updates: dict[str, object]) -> Written:
        """The ``write`` operation: a Markdown note whose frontmatter is ``content``'s own block merged
        with ``updates``; an existing note keeps its other keys verbatim (merged on offsets)."""
        norm = self.content_path(rel)
        if not norm.endswith(".md"):
            raise InvalidInputError(f"write creates Markdown notes only: {norm} must end in .md")
        if "\x00" in content:
            raise InvalidInputError("content contains NUL bytes; a Markdown note must be text")
        incoming = parse_note(content) if content.startswith("---") else None
        if incoming is not None and incoming.error:
            raise InvalidInputError(
                f"the frontmatter at the top of content is not valid YAML ({incoming.error}); fix it"
            )
        meta = {**(incoming.meta if incoming else {}), **updates}
        body = incoming.body if incoming and incoming.raw_frontmatter is not None else content

        def change(old: str | None) -> str:
            if old is None:
                return merge_frontmatter(body, meta)
            _checked(norm, old, "write")
            existing = parse_note(old)
            if existing.error:
                raise InvalidInputError(
                    f"{norm} has broken frontmatter YAML ({existing.error}); fix it with edit (or delete the file) "
                    "before overwriting, so its keys are not lost"
                )
            return replace_body(old, body, meta)

        written = self.update(norm, change, full_write=True)
        written.changed = True  # an unchanged overwrite is still a successful write
        return written

    def replace_text(self, rel: str, old_text: str, new_text: str, *, replace_all: bool = False) -> tuple[Written, int]:
        """The ``edit`` operation: exact find and replace. Returns (result, replacements)."""
        if old_text == "":
            raise InvalidInputError("old_text is empty: give the exact text to replace")
        if "\x00" in new_text:
            raise InvalidInputError("new_text contains NUL bytes; the file must stay text")
        if old_text == new_text:
            raise InvalidInputError("old_text and new_text are the same; nothing to change")
        norm = self.content_path(rel)
        count = 0

        def change(text: str | None) -> str:
            nonlocal count
            if text is None:
                raise NotFoundError(f"{norm} does not exist; use list to see what is there")
            _checked(norm, text, "edit")
            old_s, new_s = old_text, new_text
            if old_s not in text and "\r\n" in text and "\n" in old_s:  # the file uses CRLF; read shows LF
                old_s, new_s = _crlf(old_s), _crlf(new_s)
            count = text.count(old_s)
            if count == 0:
                raise InvalidInputError(f"old_text was not found in {norm}; read the file and copy the exact text")
            if count > 1 and not replace_all:
                lines = sorted({text.count("\n", 0, i) + 1 for i in _find_all(text, old_s)})
                raise ConflictError(
                    f"old_text occurs {count} times in {norm} (lines {', '.join(map(str, lines[:10]))}); "
                    "add surrounding text to make it unique, or set replace_all"
                )
            return text.replace(old_s, new_s)

        return self.update(norm, change), count

    def update_frontmatter(self, rel: str, updates: dict[str, object], delete: list[str] = ()) -> tuple[Written, str]:
        """Set/remove frontmatter keys; other keys keep their text and order. Returns (result, new text)."""
        norm = self.content_path(rel)
        result = ""

        def change(text: str | None) -> str:
            nonlocal result
            if text is None:
                raise NotFoundError(f"{norm} does not exist; use list to see what is there")
            _checked(norm, text, "frontmatter changes")
            result = merge_frontmatter(text, updates, delete)  # InvalidInputError on broken YAML
            return result

        return self.update(norm, change), result

    def restore(self, rel: str, data: bytes | None) -> None:
        """Put back content recorded earlier (dream undo): ``data`` None removes the file. Not checked
        by the evidence rule: it returns to a state that was on disk before."""
        norm = self.content_path(rel)
        with self.lock():
            for hook in self._before:
                hook(norm)
            if data is None:
                with contextlib.suppress(NotFoundError, FileNotFoundError):  # by folder descriptors
                    nofollow.remove(self.ws.root, norm)
            else:
                self.ws.write_bytes(norm, data)
            self._changed(norm)

    # ---- move and delete --------------------------------------------------------------------------
    def move(self, src: str, dst: str, *, overwrite: bool = False, rewrite: bool = True) -> Moved:
        """Move or rename a file or folder; every wikilink to it (or into it) is rewritten first, and
        what lands in ``digest/`` must pass the evidence rule like a ``write``."""
        src, dst = self.content_path(src), self.content_path(dst)
        self._fixed(src, "moved")
        self._fixed(dst, "replaced")
        if src == dst:
            raise InvalidInputError("src and dst are the same path")
        with self.lock():
            src_abs, dst_abs = self.ws.resolve(src), self.ws.resolve(dst)
            if not src_abs.exists() and not src_abs.is_symlink():
                raise NotFoundError(f"{src} does not exist; use list to see what is there")
            is_dir = src_abs.is_dir()
            if is_dir and (dst + "/").startswith(src + "/"):
                raise InvalidInputError(f"cannot move folder {src} into itself ({dst})")
            if dst_abs.exists():
                if is_dir or dst_abs.is_dir():
                    raise ConflictError(
                        f"{dst} already exists; folders are never merged or replaced — choose a new path"
                    )
                if not overwrite:
                    raise ConflictError(f"{dst} already exists; set overwrite to replace it, or choose another path")
            moved = files_under(self.ws, src)
            new_paths = [dst + p[len(src) :] for p in moved]
            for old, new in zip(moved, new_paths):  # a way into digest/, like a write
                if new.startswith("digest/") and not old.startswith("digest/") and old.endswith(MARKDOWN_EXTS):
                    text = self._current(old)
                    check_digest_evidence(new, None, (text or b"").decode("utf-8", errors="replace"), full_write=True)
            # asked before the move: afterwards short forms like [[光伏产业链]] would no longer resolve to src
            sources, written = self.backlinks({src}, src if is_dir else None) if rewrite else ([], set())
            short_forms = {t for t in written if t != src and not t.startswith(src + "/")}

            def retarget(target: str) -> str | None:
                if target == src or target in short_forms:
                    return dst
                return dst + target[len(src) :] if is_dir and target.startswith(src + "/") else None

            def restore(target: str) -> str | None:
                if target == dst:
                    return src
                return src + target[len(dst) :] if is_dir and target.startswith(dst + "/") else None

            for hook in self._before:
                for p in moved + new_paths:
                    hook(p)
            # Links first, rename last: a move killed in between is completed by running it again (the
            # rewritten links already name dst), while renaming first would leave links a retry cannot fix.
            changed, total = self._rewrite_links(sources, retarget)
            try:  # by folder descriptors: a folder swapped for a symlink since the checks leads nowhere else
                nofollow.rename(self.ws.root, src, dst)
            except (OSError, ReMeError) as exc:
                self._rewrite_links(changed, restore)
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise ReMeError(f"cannot move {src} to {dst}: {why} (nothing was changed)") from None
            # a linking file may itself have moved (a note inside the moved folder, or the file linking itself)
            changed = [retarget(c) or c for c in changed]
            notes = self._changed(*moved, *new_paths, *changed)
        return Moved(src, dst, len(moved), total, changed, notes)

    def delete(self, rel: str, *, recursive: bool = False) -> Deleted:
        norm = self.content_path(rel)
        self._fixed(norm, "deleted")
        with self.lock():
            target = self.ws.resolve(norm)
            if not target.exists() and not target.is_symlink():
                raise NotFoundError(f"{norm} does not exist; nothing was deleted")
            is_dir = target.is_dir() and not target.is_symlink()
            files = files_under(self.ws, norm) if is_dir else [norm]
            if is_dir and files and not recursive:
                raise ConflictError(
                    f"{norm} is a folder with {len(files)} file(s); set recursive to delete it and everything inside"
                )
            gone = set(files)
            prefix = norm if is_dir else None
            sources, written = self.backlinks(gone | {norm}, prefix)
            for hook in self._before:
                for p in files:
                    hook(p)
            try:  # by folder descriptors (nofollow): a folder swapped for a symlink meanwhile is refused
                nofollow.remove(self.ws.root, norm)
            except OSError as exc:
                raise ReMeError(f"cannot delete {norm}: {exc.strerror or exc}") from None
            dangling = self.links_to([s for s in sources if s not in gone], written | gone | {norm}, prefix)
            notes = self._changed(*files)
        return Deleted(norm, files, dangling, notes)

    # ---- links ------------------------------------------------------------------------------------
    def backlinks(self, targets: set[str], prefix: str | None = None) -> tuple[list[str], set[str]]:
        if self._backlinks is not None:
            return self._backlinks(targets, prefix)
        sources: set[str] = set()
        written: set[str] = set()
        for rel in self._markdown_files():
            for link in self._links(rel):
                if link.target in targets or (prefix and link.target.startswith(prefix + "/")):
                    sources.add(rel)
                    written.add(link.target)
        return sorted(sources), written

    def links_to(self, sources: list[str], targets: set[str], prefix: str | None = None) -> list[Backlink]:
        """The wikilinks of ``sources`` pointing at one of ``targets`` (or under ``prefix/``), as they
        read in the files now."""
        found = []
        for rel in sources:
            try:
                text = self.ws.read_bytes(rel).decode("utf-8", errors="replace")
            except ReMeError:
                continue
            for link in parse_links(text):
                t = link.target
                if t in targets or (prefix and t.startswith(prefix + "/")):
                    found.append(Backlink(rel, link.line, t, text[link.start : link.end]))
        return found

    def _rewrite_links(self, sources: list[str], retarget: Callable[[str], str | None]) -> tuple[list[str], int]:
        changed, total = [], 0
        for rel in sources:
            n = 0

            def change(text: str | None) -> str | None:
                nonlocal n
                if text is None:
                    return None  # deleted meanwhile
                new, n = rewrite_links(text, retarget)
                return new if n else None

            try:
                written = self.update(rel, change, evidence=False)
            except PathError:
                continue  # a link from outside the content layers (e.g. session/) is evidence: left alone
            if written.changed:
                changed.append(written.path)
                total += n
        return changed, total

    def _markdown_files(self) -> Iterator[str]:
        for layer in CONTENT_LAYERS:
            try:
                entries = nofollow.walk(self.ws.root, layer)
            except (OSError, ReMeError):
                continue  # a layer linked elsewhere is not used
            for rel, info in entries:
                if rel.lower().endswith(MARKDOWN_EXTS) and stat.S_ISREG(info.st_mode):
                    yield rel

    def _links(self, rel: str) -> list:
        try:
            return parse_links(self.ws.read_bytes(rel).decode("utf-8", errors="replace"))
        except ReMeError:
            return []

    # ---- observers --------------------------------------------------------------------------------
    def _changed(self, *paths: str) -> list[str]:
        """Tell the observers; the change is already on disk, so a failing observer (the index) is a
        note for the caller, not a failure."""
        unique = sorted(set(paths))
        notes = []
        for hook in self._after:
            try:
                hook(unique)
            except ReMeError as exc:
                notes.append(f"note: the search index was not updated ({exc}); it will catch up on the next sync")
        return notes


def _policy(path: str, layers: tuple[str, ...], asked: str) -> None:
    """PathError unless ``path`` lies in one of ``layers`` and has no hidden part (``asked`` is the path
    as given, when ``path`` is where a symlink leads)."""
    top = path.split("/", 1)[0]
    if top not in layers:
        raise PathError(
            _refusal(path, top, layers)
            if path == asked
            else f"{asked} leads to {path or 'the workspace root'} through a symlink; " + _refusal(path, top, layers)
        )
    if any(part.startswith(".") for part in path.split("/")):
        raise PathError(f"{asked}: hidden files and folders (starting with '.') are not memory; refused")


def _refusal(norm: str, top: str, layers: tuple[str, ...] = CONTENT_LAYERS) -> str:
    if not norm:
        return "the workspace root is not a note; give a path inside daily/, digest/ or resource/"
    if top == "session" and top not in layers:
        return (
            f"{norm} is in session/, the original conversations (evidence): read-only to every tool and agent; refused"
        )
    if top.casefold() == "metadata":
        return f"{norm} is inside metadata/ (derived state, rebuilt automatically); refused"
    if top.casefold() in layers:
        return f"{norm}: write the layer in lower case ({top.casefold()}/…); refused"
    if layers != CONTENT_LAYERS:
        return (
            f"{norm} is outside the memory layers: tools read only daily/, digest/, resource/ and session/ "
            "(config.json, metadata/ and other workspace files are never reachable through a tool); refused"
        )
    return (
        f"{norm} is outside the memory layers: notes live only in daily/, digest/ and resource/ "
        "(config.json and other workspace files are never changed by tools); refused"
    )


def _strict_text(norm: str, data: bytes, what: str) -> str:
    if looks_binary(data[:8192]):
        raise InvalidInputError(f"{norm} is a binary file, not text; {what} works on text files")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{norm} is not valid UTF-8 (byte {exc.start}); {what} would corrupt it — fix the encoding first"
        ) from None


def _checked(norm: str, text: str, what: str) -> None:
    """Refuse a rewrite of a binary or non-UTF-8 file (``text`` was decoded with surrogateescape, so
    invalid bytes show up as lone surrogates)."""
    _strict_text(norm, text.encode("utf-8", errors="surrogateescape"), what)


def _crlf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\n", "\r\n")


def _find_all(text: str, sub: str) -> Iterator[int]:
    i = text.find(sub)
    while i >= 0:
        yield i
        i = text.find(sub, i + len(sub))


def files_under(ws: Workspace, rel: str) -> list[str]:
    """The files (and symlinks, never followed) under the folder ``rel``, or [rel] for a file."""
    info = nofollow.lstat(ws.root, rel)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return [rel]
    try:
        return sorted(p for p, st in nofollow.walk(ws.root, rel) if not stat.S_ISDIR(st.st_mode))
    except (OSError, ReMeError):
        return []  # gone or swapped meanwhile: the change that follows is refused
