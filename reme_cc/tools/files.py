"""File tools: read, write, edit, move, delete, list, stat, frontmatter_*, read_image.

Thin adapters: reading is done here; every change (write, edit, move, delete, frontmatter_update/delete)
is one call of the note service (``ctx.notes``, notes/store.py), which owns the notes lock, the path
policy, the evidence rule, merges, atomic writes and the index update.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import re
import stat as stat_mod
from pathlib import Path
from typing import Any, BinaryIO, Literal
from collections.abc import Iterator

from pydantic import Field

from ..base import nofollow
from ..base.errors import InvalidInputError, NotFoundError, PathError, ReMeError
from ..notes.chunker import split_lines
from ..notes.documents import MAX_DOCUMENT_BYTES, is_document, page_lines, text_view
from ..notes.formats import PAGED_EXTS
from ..notes.frontmatter import parse_note
from ..notes.redact import redact, redact_counts
from ..notes.store import EDIT_MAX_BYTES, MARKDOWN_EXTS, READABLE_LAYERS
from ..notes.store import size_text as _size
from ..notes.text import looks_binary
from . import Context, Params, ToolResult, tool
from .recall_scope import team_readable

READ_MAX_BYTES = 256 * 1024  # one read returns at most this much text; page with start_line/end_line
READ_MAX_LINE_CHARS = 20_000  # a single longer line is cut (minified JSON, base64 blobs)
IMAGE_MAX_BYTES = 5 * 1024 * 1024
LIST_DEFAULT_LIMIT = 200


# ---- helpers --------------------------------------------------------------------------------------
# Every tool here opens a file by one rule (Workspace.open_file: never through a symlink, never a pipe,
# device or hard-linked file) at a path the read policy allows (NoteStore.readable_path: the memory
# layers and session/; config.json, metadata/ and other root files never), and what it returns of a
# file's text is redacted like everything else that reaches the model.
def _readable(ctx: Context, rel: str) -> tuple[str, BinaryIO]:
    """(canonical path, the file opened for reading) of a file a tool may show."""
    return ctx.workspace.open_file(ctx.notes.readable_path(rel))


def _entry(ctx: Context, rel: str) -> tuple[str, os.stat_result]:
    """(canonical path, its own stat) of a file or folder a tool may look at (the root included);
    a symlink or special file is refused, never followed."""
    norm = ctx.notes.readable_path(rel, allow_root=True)
    info = nofollow.lstat(ctx.workspace.root, norm)
    if info is None:
        os.close(nofollow.open_dir(ctx.workspace.root, norm.rpartition("/")[0]))  # a symlink on the way: says so
        raise NotFoundError(f"{norm} does not exist; use list to see what is there")
    why = nofollow.kind(info.st_mode)
    if why:
        raise PathError(f"{norm} is {why}; refused")
    return norm, info


def _redacted(value: Any) -> Any:
    """``value`` (text, or a YAML/JSON structure) with secrets hidden."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def _binary_error(norm: str) -> InvalidInputError:
    hint = "use read_image" if _image_mime(norm, b"") else "use stat to inspect it"
    return InvalidInputError(f"{norm} is a binary file, not text; {hint}")


def _mtime(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).isoformat(timespec="seconds")


# ---- read -----------------------------------------------------------------------------------------
class ReadParams(Params):
    path: str = Field(
        description="Workspace-relative path of a text file, e.g. daily/2026-06-20/notes.md (a team memory hit: .reme/… as shown)"
    )
    start_line: int | None = Field(None, ge=1, description="First line to return (1-based, inclusive)")
    end_line: int | None = Field(None, ge=1, description="Last line to return (1-based, inclusive)")
    pages: str | None = Field(None, description='PDF only: the pages to return, e.g. "12" or "3-5" (instead of lines)')


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


def _iter_lines(fh: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """Lines of an open file as bytes without the newline, streaming (a 50 MB file never sits in
    memory); a line longer than READ_MAX_LINE_CHARS*4 bytes is cut and flagged."""
    cap = READ_MAX_LINE_CHARS * 4
    fh.seek(0)
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


def _count_lines(fh: BinaryIO, size: int) -> int:
    if size == 0:
        return 0
    count, last = 0, b"\n"
    fh.seek(0)
    while chunk := fh.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


@tool(
    "read",
    "Read a text/Markdown memory file from the ReMe workspace, with line numbers. Use start_line/end_line "
    "(1-based, inclusive) to read part of a file, e.g. the lines a search hit or a [[path#L9-L12]] link "
    "points at. Large files are returned in pages with a hint for the next range. A PDF or Word .docx is "
    'read as its extracted text (the lines search hits point at); `pages` picks PDF pages, e.g. "12".',
    read_only=True,
    idempotent=True,
    positional=("path",),
)
@team_readable
def read(ctx: Context, params: ReadParams) -> ReadResult:
    norm, fh = _readable(ctx, params.path)
    with fh:  # one open file for every pass: nothing can be swapped in between
        if params.start_line and params.end_line and params.end_line < params.start_line:
            raise InvalidInputError(f"end_line {params.end_line} is before start_line {params.start_line}")
        size = os.fstat(fh.fileno()).st_size
        if is_document(norm):
            return _read_document(ctx, norm, size, params)
        if params.pages:
            raise InvalidInputError(f"pages applies to PDF files; {norm} is read by start_line/end_line")
        head = fh.read(8192)
        if looks_binary(head):
            raise _binary_error(norm)
        result = _read_lines(norm, _iter_lines(fh), _count_lines(fh, size), params.start_line, params.end_line)
        if norm.endswith(MARKDOWN_EXTS) and result.start_line == 1 and size <= EDIT_MAX_BYTES:
            fh.seek(0)
            error = parse_note(fh.read().decode("utf-8", errors="replace")).error
            if error:
                result.notes.append(f"the frontmatter is not valid YAML ({error}); the text is shown as is")
    content, counts = redact_counts(result.content, keep_lines=True)  # line numbers stay true
    if counts:
        result.content = content
        result.notes.append(f"{sum(counts.values())} secret(s) redacted ({', '.join(sorted(counts))})")
    return result


def _read_document(ctx: Context, norm: str, size: int, params: ReadParams) -> ReadResult:
    """A PDF or .docx is read as its text view (the one search indexes, so hit lines match)."""
    if size > MAX_DOCUMENT_BYTES:
        raise InvalidInputError(
            f"{norm} is {_size(size)}, over the {_size(MAX_DOCUMENT_BYTES)} document limit; it is listed, not extracted"
        )
    view = text_view(ctx.workspace.metadata, norm, ctx.workspace.read_bytes(norm))
    if view.error:
        raise InvalidInputError(f"{norm} has no readable text: {view.error}")
    lines = split_lines(view.text.rstrip("\n"))
    start, end = params.start_line, params.end_line
    if params.pages:
        if not norm.lower().endswith(PAGED_EXTS):
            raise InvalidInputError(f"pages applies to PDF files; {norm} is read by start_line/end_line")
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", params.pages)
        if not m:
            raise InvalidInputError(f'pages must be one page or a range, e.g. "12" or "3-5", not {params.pages!r}')
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        at = page_lines(view.text)
        if first < 1 or last < first or first not in at:
            raise InvalidInputError(f"{norm} has pages 1-{view.pages}; asked for {params.pages}")
        start = at[first]
        end = at[last + 1] - 1 if last + 1 in at else len(lines)
    result = _read_lines(norm, ((line.encode("utf-8"), False) for line in lines), len(lines), start, end)
    result.notes.insert(
        0, f"text extracted from {norm}" + (f" ({view.pages} pages)" if view.pages else "") + "; secrets redacted"
    )
    return result


def _read_lines(
    norm: str, source: Iterator[tuple[bytes, bool]], total: int, start_line: int | None, end_line: int | None
) -> ReadResult:
    start = start_line or 1
    if total == 0:
        if start_line and start_line > 1:
            raise InvalidInputError(f"start_line {start} is past the end of {norm} (the file is empty)")
        return ReadResult(path=norm, start_line=1, end_line=0, total_lines=0, content="")
    if start > total:
        raise InvalidInputError(f"start_line {start} is past the end of {norm} ({total} lines)")
    end = min(end_line or total, total)
    notes: list[str] = []
    if end_line and end_line > total:
        notes.append(f"{norm} has {total} lines; showing up to line {total}")
    out: list[str] = []
    used, bad_utf8, cut_lines, truncated = 0, False, 0, False
    last = start - 1
    for n, (raw, cut) in enumerate(source, start=1):
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
    return ReadResult(
        path=norm,
        start_line=start,
        end_line=last,
        total_lines=total,
        content="\n".join(out),
        truncated=truncated,
        notes=notes,
    )


# ---- write ----------------------------------------------------------------------------------------
class WriteParams(Params):
    path: str = Field(
        description="Workspace-relative path of the Markdown file to create or overwrite (must end in .md)"
    )
    content: str = Field(
        description="Markdown body (may start with its own --- frontmatter block, merged with the fields below)"
    )
    name: str | None = Field(None, description="Frontmatter `name`: a short title of the note")
    description: str | None = Field(
        None, description="Frontmatter `description`: one-sentence summary used in lists and search"
    )
    metadata: dict[str, Any] | None = Field(
        None, description="Extra frontmatter keys to set (merged; existing keys are kept unless replaced)"
    )


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
    done = ctx.notes.write_note(params.path, params.content, _frontmatter_updates(params))
    return WriteResult(path=done.path, created=done.created, bytes=done.bytes, notes=done.notes)


# ---- edit -----------------------------------------------------------------------------------------
class EditParams(Params):
    path: str = Field(description="Workspace-relative path of the text file to edit")
    old_text: str = Field(description="Exact text to find (copy it from read, without the line numbers)")
    new_text: str = Field(description="Text to put in its place")
    replace_all: bool = Field(
        False, description="Replace every occurrence (otherwise old_text must occur exactly once)"
    )


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
    done, count = ctx.notes.replace_text(params.path, params.old_text, params.new_text, replace_all=params.replace_all)
    return EditResult(path=done.path, replacements=count, notes=done.notes)


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


@tool(
    "move",
    "Move or rename a file or folder in the ReMe workspace. By default every [[wikilink]] pointing at it "
    "(or into the folder) is rewritten across the workspace, keeping anchors, aliases, embeds and "
    "predicates; reports which files changed. Refuses to replace an existing file unless overwrite.",
    destructive=True,
    positional=("src", "dst"),
)
def move(ctx: Context, params: MoveParams) -> MoveResult:
    done = ctx.notes.move(params.src, params.dst, overwrite=params.overwrite, rewrite=params.rewrite_links)
    return MoveResult(
        src=done.src,
        dst=done.dst,
        moved_files=done.moved_files,
        links_rewritten=done.links_rewritten,
        changed_files=done.changed_files,
        notes=done.notes,
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
    recursive: bool = Field(
        False, description="Required to delete a folder that is not empty (deletes everything inside)"
    )


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


@tool(
    "delete",
    "Delete a file or folder from the ReMe workspace. Returns the [[wikilinks]] in other notes that still "
    "point at what was deleted, so they can be cleaned up. A non-empty folder needs recursive=true.",
    destructive=True,
    idempotent=False,
    positional=("path",),
)
def delete(ctx: Context, params: DeleteParams) -> DeleteResult:
    done = ctx.notes.delete(params.path, recursive=params.recursive)
    inbound = [InboundLink(source=b.source, line=b.line, target=b.target, link=b.link) for b in done.dangling]
    return DeleteResult(path=done.path, deleted_files=done.deleted_files, inbound_links=inbound)


# ---- list -----------------------------------------------------------------------------------------
class ListParams(Params):
    path: str = Field("", description="Workspace-relative folder to list; empty for the workspace root")
    recursive: bool = Field(False, description="Include files in sub-folders")
    sort: Literal["name", "mtime"] = Field(
        "name", description="Order by path name, or by modification time (newest first)"
    )
    ext: list[str] | None = Field(None, description="Only files with these extensions, e.g. ['md', 'jsonl']")
    limit: int = Field(LIST_DEFAULT_LIMIT, ge=1, le=10_000, description="Maximum number of entries")


class ListEntry(ToolResult):
    path: str
    type: Literal["file", "dir"]
    size: int
    modified: str
    name: str | None = None
    description: str | None = None
    refused: str | None = None  # a symlink, pipe, device or hard-linked file: listed, never opened


class ListResult(ToolResult):
    path: str
    entries: list[ListEntry]
    total: int

    def text(self) -> str:
        if not self.entries:
            return f"{self.path or '(workspace root)'}: no entries"
        from ..memory.untrusted import one_line  # a name (a file's, its frontmatter's) may hold a newline

        out = []
        for e in self.entries:
            label = one_line(e.path) + ("/" if e.type == "dir" else "")
            line = f"{label}  {'-' if e.type == 'dir' else _size(e.size)}  {e.modified}"
            if e.name or e.description:
                line += "  — " + ": ".join(one_line(x) for x in (e.name, e.description) if x)
            if e.refused:
                line += f"  [refused: {e.refused}]"
            out.append(line)
        if self.total > len(self.entries):
            out.append(f"[{self.total - len(self.entries)} more; raise limit or narrow path/ext]")
        return "\n".join(out)


def _summary(ctx: Context, rel: str) -> tuple[str | None, str | None]:
    try:
        _norm, fh = ctx.workspace.open_file(rel)
        with fh:
            head = fh.read(16 * 1024).decode("utf-8", errors="replace")
    except (ReMeError, OSError):
        return None, None
    note = parse_note(head)
    name, desc = note.meta.get("name"), note.meta.get("description")
    return (redact(str(name)) if name is not None else None), (
        redact(" ".join(str(desc).split())) if desc is not None else None
    )


def _refusal(info: os.stat_result) -> str | None:
    """Why a listed entry is shown without being opened (None: it is a file or folder of its own)."""
    if stat_mod.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return f"{info.st_nlink} hard links: may be a file outside the workspace, never opened"
    return nofollow.kind(info.st_mode)


@tool(
    "list",
    "List files and folders of the ReMe memory workspace (daily/, digest/, resource/, session/), with size, "
    "modification time and each note's frontmatter name/description. Options: recursive, sort by name or "
    "mtime, extension filter, limit.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
@team_readable
def list_files(ctx: Context, params: ListParams) -> ListResult:
    ws = ctx.workspace
    norm, info = _entry(ctx, params.path)
    if not stat_mod.S_ISDIR(info.st_mode):
        raise InvalidInputError(f"{norm} is a file, not a folder; use stat or read")
    exts = {("." + e.lower().lstrip(".")) for e in (params.ext or []) if e.strip(". ")}
    # entries as they are (symlinks not followed), never under a hidden name nor outside the read policy
    stats = [
        (p, st)
        for p, st in nofollow.walk(ws.root, norm, recursive=params.recursive)
        if not any(part.startswith(".") for part in p.split("/")) and p.split("/", 1)[0] in READABLE_LAYERS
    ]
    if exts:
        stats = [(p, st) for p, st in stats if not stat_mod.S_ISDIR(st.st_mode) and Path(p).suffix.lower() in exts]
    if params.sort == "mtime":
        stats.sort(key=lambda x: (-x[1].st_mtime, x[0]))
    else:
        stats.sort(key=lambda x: x[0])
    from ..index.sync import refused_name
    from ..memory.untrusted import one_line

    entries = []
    for p, st in stats[: params.limit]:
        bad_name = refused_name(p)  # control characters, or not UTF-8 (which no output could even encode)
        is_dir, refused = (
            stat_mod.S_ISDIR(st.st_mode),
            _refusal(st) or (bad_name and f"name refused ({bad_name}): not indexed, rename it"),
        )
        name = desc = None
        if not is_dir and not refused and p.lower().endswith(MARKDOWN_EXTS):
            name, desc = _summary(ctx, p)
        entries.append(
            ListEntry(
                path=one_line(p) if bad_name else p,
                type="dir" if is_dir else "file",
                size=0 if is_dir or refused else st.st_size,
                modified=_mtime(st.st_mtime),
                name=name,
                description=desc,
                refused=refused,
            )
        )
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
            rows += [
                ("size", f"{self.size} bytes ({_size(self.size)})"),
                ("lines", self.lines),
                ("binary", self.binary),
                ("valid_utf8", self.valid_utf8),
                ("mime_type", self.mime_type),
                ("name", self.name),
                ("description", self.description),
                ("frontmatter_error", self.frontmatter_error),
            ]
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
@team_readable
def stat(ctx: Context, params: PathParams) -> StatResult:
    norm, st = _entry(ctx, params.path)
    base = dict(path=norm, size=st.st_size, modified=_mtime(st.st_mtime), created=_mtime(st.st_ctime))
    if stat_mod.S_ISDIR(st.st_mode):
        files = sum(
            1
            for p, s in nofollow.walk(ctx.workspace.root, norm)
            if stat_mod.S_ISREG(s.st_mode) and p.split("/", 1)[0] in READABLE_LAYERS
        )
        return StatResult(type="dir", files=files, **{**base, "size": 0})
    _norm, fh = ctx.workspace.open_file(norm)
    with fh:
        st = os.fstat(fh.fileno())
        head = fh.read(8192)
        mime = _image_mime(norm, head)
        if looks_binary(head):
            return StatResult(type="file", binary=True, mime_type=mime or "application/octet-stream", **base)
        result = StatResult(
            type="file", binary=False, lines=_count_lines(fh, st.st_size), mime_type=mime or _text_mime(norm), **base
        )
        if st.st_size <= EDIT_MAX_BYTES:
            fh.seek(0)
            data = fh.read()
            try:
                text = data.decode("utf-8")
                result.valid_utf8 = True
            except UnicodeDecodeError:
                text, result.valid_utf8 = data.decode("utf-8", errors="replace"), False
            note = parse_note(text)
            result.name, result.description = _redacted(note.name), _redacted(note.description)
            result.frontmatter_error = note.error
    return result


def _text_mime(path: str) -> str:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return {
        "md": "text/markdown",
        "markdown": "text/markdown",
        "jsonl": "application/jsonl",
        "json": "application/json",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "html": "text/html",
        "csv": "text/csv",
    }.get(ext, "text/plain")


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
    return FrontmatterResult(
        path=norm,
        meta=_redacted(_jsonable(note.meta)),
        name=_redacted(note.name),
        description=_redacted(note.description),
        error=note.error,
        raw=_redacted(note.raw_frontmatter) if note.error else None,
    )


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
@team_readable
def frontmatter_read(ctx: Context, params: PathParams) -> FrontmatterResult:
    norm, fh = _readable(ctx, params.path)
    with fh:
        head = fh.read(EDIT_MAX_BYTES)
    if looks_binary(head[:8192]):
        raise _binary_error(norm)
    return _frontmatter_result(norm, head.decode("utf-8", errors="replace"))


class FrontmatterUpdateParams(Params):
    path: str = Field(description="Workspace-relative path of the note")
    updates: dict[str, Any] = Field(
        description="Frontmatter keys to set (merged: other keys keep their text and order)"
    )


class FrontmatterDeleteParams(Params):
    path: str = Field(description="Workspace-relative path of the note")
    keys: list[str] = Field(description="Frontmatter keys to remove")


def _change_frontmatter(ctx: Context, path: str, updates: dict[str, Any], delete: list[str]) -> FrontmatterResult:
    done, text = ctx.notes.update_frontmatter(path, updates, delete)
    return _frontmatter_result(done.path, text)


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
    path: str = Field(
        description="Workspace-relative path of an image (PNG, JPEG, GIF or WebP), e.g. resource/2026-06-20/chart.png"
    )
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
        return {
            "png": "image/png",
            "jpg": "image/jpeg",
            "jpeg": "image/jpeg",
            "gif": "image/gif",
            "webp": "image/webp",
        }.get(ext)
    return None


@tool(
    "read_image",
    "Read an image file (PNG, JPEG, GIF, WebP) from the ReMe workspace as base64 with its mime type, e.g. a "
    "chart or screenshot saved under resource/.",
    read_only=True,
    idempotent=True,
    positional=("path",),
)
@team_readable
def read_image(ctx: Context, params: ReadImageParams) -> ImageResult:
    norm, fh = _readable(ctx, params.path)
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size > params.max_bytes:
            raise InvalidInputError(f"{norm} is {_size(size)}, over the {_size(params.max_bytes)} image limit")
        data = fh.read()
    mime = _image_mime(norm, data[:16])
    if mime is None:
        raise InvalidInputError(f"{norm} is not a PNG, JPEG, GIF or WebP image; use read for text files")
    return ImageResult(path=norm, mime_type=mime, size=size, data=base64.b64encode(data).decode("ascii"))
