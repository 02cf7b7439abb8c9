"""Plain-text rules every note reader shares: the one line splitter, the one code-fence scanner,
the one binary-file detector and the one rule for characters that never belong in a line of output.
Standard library only (memory/untrusted.py, which the hooks run, uses it)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")

Fence = tuple[str, int]  # (fence character, length) of an open code fence


# Characters that never belong in one output line, nor in a file name the index takes: controls (\n, \r,
# \t, ESC, C1), format characters (bidi overrides, zero-width), surrogates (os.fsdecode's stand-ins for
# the bytes of a name that is not UTF-8) and the line/paragraph separators.
UNSAFE_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def unsafe_char(ch: str) -> bool:
    return not ch.isprintable() and unicodedata.category(ch) in UNSAFE_CATEGORIES


def has_unsafe(text: str) -> bool:
    return not text.isprintable() and any(unsafe_char(c) for c in text)  # printable text: one C-level check


def split_lines(text: str) -> list[str]:
    """The line numbering rule of reme-cc (chunks, `read`, links): split on "\\n" only — never
    ``str.splitlines``, which also splits at \\x0b, \\x1c, U+0085, U+2028 … and disagrees with editors."""
    return text.split("\n")


def keep_lines(text: str) -> list[str]:
    """``split_lines`` with each line's "\\n" kept (no empty last item)."""
    parts = split_lines(text)
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def fence_opening(line: str) -> Fence | None:
    """The fence ``line`` opens (CommonMark: up to 3 spaces, 3+ backticks or tildes; a backtick
    fence's info string holds no backtick), else None."""
    m = _FENCE_OPEN.match(line)
    if not m or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    return m.group(1)[0], len(m.group(1))


def closes_fence(line: str, fence: Fence) -> bool:
    """True when ``line`` closes ``fence``: only the fence character, at least as many, ≤ 3 spaces in."""
    stripped = line.strip()
    return (
        bool(stripped)
        and set(stripped) == {fence[0]}
        and len(stripped) >= fence[1]
        and len(line) - len(line.lstrip(" ")) <= 3
    )


_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


def headings(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(line index, level, lower-cased title) of each ATX heading of ``lines``; headings inside code
    fences do not count."""
    fence: Fence | None = None
    for i, line in enumerate(lines):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            continue
        fence = fence_opening(line)
        if fence is not None:
            continue
        h = _HEADING.match(line)
        if h:
            yield i, len(h.group(1)), h.group(2).strip().lower()


def looks_binary(sample: bytes) -> bool:
    """NUL bytes, or mostly undecodable bytes, mean binary; a few bad bytes are just damaged text.
    Give it the first few KB of a file."""
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    text = sample.decode("utf-8", errors="replace")
    # a multi-byte char cut at the sample end is not damage
    bad = text[:-1].count("\ufffd") if text.endswith("\ufffd") else text.count("\ufffd")
    return bad > max(8, len(text) // 10)


CONTEXT_CHARS = 300  # the context line's cap: a description is one line, not a second body
# What the chunker makes a chunk's text of; an index made by another version re-chunks its notes
# (index/sync.rechunk). 2: a Markdown note's chunks start with its context line (note_context).
CHUNKER_VERSION = 2


def note_context(name: object, description: object) -> str:
    """The line every chunk of a Markdown note starts with: its frontmatter name and description
    (strings only), on one line, at most CONTEXT_CHARS; "" when it has neither."""
    parts = [" ".join(v.split()) for v in (name, description) if isinstance(v, str) and v.strip()]
    line = " — ".join(dict.fromkeys(parts))  # a name repeated as description counts once
    if len(line) > CONTEXT_CHARS:
        line = line[: CONTEXT_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return line


def text_hash(text: str) -> str:
    """A chunk text's hash: its key in the embedding cache (sha256 of its UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def without_context(text: str, context: str) -> str:
    """A chunk's text without the context line it starts with (unchanged when it does not: a chunk
    of the previous chunker, or of a note without name and description)."""
    if context and text.startswith(context + "\n"):
        return text[len(context) + 1 :]
    return text
