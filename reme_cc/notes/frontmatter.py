"""YAML frontmatter: parse without losing anything, merge at the line level.

`name` and `description` are the recognised keys; every other key is kept verbatim. Updates are
done on the raw YAML lines so keys nobody touched keep their exact original text (quoting,
comments, order). A broken block never stops reading (the body is still returned, the error is
reported) but refuses every write, so a typo can never be "fixed" by silently dropping keys.

YAML timestamps are NOT resolved: `date: 2026-06-20` stays the string "2026-06-20" (JSON-safe,
and written back exactly as read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

import yaml

from ..base.errors import InvalidInputError
from .text import keep_lines

__all__ = [
    "Note",
    "parse_note",
    "merge_frontmatter",
    "replace_body",
    "render_note",
    "render_value",
    "split_frontmatter",
]


# Caps on what a frontmatter block may hold: notes come from tools, resources and the user's editor,
# and YAML aliases let a few hundred bytes expand into billions of nodes (an "alias bomb").
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_FRONTMATTER_NODES = 10_000
MAX_FRONTMATTER_DEPTH = 32


class _Loader(yaml.SafeLoader):
    """SafeLoader without the timestamp resolver (dates stay strings), refusing aliases (``*a``) and
    blocks with more than MAX_FRONTMATTER_NODES nodes or deeper than MAX_FRONTMATTER_DEPTH."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._nodes = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in frontmatter; write the value out", event.start_mark
            )
        self._nodes += 1
        if self._nodes > MAX_FRONTMATTER_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"frontmatter has more than {MAX_FRONTMATTER_NODES} values; keep it short", None
            )
        self._depth += 1
        try:
            if self._depth > MAX_FRONTMATTER_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"frontmatter is nested more than {MAX_FRONTMATTER_DEPTH} levels deep", None
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Dumper(yaml.SafeDumper):
    """SafeDumper matching _Loader, so '2026-06-20' is written bare and read back as a string."""


def _drop_timestamp(cls: type) -> None:
    cls.yaml_implicit_resolvers = {
        ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


_drop_timestamp(_Loader)
_drop_timestamp(_Dumper)

_FENCE_RE = re.compile(r"^---[ \t]*$")
_CLOSE_RE = re.compile(r"^(---|\.\.\.)[ \t]*$")


@dataclass
class Note:
    meta: dict[str, Any]
    body: str
    raw_frontmatter: str | None
    error: str | None
    body_start_line: int

    @property
    def name(self) -> str | None:
        return _as_text(self.meta.get("name"))

    @property
    def description(self) -> str | None:
        return _as_text(self.meta.get("description"))


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def split_frontmatter(text: str) -> tuple[str | None, str, int, int]:
    """Return (raw_yaml, body, body_start_line, fm_end_offset).

    raw_yaml is None when the text has no complete `---` block at its very start (an unterminated
    block is treated as ordinary body text, as Obsidian does). fm_end_offset is the character offset
    where the body starts.
    """
    lines = keep_lines(text)
    if not lines:
        return None, text, 1, 0
    first = lines[0].lstrip("\ufeff").rstrip("\r\n")
    if not _FENCE_RE.match(first):
        return None, text, 1, 0
    offset = len(lines[0])
    raw_parts: list[str] = []
    for i in range(1, len(lines)):
        line = lines[i]
        if _CLOSE_RE.match(line.rstrip("\r\n")):
            end = offset + len(line)
            return "".join(raw_parts), text[end:], i + 2, end
        raw_parts.append(line)
        offset += len(line)
    return None, text, 1, 0


def _load(raw: str) -> tuple[dict[str, Any], str | None]:
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return (
            {},
            f"frontmatter too large ({len(raw)} characters, max {MAX_FRONTMATTER_CHARS}): move the text into the body",
        )
    try:
        data = yaml.load(raw, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as exc:
        return {}, "invalid YAML frontmatter: " + " ".join(str(exc).split())
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, f"invalid YAML frontmatter: expected key: value pairs, got {type(data).__name__}"
    return {str(k) if not isinstance(k, str) else k: v for k, v in data.items()}, None


def parse_note(text: str) -> Note:
    raw, body, start, _ = split_frontmatter(text)
    if raw is None:
        return Note(meta={}, body=body, raw_frontmatter=None, error=None, body_start_line=start)
    meta, error = _load(raw)
    return Note(meta=meta, body=body, raw_frontmatter=raw, error=error, body_start_line=start)


def render_value(key: str, value: Any) -> str:
    """One `key: value` entry as YAML text (ending with a newline).

    PyYAML quotes any string that would not read back as itself, including `[[wikilink]]` strings
    (a bare `[[x]]` is a YAML flow sequence), so values round-trip exactly.
    """
    try:
        for allow_unicode in (True, False):
            text = yaml.dump(
                {key: value},
                Dumper=_Dumper,
                allow_unicode=allow_unicode,
                sort_keys=False,
                # flow style only inside collections (tags: [a, b]); a scalar at the top level would
                # otherwise be dumped as the flow mapping `{key: value}`
                default_flow_style=None if isinstance(value, (list, tuple, dict)) else False,
                width=10_000,
            )
            # PyYAML writes a few characters (e.g. U+0085) raw and reads them back differently;
            # then fall back to escaped non-ASCII.
            loaded, error = _load(text)
            if error:  # deeper, longer or bigger than the loader takes: it would read as no frontmatter
                raise InvalidInputError(f"frontmatter value for {key!r} cannot be stored: {error}")
            if loaded == {key: value}:
                return text
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"frontmatter value for {key!r} cannot be written as YAML: {exc}") from exc
    return text


def render_note(meta: dict[str, Any], body: str) -> str:
    """A new note: `---` block with meta in the given order, then body. No meta -> body unchanged."""
    if not meta:
        return body
    block = _loadable("".join(render_value(str(k), v) for k, v in meta.items()))
    return f"---\n{block}---\n{body}"


def _loadable(block: str) -> str:
    """``block`` when the loader reads it back (the limits above: one definition), else
    InvalidInputError: a block it refuses would leave the note without name and description in search
    and refuse every later frontmatter change."""
    error = _load(block)[1]
    if error:
        raise InvalidInputError(f"{error} — nothing was written; keep the frontmatter smaller")
    return block


# ---------------------------------------------------------------------------------------------
# line-level merge

_KEY_START = re.compile(r"^[^\s#\-?:,\[\]{}&*!|>'\"%@`]|^['\"]")  # a top-level mapping key line


def _segments(raw: str, meta: dict[str, Any]) -> list[tuple[str | None, list[str]]] | None:
    """Split raw YAML into [(key, lines)]: each key owns its lines plus the comment/blank lines
    directly above it. Key None holds trailing comments. Returns None if the split cannot be
    verified (then the caller falls back to a full re-render)."""
    lines = keep_lines(raw)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    groups: list[list[str]] = []
    pending: list[str] = []  # comments / blanks waiting for the next key
    for line in lines:
        stripped = line.strip()
        if not stripped or (line.startswith("#")):
            pending.append(line)
            continue
        if _KEY_START.match(line):
            groups.append(pending + [line])
            pending = []
        elif groups:
            groups[-1].extend(pending + [line])
            pending = []
        else:
            return None
    # Merge groups that do not parse alone into their predecessor (e.g. multi-line flow values).
    merged: list[list[str]] = []
    for g in groups:
        merged.append(g)
        while True:
            data, err = _load("".join(merged[-1]))
            if err is None and isinstance(data, dict) and len(data) == 1:
                break
            if len(merged) < 2:
                return None
            tail = merged.pop()
            merged[-1].extend(tail)
    out: list[tuple[str | None, list[str]]] = []
    keys: list[str] = []
    for g in merged:
        data, _ = _load("".join(g))
        (key,) = data.keys()
        out.append((key, g))
        keys.append(key)
    if keys != list(meta.keys()):
        return None
    if pending:
        out.append((None, pending))
    return out


def merge_frontmatter(text: str, updates: dict[str, Any], delete: Iterable[str] = ()) -> str:
    """Apply `updates` (set/replace) and `delete` to the note's frontmatter.

    Untouched keys keep their original lines byte for byte. A note without frontmatter gets a new
    block. Broken YAML raises InvalidInputError and nothing is rewritten.
    """
    delete = [d for d in delete if d not in updates]
    raw, body, _, _ = split_frontmatter(text)
    if raw is None:
        new_meta = {k: v for k, v in updates.items()}
        if not new_meta:
            return text
        return render_note(new_meta, text)
    meta, error = _load(raw)
    if error:
        raise InvalidInputError(f"{error} — fix the YAML between the --- lines before updating metadata")
    if not updates and not any(d in meta for d in delete):
        return text
    # Keep the exact original fence lines (they may carry a BOM or trailing spaces).
    lines = keep_lines(text)
    opening = lines[0]
    closing = lines[len(keep_lines(raw)) + 1]
    segments = _segments(raw, meta)
    if segments is None:
        # Cannot map keys to lines safely: re-render the block (data kept, formatting normalized).
        merged = {k: v for k, v in meta.items() if k not in delete}
        merged.update(updates)
        block = _loadable("".join(render_value(str(k), v) for k, v in merged.items()))
        return opening + block + closing + body
    out: list[str] = []
    done: set[str] = set()
    trailer: list[str] = []
    for key, seg in segments:
        if key is None:
            trailer = seg
            continue
        if key in delete:
            continue
        if key in updates:
            # keep the comment/blank lines above the key, replace the entry itself
            lead = []
            for line in seg:
                if not line.strip() or line.startswith("#"):
                    lead.append(line)
                else:
                    break
            out.extend(lead)
            out.append(render_value(key, updates[key]))
            done.add(key)
        else:
            out.extend(seg)
    for key, value in updates.items():
        if key not in done:
            out.append(render_value(str(key), value))
    out.extend(trailer)
    block = _loadable("".join(out))
    if opening.endswith("\r\n"):  # keep a CRLF file CRLF (rendered entries come out with LF)
        block = re.sub(r"(?<!\r)\n", "\r\n", block)
    return opening + block + closing + body


def replace_body(text: str, body: str, updates: dict[str, Any] | None = None) -> str:
    """``text`` with its body replaced by ``body`` and ``updates`` merged into its frontmatter (a new
    block when it has none). The block ends at the character offset ``split_frontmatter`` finds, never
    at a count of ``str.splitlines()`` lines (which splits at U+2028, U+0085, \x1c … too): the one way
    to "keep the frontmatter, replace the body"."""
    raw, _, _, end = split_frontmatter(text)
    return merge_frontmatter((text[:end] if raw is not None else "") + body, updates or {})
