"""File tools: read, write, edit, move, delete, list, stat, frontmatter_*, read_image.

Every path is workspace-relative POSIX and goes through ``Workspace`` (safe resolution, atomic
writes). After any change the index is told with ``ctx.changed``. Digest nodes are guarded by
``memory.evidence.check_digest_evidence`` so an edit can never silently drop a Sources link.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any, Iterator, Literal

from pydantic import Field

from ..errors import ConflictError, InvalidInputError, NotFoundError, PathError, ReMeError
from ..memory.evidence import check_digest_evidence
from ..notes.frontmatter import merge_frontmatter, parse_note, render_note
from ..notes.wikilinks import parse_links, rewrite_links
from ..workspace import LAYERS, Workspace
from . import Context, Params, ToolResult, tool

READ_MAX_BYTES = 256 * 1024  # one read returns at most this much text; page with start_line/end_line
READ_MAX_LINE_CHARS = 20_000  # a single longer line is cut (minified JSON, base64 blobs)
EDIT_MAX_BYTES = 8 * 1024 * 1024  # edit/frontmatter tools load the whole file
IMAGE_MAX_BYTES = 5 * 1024 * 1024
LIST_DEFAULT_LIMIT = 200
# Folders that hold derived or agent state, not memory: never written through the file tools and
# skipped by recursive listings and link rewriting.
SYSTEM_DIRS = ("metadata", "mem_session")
# Folders whose removal or renaming would break the workspace layout.
PROTECTED_DIRS = frozenset(LAYERS) | {"session", "digest", ""}
MARKDOWN_EXTS = (".md", ".markdown")


# ---- helpers --------------------------------------------------------------------------------------
def _writable(ws: Workspace, rel: str) -> str:
    """Normalise a path that a tool will change; refuse the derived/system folders."""
    norm = ws.normalize(rel)
    # casefolded: on a case-insensitive filesystem (macOS, Windows) METADATA/ *is* metadata/
    if norm.split("/", 1)[0].casefold() in SYSTEM_DIRS:
        raise PathError(f"{norm} is inside {norm.split('/', 1)[0]}/ (derived state, rebuilt automatically); refused")
    if any(part.startswith(".") for part in norm.split("/")):
        raise PathError(f"{norm}: hidden files and folders (starting with '.') are not memory; refused")
    return norm


def _existing_file(ws: Workspace, rel: str) -> tuple[str, Path]:
    norm = ws.normalize(rel)
    path = ws.resolve(norm)
    if path.is_dir():
        raise InvalidInputError(f"{norm} is a folder, not a file; use list to see its contents")
    if not path.exists():
        raise NotFoundError(f"{norm} does not exist; use list to see what is there")
    return norm, path


def _is_binary(sample: bytes) -> bool:
    """NUL bytes, or mostly undecodable bytes, mean binary; a few bad bytes are just damaged text."""
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    text = sample.decode("utf-8", errors="replace")
    # a multi-byte char cut at the sample end is not damage
    bad = text[:-1].count("\ufffd") if text.endswith("\ufffd") else text.count("\ufffd")
    return bad > max(8, len(text) // 10)


def _binary_error(norm: str) -> InvalidInputError:
    hint = "use read_image" if _image_mime(norm, b"") else "use stat to inspect it"
    return InvalidInputError(f"{norm} is a binary file, not text; {hint}")


def _load_text(ws: Workspace, rel: str, *, what: str) -> tuple[str, Path, str]:
    """(path, abs path, text) of an existing UTF-8 text file small enough to rewrite whole.

    Invalid UTF-8 is refused here: rewriting it with replacement characters would lose bytes."""
    norm, path = _existing_file(ws, rel)
    size = path.stat().st_size
    if size > EDIT_MAX_BYTES:
        raise InvalidInputError(f"{norm} is {_size(size)}; {what} works on files up to {_size(EDIT_MAX_BYTES)}")
    data = ws.read_bytes(norm)
    if _is_binary(data[:8192]):
        raise _binary_error(norm)
    try:
        return norm, path, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{norm} is not valid UTF-8 (byte {exc.start}); {what} would corrupt it — fix the encoding first"
        ) from None


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _mtime(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).isoformat(timespec="seconds")


def notify_changed(ctx: Context, *paths: str) -> str | None:
    """Tell the index; the file change already happened, so an index problem is a note, not a failure."""
    try:
        ctx.changed(*sorted(set(paths)))
    except ReMeError as exc:
        return f"note: the search index was not updated ({exc}); it will catch up on the next sync"
    return None


def _files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()) if root.is_dir() else [root]


# ---- read -----------------------------------------------------------------------------------------
class ReadParams(Params):
    path: str = Field(description="Workspace-relative path of a text file, e.g. daily/2026-06-20/notes.md")
    start_line: int | None = Field(None, ge=1, description="First line to return (1-based, inclusive)")
    end_line: int | None = Field(None, ge=1, description="Last line to return (1-based, inclusive)")


class ReadResult(ToolResult):
    path: str
    start_line: int
    end_line: int
    total_lines: int
    content: str
    truncated: bool = False
    notes: list[str] = []

    def text(self) -> str:
        lines = self.content.split("\n") if self.content else []
        width = len(str(max(self.end_line, 1)))
        out = [f"{n:>{width}}\t{line}" for n, line in zip(range(self.start_line, self.end_line + 1), lines)]
        if not out:
            out = [f"({self.path} is empty)" if self.total_lines == 0 else "(no lines in that range)"]
        return "\n".join(out + [f"[{n}]" for n in self.notes])


def _iter_lines(path: Path) -> Iterator[tuple[bytes, bool]]:
    """Lines of a file as bytes without the newline, streaming (a 50 MB file never sits in memory);
    a line longer than READ_MAX_LINE_CHARS*4 bytes is cut and flagged."""
    cap = READ_MAX_LINE_CHARS * 4
    with open(path, "rb") as fh:
        while True:
            line = fh.readline(cap)
            if not line:
                return
            cut = False
            if not line.endswith(b"\n") and len(line) >= cap:
                cut = True
                while True:  # skip the rest of the over-long line
                    more = fh.readline(1 << 20)
                    if not more or more.endswith(b"\n"):
                        break
            yield line.rstrip(b"\n").rstrip(b"\r"), cut


def _count_lines(path: Path, size: int) -> int:
    if size == 0:
        return 0
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


@tool(
    "read",
    "Read a text/Markdown memory file from the ReMe workspace, with line numbers. Use start_line/end_line "
    "(1-based, inclusive) to read part of a file, e.g. the lines a search hit or a [[path#L9-L12]] link "
    "points at. Large files are returned in pages with a hint for the next range.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
def read(ctx: Context, params: ReadParams) -> ReadResult:
    ws = ctx.workspace
    norm, path = _existing_file(ws, params.path)
    if params.start_line and params.end_line and params.end_line < params.start_line:
        raise InvalidInputError(f"end_line {params.end_line} is before start_line {params.start_line}")
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8192)
    if _is_binary(head):
        raise _binary_error(norm)
    total = _count_lines(path, size)
    start = params.start_line or 1
    if total == 0:
        if params.start_line and params.start_line > 1:
            raise InvalidInputError(f"start_line {start} is past the end of {norm} (the file is empty)")
        return ReadResult(path=norm, start_line=1, end_line=0, total_lines=0, content="")
    if start > total:
        raise InvalidInputError(f"start_line {start} is past the end of {norm} ({total} lines)")
    end = min(params.end_line or total, total)
    notes: list[str] = []
    if params.end_line and params.end_line > total:
        notes.append(f"{norm} has {total} lines; showing up to line {total}")
    out: list[str] = []
    used, bad_utf8, cut_lines, truncated = 0, False, 0, False
    last = start - 1
    for n, (raw, cut) in enumerate(_iter_lines(path), start=1):
        if n < start:
            continue
        if n > end:
            break
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line, bad_utf8 = raw.decode("utf-8", errors="replace"), True
        if cut or len(line) > READ_MAX_LINE_CHARS:
            line, cut_lines = line[:READ_MAX_LINE_CHARS] + " …[line cut]", cut_lines + 1
        used += len(line.encode("utf-8")) + 1
        if used > READ_MAX_BYTES and out:
            truncated = True
            break
        out.append(line)
        last = n
    if truncated:
        notes.append(
            f"output capped at {_size(READ_MAX_BYTES)}: showing lines {start}-{last} of {total}; "
            f"continue with start_line={last + 1} (and end_line to choose a range)"
        )
    if bad_utf8:
        notes.append(f"{norm} is not valid UTF-8; undecodable bytes are shown as \ufffd")
    if cut_lines:
        notes.append(f"{cut_lines} line(s) longer than {READ_MAX_LINE_CHARS} characters were cut")
    if norm.endswith(MARKDOWN_EXTS) and start == 1 and size <= EDIT_MAX_BYTES:
        error = parse_note(ws.read_bytes(norm).decode("utf-8", errors="replace")).error
        if error:
            notes.append(f"the frontmatter is not valid YAML ({error}); the text is shown as is")
    return ReadResult(
        path=norm, start_line=start, end_line=last, total_lines=total, content="\n".join(out),
        truncated=truncated, notes=notes,
    )


# ---- write ----------------------------------------------------------------------------------------
class WriteParams(Params):
    path: str = Field(description="Workspace-relative path of the Markdown file to create or overwrite (must end in .md)")
    content: str = Field(description="Markdown body (may start with its own --- frontmatter block, merged with the fields below)")
    name: str | None = Field(None, description="Frontmatter `name`: a short title of the note")
    description: str | None = Field(None, description="Frontmatter `description`: one-sentence summary used in lists and search")
    metadata: dict[str, Any] | None = Field(None, description="Extra frontmatter keys to set (merged; existing keys are kept unless replaced)")


class WriteResult(ToolResult):
    path: str
    created: bool
    bytes: int
    notes: list[str] = []

    def text(self) -> str:
        verb = "Created" if self.created else "Overwrote"
        return "\n".join([f"{verb} {self.path} ({self.bytes} bytes)"] + self.notes)


def _frontmatter_updates(params: WriteParams) -> dict[str, Any]:
    updates: dict[str, Any] = dict(params.metadata or {})
    if params.name is not None:
        updates["name"] = params.name
    if params.description is not None:
        updates["description"] = params.description
    return updates


@tool(
    "write",
    "Create or overwrite a Markdown memory note in the ReMe workspace (atomic). name, description and "
    "metadata are merged into the YAML frontmatter; other frontmatter keys of an existing note are kept. "
    "Use full workspace-relative [[wikilinks]] such as [[daily/2026-06-20/card.md]]. digest/ notes must "
    "keep a '## Sources' section linking daily/, resource/ or session/ files.",
    idempotent=True,
    positional=("path",),
)
def write(ctx: Context, params: WriteParams) -> WriteResult:
    ws = ctx.workspace
    norm = _writable(ws, params.path)
    if not norm.endswith(".md"):
        raise InvalidInputError(f"write creates Markdown notes only: {norm} must end in .md")
    target = ws.resolve(norm)
    if target.is_dir():
        raise InvalidInputError(f"{norm} is a folder; choose a file path ending in .md")
    content = params.content
    if "\x00" in content:
        raise InvalidInputError("content contains NUL bytes; a Markdown note must be text")
    incoming = parse_note(content) if content.startswith("---") else None
    if incoming is not None and incoming.error:
        raise InvalidInputError(f"the frontmatter at the top of content is not valid YAML ({incoming.error}); fix it")
    updates = {**(incoming.meta if incoming else {}), **_frontmatter_updates(params)}
    body = incoming.body if incoming and incoming.raw_frontmatter is not None else content
    old: str | None = None
    if target.exists():
        norm, _, old = _load_text(ws, norm, what="write")
        existing = parse_note(old)
        if existing.error:
            raise InvalidInputError(
                f"{norm} has broken frontmatter YAML ({existing.error}); fix it with edit (or delete the file) "
                "before overwriting, so its keys are not lost"
            )
        if existing.raw_frontmatter is not None:
            head = "".join(old.splitlines(keepends=True)[: existing.body_start_line - 1])
            new = merge_frontmatter(head + body, updates) if updates else head + body
        else:
            new = render_note(updates, body) if updates else body
    else:
        new = render_note(updates, body) if updates else body
    check_digest_evidence(norm, old, new, full_write=True)
    data = new.encode("utf-8")
    ws.write_bytes(norm, data)
    note = notify_changed(ctx, norm)
    return WriteResult(path=norm, created=old is None, bytes=len(data), notes=[note] if note else [])


# ---- edit -----------------------------------------------------------------------------------------
class EditParams(Params):
    path: str = Field(description="Workspace-relative path of the text file to edit")
    old_text: str = Field(description="Exact text to find (copy it from read, without the line numbers)")
    new_text: str = Field(description="Text to put in its place")
    replace_all: bool = Field(False, description="Replace every occurrence (otherwise old_text must occur exactly once)")


class EditResult(ToolResult):
    path: str
    replacements: int
    notes: list[str] = []

    def text(self) -> str:
        return "\n".join([f"Edited {self.path}: {self.replacements} replacement(s)"] + self.notes)


@tool(
    "edit",
    "Find and replace exact text in a memory file of the ReMe workspace (atomic). Fails if old_text is "
    "missing or occurs more than once, unless replace_all. On digest/ notes, an edit that would remove an "
    "existing [[wikilink]] (Sources or related nodes) is refused.",
    positional=("path",),
)
def edit(ctx: Context, params: EditParams) -> EditResult:
    ws = ctx.workspace
    norm = _writable(ws, params.path)
    if params.old_text == "":
        raise InvalidInputError("old_text is empty: give the exact text to replace")
    if "\x00" in params.new_text:
        raise InvalidInputError("new_text contains NUL bytes; the file must stay text")
    if params.old_text == params.new_text:
        raise InvalidInputError("old_text and new_text are the same; nothing to change")
    norm, _, text = _load_text(ws, norm, what="edit")
    old_s, new_s = params.old_text, params.new_text
    if old_s not in text and "\r\n" in text and "\n" in old_s:  # the file uses CRLF; read shows LF
        old_s, new_s = old_s.replace("\r\n", "\n").replace("\n", "\r\n"), new_s.replace("\r\n", "\n").replace("\n", "\r\n")
    count = text.count(old_s)
    if count == 0:
        raise InvalidInputError(f"old_text was not found in {norm}; read the file and copy the exact text")
    if count > 1 and not params.replace_all:
        lines = sorted({text.count("\n", 0, i) + 1 for i in _find_all(text, old_s)})
        raise ConflictError(
            f"old_text occurs {count} times in {norm} (lines {', '.join(map(str, lines[:10]))}); "
            "add surrounding text to make it unique, or set replace_all"
        )
    new = text.replace(old_s, new_s)
    check_digest_evidence(norm, text, new, full_write=False)
    ws.write_text(norm, new)
    note = notify_changed(ctx, norm)
    return EditResult(path=norm, replacements=count, notes=[note] if note else [])


def _find_all(text: str, sub: str) -> Iterator[int]:
    i = text.find(sub)
    while i >= 0:
        yield i
        i = text.find(sub, i + len(sub))


# ---- move -----------------------------------------------------------------------------------------
class MoveParams(Params):
    src: str = Field(description="Workspace-relative path of the file or folder to move/rename")
    dst: str = Field(description="New workspace-relative path (the full new name, not a folder to move into)")
    overwrite: bool = Field(False, description="Replace an existing file at dst")
    rewrite_links: bool = Field(True, description="Rewrite every [[src]] wikilink in the workspace to [[dst]]")


class MoveResult(ToolResult):
    src: str
    dst: str
    moved_files: int
    links_rewritten: int
    changed_files: list[str]
    notes: list[str] = []

    def text(self) -> str:
        out = [f"Moved {self.src} -> {self.dst} ({self.moved_files} file(s))"]
        if self.changed_files:
            out.append(f"Rewrote {self.links_rewritten} link(s) in {len(self.changed_files)} file(s):")
            out += [f"  {p}" for p in self.changed_files]
        else:
            out.append("No links pointed at it.")
        return "\n".join(out + self.notes)


def linking_sources(ctx: Context, targets: set[str], prefix: str | None = None) -> tuple[list[str], set[str]]:
    """Markdown files whose wikilinks point at ``targets`` (or into the folder ``prefix``), from the link
    index, synced first so edits made outside reme count; and the written targets of those links
    (short forms like ``[[光伏产业链]]`` that resolved to a target included)."""
    index = ctx.index
    index.sync()
    links = [link for t in targets for link in index.inbound_links(t)]
    if prefix:
        links += index.inbound_links(prefix, prefix=True)
    sources = sorted({link.source for link in links if link.source.endswith(MARKDOWN_EXTS)})
    return sources, {link.target for link in links}


def rewrite_links_in_files(ws: Workspace, sources: list[str], retarget: Any) -> tuple[list[str], int]:
    """Apply ``retarget`` (old target -> new target or None) to every wikilink of ``sources``.
    Decoding uses surrogateescape so a file with a few invalid bytes is rewritten without loss."""
    changed, total = [], 0
    for rel in sources:
        try:
            data = ws.read_bytes(rel)
        except ReMeError:
            continue  # deleted meanwhile
        text = data.decode("utf-8", errors="surrogateescape")
        new, n = rewrite_links(text, retarget)
        if n and new != text:
            ws.write_bytes(rel, new.encode("utf-8", errors="surrogateescape"))
            changed.append(rel)
            total += n
    return changed, total


def _check_movable(norm: str, what: str) -> None:
    if norm.casefold() in PROTECTED_DIRS:  # DAILY is daily/ on a case-insensitive filesystem
        raise PathError(f"{norm}/ is a workspace layer folder; it cannot be {what}")


@tool(
    "move",
    "Move or rename a file or folder in the ReMe workspace. By default every [[wikilink]] pointing at it "
    "(or into the folder) is rewritten across the workspace, keeping anchors, aliases, embeds and "
    "predicates; reports which files changed. Refuses to replace an existing file unless overwrite.",
    destructive=True,
    positional=("src", "dst"),
)
def move(ctx: Context, params: MoveParams) -> MoveResult:
    ws = ctx.workspace
    src, dst = _writable(ws, params.src), _writable(ws, params.dst)
    _check_movable(src, "moved")
    _check_movable(dst, "replaced")
    src_abs, dst_abs = ws.resolve(src), ws.resolve(dst)
    if not src_abs.exists() and not src_abs.is_symlink():
        raise NotFoundError(f"{src} does not exist; use list to see what is there")
    if src == dst:
        raise InvalidInputError("src and dst are the same path")
    is_dir = src_abs.is_dir()
    if is_dir and (dst + "/").startswith(src + "/"):
        raise InvalidInputError(f"cannot move folder {src} into itself ({dst})")
    if dst_abs.exists():
        if is_dir or dst_abs.is_dir():
            raise ConflictError(f"{dst} already exists; folders are never merged or replaced — choose a new path")
        if not params.overwrite:
            raise ConflictError(f"{dst} already exists; set overwrite to replace it, or choose another path")
    moved = [ws.relpath(p) for p in _files_under(src_abs)]
    # asked before the move: afterwards short forms like [[光伏产业链]] would no longer resolve to src
    sources, written = linking_sources(ctx, {src}, src if is_dir else None) if params.rewrite_links else ([], set())
    short_forms = {t for t in written if t != src and not t.startswith(src + "/")}

    def retarget(target: str) -> str | None:
        if target == src:
            return dst
        if is_dir and target.startswith(src + "/"):
            return dst + target[len(src):]
        if target in short_forms:
            return dst
        return None

    def restore(target: str) -> str | None:
        if target == dst:
            return src
        if is_dir and target.startswith(dst + "/"):
            return src + target[len(dst):]
        return None

    # Links first, rename last: a move killed in between is completed by running it again (the
    # rewritten links already name dst), while renaming first would leave links a retry cannot fix.
    changed, total = rewrite_links_in_files(ws, sources, retarget)
    try:
        dst_abs.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src_abs, dst_abs)
    except OSError as exc:
        rewrite_links_in_files(ws, changed, restore)
        raise ReMeError(f"cannot move {src} to {dst}: {exc.strerror or exc} (nothing was changed)") from None
    new_paths = [dst + p[len(src):] for p in moved]
    # a linking file may itself have moved (a note inside the moved folder, or the file linking itself)
    changed = [retarget(c) or c for c in changed]
    note = notify_changed(ctx, *moved, *new_paths, *changed)
    return MoveResult(
        src=src, dst=dst, moved_files=len(moved), links_rewritten=total, changed_files=changed,
        notes=[note] if note else [],
    )


# ---- delete ---------------------------------------------------------------------------------------
class InboundLink(ToolResult):
    source: str
    line: int
    target: str
    link: str

    def text(self) -> str:
        return f"{self.source}:{self.line}  {self.link}"


class DeleteParams(Params):
    path: str = Field(description="Workspace-relative path of the file or folder to delete")
    recursive: bool = Field(False, description="Required to delete a folder that is not empty (deletes everything inside)")


class DeleteResult(ToolResult):
    path: str
    deleted_files: list[str]
    inbound_links: list[InboundLink]

    def text(self) -> str:
        out = [f"Deleted {self.path} ({len(self.deleted_files)} file(s))"]
        if self.inbound_links:
            out.append(f"{len(self.inbound_links)} link(s) still point at it (now dangling); update or remove them:")
            out += [f"  {link.text()}" for link in self.inbound_links]
        return "\n".join(out)


def inbound_links_in(ws: Workspace, sources: list[str], targets: set[str], prefix: str | None = None) -> list[InboundLink]:
    """The wikilinks of ``sources`` that point at one of ``targets`` (or under ``prefix/``), as they
    read in the files now."""
    found = []
    for rel in sources:
        try:
            text = ws.read_bytes(rel).decode("utf-8", errors="replace")
        except ReMeError:
            continue
        for link in parse_links(text):
            t = link.target
            if t in targets or (prefix and t.startswith(prefix + "/")):
                found.append(InboundLink(source=rel, line=link.line, target=t, link=text[link.start : link.end]))
    return found


@tool(
    "delete",
    "Delete a file or folder from the ReMe workspace. Returns the [[wikilinks]] in other notes that still "
    "point at what was deleted, so they can be cleaned up. A non-empty folder needs recursive=true.",
    destructive=True,
    idempotent=False,
    positional=("path",),
)
def delete(ctx: Context, params: DeleteParams) -> DeleteResult:
    ws = ctx.workspace
    norm = _writable(ws, params.path)
    _check_movable(norm, "deleted")
    target = ws.resolve(norm)
    if not target.exists() and not target.is_symlink():
        raise NotFoundError(f"{norm} does not exist; nothing was deleted")
    is_dir = target.is_dir() and not target.is_symlink()
    files = [ws.relpath(p) for p in _files_under(target)] if is_dir else [norm]
    if is_dir and files and not params.recursive:
        raise ConflictError(f"{norm} is a folder with {len(files)} file(s); set recursive to delete it and everything inside")
    gone = set(files)
    sources, written = linking_sources(ctx, gone | {norm}, norm if is_dir else None)
    try:
        if is_dir:
            shutil.rmtree(target)
        else:
            target.unlink()
    except OSError as exc:
        raise ReMeError(f"cannot delete {norm}: {exc.strerror or exc}") from None
    inbound = inbound_links_in(ws, [s for s in sources if s not in gone], written | gone | {norm},
                               prefix=norm if is_dir else None)
    notify_changed(ctx, *files)
    return DeleteResult(path=norm, deleted_files=files, inbound_links=inbound)


# ---- list -----------------------------------------------------------------------------------------
class ListParams(Params):
    path: str = Field("", description="Workspace-relative folder to list; empty for the workspace root")
    recursive: bool = Field(False, description="Include files in sub-folders (metadata/ and mem_session/ are skipped unless listed directly)")
    sort: Literal["name", "mtime"] = Field("name", description="Order by path name, or by modification time (newest first)")
    ext: list[str] | None = Field(None, description="Only files with these extensions, e.g. ['md', 'jsonl']")
    limit: int = Field(LIST_DEFAULT_LIMIT, ge=1, le=10_000, description="Maximum number of entries")


class ListEntry(ToolResult):
    path: str
    type: Literal["file", "dir"]
    size: int
    modified: str
    name: str | None = None
    description: str | None = None


class ListResult(ToolResult):
    path: str
    entries: list[ListEntry]
    total: int

    def text(self) -> str:
        if not self.entries:
            return f"{self.path or '(workspace root)'}: no entries"
        out = []
        for e in self.entries:
            label = e.path + ("/" if e.type == "dir" else "")
            line = f"{label}  {'-' if e.type == 'dir' else _size(e.size)}  {e.modified}"
            if e.name or e.description:
                line += "  — " + ": ".join(x for x in (e.name, e.description) if x)
            out.append(line)
        if self.total > len(self.entries):
            out.append(f"[{self.total - len(self.entries)} more; raise limit or narrow path/ext]")
        return "\n".join(out)


def _summary(path: Path) -> tuple[str | None, str | None]:
    try:
        with open(path, "rb") as fh:
            head = fh.read(16 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return None, None
    note = parse_note(head)
    name, desc = note.meta.get("name"), note.meta.get("description")
    return (str(name) if name is not None else None), (" ".join(str(desc).split()) if desc is not None else None)


@tool(
    "list",
    "List files and folders of the ReMe memory workspace (daily/, digest/, resource/, session/), with size, "
    "modification time and each note's frontmatter name/description. Options: recursive, sort by name or "
    "mtime, extension filter, limit.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
def list_files(ctx: Context, params: ListParams) -> ListResult:
    ws = ctx.workspace
    norm = ws.normalize(params.path, allow_root=True)
    root = ws.resolve(norm, allow_root=True)
    if not root.exists():
        raise NotFoundError(f"{norm} does not exist; list the parent folder to see what is there")
    if not root.is_dir():
        raise InvalidInputError(f"{norm} is a file, not a folder; use stat or read")
    exts = {("." + e.lower().lstrip(".")) for e in (params.ext or []) if e.strip(". ")}
    found: list[tuple[Path, bool]] = []
    if params.recursive:
        for dirpath, dirnames, filenames in os.walk(root):
            if Path(dirpath) == ws.root:
                dirnames[:] = [d for d in dirnames if d not in SYSTEM_DIRS]
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            if not exts:
                found += [(Path(dirpath) / d, True) for d in dirnames]
            found += [(Path(dirpath) / f, False) for f in filenames if not f.startswith(".")]
    else:
        for p in root.iterdir():
            if not p.name.startswith("."):
                found.append((p, p.is_dir()))
    if exts:
        found = [(p, d) for p, d in found if not d and p.suffix.lower() in exts]
    stats = []
    for p, is_dir in found:
        try:
            st = p.stat()
        except OSError:
            continue  # dangling symlink or vanished meanwhile
        stats.append((p, is_dir, st))
    if params.sort == "mtime":
        stats.sort(key=lambda x: (-x[2].st_mtime, ws.relpath(x[0])))
    else:
        stats.sort(key=lambda x: ws.relpath(x[0]))
    entries = []
    for p, is_dir, st in stats[: params.limit]:
        name = desc = None
        if not is_dir and p.suffix.lower() in MARKDOWN_EXTS:
            name, desc = _summary(p)
        entries.append(ListEntry(
            path=ws.relpath(p), type="dir" if is_dir else "file", size=0 if is_dir else st.st_size,
            modified=_mtime(st.st_mtime), name=name, description=desc,
        ))
    return ListResult(path=norm, entries=entries, total=len(stats))


# ---- stat -----------------------------------------------------------------------------------------
class PathParams(Params):
    path: str = Field(description="Workspace-relative path of a file or folder")


class StatResult(ToolResult):
    path: str
    type: Literal["file", "dir"]
    size: int
    modified: str
    created: str
    files: int | None = None
    lines: int | None = None
    binary: bool | None = None
    valid_utf8: bool | None = None
    mime_type: str | None = None
    name: str | None = None
    description: str | None = None
    frontmatter_error: str | None = None

    def text(self) -> str:
        rows = [("path", self.path), ("type", self.type)]
        if self.type == "dir":
            rows.append(("files", self.files))
        else:
            rows += [("size", f"{self.size} bytes ({_size(self.size)})"), ("lines", self.lines),
                     ("binary", self.binary), ("valid_utf8", self.valid_utf8), ("mime_type", self.mime_type),
                     ("name", self.name), ("description", self.description),
                     ("frontmatter_error", self.frontmatter_error)]
        rows += [("modified", self.modified), ("created", self.created)]
        return "\n".join(f"{k}: {v}" for k, v in rows if v is not None)


@tool(
    "stat",
    "Show details of a file or folder in the ReMe workspace: type, size, times, line count, whether it is "
    "binary or valid UTF-8, mime type, and a note's frontmatter name/description.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
def stat(ctx: Context, params: PathParams) -> StatResult:
    ws = ctx.workspace
    norm = ws.normalize(params.path, allow_root=True)
    p = ws.resolve(norm, allow_root=True)
    if not p.exists():
        raise NotFoundError(f"{norm} does not exist; use list to see what is there")
    st = p.stat()
    base = dict(path=norm, size=st.st_size, modified=_mtime(st.st_mtime), created=_mtime(st.st_ctime))
    if p.is_dir():
        return StatResult(type="dir", files=sum(1 for x in p.rglob("*") if x.is_file()), **{**base, "size": 0})
    with open(p, "rb") as fh:
        head = fh.read(8192)
    mime = _image_mime(norm, head)
    if _is_binary(head):
        return StatResult(type="file", binary=True, mime_type=mime or "application/octet-stream", **base)
    result = StatResult(type="file", binary=False, lines=_count_lines(p, st.st_size),
                        mime_type=mime or _text_mime(norm), **base)
    if st.st_size <= EDIT_MAX_BYTES:
        data = p.read_bytes()
        try:
            text = data.decode("utf-8")
            result.valid_utf8 = True
        except UnicodeDecodeError:
            text, result.valid_utf8 = data.decode("utf-8", errors="replace"), False
        note = parse_note(text)
        result.name, result.description, result.frontmatter_error = note.name, note.description, note.error
    return result


def _text_mime(path: str) -> str:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return {"md": "text/markdown", "markdown": "text/markdown", "jsonl": "application/jsonl",
            "json": "application/json", "yaml": "application/yaml", "yml": "application/yaml",
            "html": "text/html", "csv": "text/csv"}.get(ext, "text/plain")


# ---- frontmatter ----------------------------------------------------------------------------------
class FrontmatterResult(ToolResult):
    path: str
    meta: dict[str, Any]
    name: str | None = None
    description: str | None = None
    error: str | None = None
    raw: str | None = None

    def text(self) -> str:
        if self.error:
            return f"{self.path}: the frontmatter is not valid YAML ({self.error}); raw text:\n{self.raw or ''}"
        if not self.meta:
            return f"{self.path}: no frontmatter"
        import yaml

        return yaml.safe_dump(self.meta, allow_unicode=True, sort_keys=False, default_flow_style=False).rstrip()


def _frontmatter_result(norm: str, text: str) -> FrontmatterResult:
    note = parse_note(text)
    return FrontmatterResult(path=norm, meta=_jsonable(note.meta), name=note.name, description=note.description,
                             error=note.error, raw=note.raw_frontmatter if note.error else None)


def _jsonable(value: Any) -> Any:
    """YAML may hold dates and other non-JSON scalars; show them as strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


@tool(
    "frontmatter_read",
    "Read the YAML frontmatter (name, description and other metadata) of a note in the ReMe workspace. "
    "A broken YAML block is reported with its raw text instead of failing.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
def frontmatter_read(ctx: Context, params: PathParams) -> FrontmatterResult:
    norm, path = _existing_file(ctx.workspace, params.path)
    with open(path, "rb") as fh:
        head = fh.read(EDIT_MAX_BYTES)
    if _is_binary(head[:8192]):
        raise _binary_error(norm)
    return _frontmatter_result(norm, head.decode("utf-8", errors="replace"))


class FrontmatterUpdateParams(Params):
    path: str = Field(description="Workspace-relative path of the note")
    updates: dict[str, Any] = Field(description="Frontmatter keys to set (merged: other keys keep their text and order)")


class FrontmatterDeleteParams(Params):
    path: str = Field(description="Workspace-relative path of the note")
    keys: list[str] = Field(description="Frontmatter keys to remove")


def _change_frontmatter(ctx: Context, path: str, updates: dict[str, Any], delete: list[str]) -> FrontmatterResult:
    ws = ctx.workspace
    norm = _writable(ws, path)
    norm, _, text = _load_text(ws, norm, what="frontmatter changes")
    new = merge_frontmatter(text, updates, delete)  # InvalidInputError on broken YAML: nothing written
    check_digest_evidence(norm, text, new, full_write=False)
    if new != text:
        ws.write_text(norm, new)
        notify_changed(ctx, norm)
    return _frontmatter_result(norm, new)


@tool(
    "frontmatter_update",
    "Set frontmatter keys (e.g. description, tags, status) of a note in the ReMe workspace, merging with the "
    "existing YAML: untouched keys keep their exact text and order. Refused when the YAML is broken.",
    idempotent=True,
    positional=("path",),
)
def frontmatter_update(ctx: Context, params: FrontmatterUpdateParams) -> FrontmatterResult:
    if not params.updates:
        raise InvalidInputError("updates is empty: give at least one key to set")
    return _change_frontmatter(ctx, params.path, params.updates, [])


@tool(
    "frontmatter_delete",
    "Remove frontmatter keys from a note in the ReMe workspace; other keys keep their exact text and order.",
    destructive=True,
    idempotent=True,
    positional=("path",),
)
def frontmatter_delete(ctx: Context, params: FrontmatterDeleteParams) -> FrontmatterResult:
    keys = [k for k in params.keys if k.strip()]
    if not keys:
        raise InvalidInputError("keys is empty: name at least one frontmatter key to remove")
    return _change_frontmatter(ctx, params.path, {}, keys)


# ---- read_image -----------------------------------------------------------------------------------
class ReadImageParams(Params):
    path: str = Field(description="Workspace-relative path of an image (PNG, JPEG, GIF or WebP), e.g. resource/2026-06-20/chart.png")
    max_bytes: int = Field(IMAGE_MAX_BYTES, ge=1, le=50 * 1024 * 1024, description="Refuse images larger than this")


class ImageResult(ToolResult):
    path: str
    mime_type: str
    size: int
    data: str  # base64

    def text(self) -> str:
        return f"{self.path}: {self.mime_type}, {_size(self.size)}, base64:\n{self.data}"


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _image_mime(path: str, head: bytes) -> str | None:
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if not head:  # no bytes to sniff: go by the extension
        ext = path.rsplit(".", 1)[-1].lower()
        return {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
                "webp": "image/webp"}.get(ext)
    return None


@tool(
    "read_image",
    "Read an image file (PNG, JPEG, GIF, WebP) from the ReMe workspace as base64 with its mime type, e.g. a "
    "chart or screenshot saved under resource/.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
def read_image(ctx: Context, params: ReadImageParams) -> ImageResult:
    norm, path = _existing_file(ctx.workspace, params.path)
    size = path.stat().st_size
    if size > params.max_bytes:
        raise InvalidInputError(f"{norm} is {_size(size)}, over the {_size(params.max_bytes)} image limit")
    data = ctx.workspace.read_bytes(norm)
    mime = _image_mime(norm, data[:16])
    if mime is None:
        raise InvalidInputError(f"{norm} is not a PNG, JPEG, GIF or WebP image; use read for text files")
    return ImageResult(path=norm, mime_type=mime, size=size, data=base64.b64encode(data).decode("ascii"))
