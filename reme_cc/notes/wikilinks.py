"""The ONE wikilink parser of reme-cc (graph, move/rewrite, chunk boundaries all use it).

Forms: `[[path]]`, `[[path#L9-L10,L15-L20]]`, `[[path#Heading]]`, `[[path|alias]]`, `![[path]]`,
line-level `predicate:: [[a]], [[b]]` (also as a list item `- predicate:: ...`) and inline
`[predicate:: [[a]]]` / `(predicate:: [[a]])`.

Rules:
* Literal path semantics: the target is the text before `#`/`|`, stripped; no `.md` is added.
  The anchor is kept as a raw string and never validated (`#L0`, `#L10-L9`, `#L9,` are kept).
* Links inside fenced code blocks (``` or ~~~, unterminated fences run to the end of the text)
  and inside inline code spans are not links. Indented (4-space) code blocks are NOT excluded:
  they are indistinguishable from list continuations without a full parse.
* `[[#Heading]]` (a link to the same note) has no target and is skipped.
* Frontmatter: links in a leading `---` YAML block are parsed too, with the top-level key as the
  predicate (`source_conversation: "[[session/claude_code/x.jsonl]]"` -> predicate
  "source_conversation"), so provenance becomes labelled graph edges.
* resolve_target: exact workspace path first, then the Obsidian short form by unique stem or file
  name (a full file-name match wins over a stem match; an extension-less link prefers the single
  `.md` candidate); several left -> "ambiguous", none -> "missing".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Callable, Collection, Iterable, Mapping

from ..base.errors import InvalidInputError
from .text import Fence, closes_fence, fence_opening

__all__ = [
    "WikiLink",
    "Resolution",
    "parse_links",
    "rewrite_links",
    "resolve_target",
    "build_stems",
    "code_mask",
    "link_spans",
]

_LINK_RE = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")
# `key:: ` at the start of a line, optionally as a list item / task. Keys may contain spaces and CJK.
_LINE_FIELD_RE = re.compile(r"^[ \t]*(?:[-*+][ \t]+(?:\[.\][ \t]+)?|\d+[.)][ \t]+)?([^\s:\[\]()`][^:\[\]()`\n]*?)::")
# `[key:: value]` or `(key:: value)`, value may hold wikilinks but no other brackets.
_INLINE_FIELD_RE = re.compile(
    r"\[([^\[\]():\n`]+?)::((?:[^\[\]\n]|\[\[[^\[\]\n]*\]\])*)\]"
    r"|\(([^\[\]():\n`]+?)::((?:[^\[\]()\n]|\[\[[^\[\]\n]*\]\])*)\)"
)
_FM_FENCE_RE = re.compile(r"^\ufeff?---[ \t]*\r?$")
_FM_CLOSE_RE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")
_FM_KEY_RE = re.compile(r"""^(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#\-?:,\[\]{}&*!|>'"%@`][^:\n]*?))[ \t]*:(?:[ \t]|$)""")


@dataclass(frozen=True)
class WikiLink:
    target: str
    anchor: str | None
    alias: str | None
    embed: bool
    predicate: str | None
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Resolution:
    path: str | None
    how: str  # "exact" | "stem" | "ambiguous" | "missing"


# ---------------------------------------------------------------------------------------------
# code regions


def code_mask(text: str) -> list[tuple[int, int]]:
    """Sorted, non-overlapping (start, end) character ranges that are code (fences, inline spans)."""
    regions: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    fence: Fence | None = None
    fence_start = 0
    prose_start = 0  # start of the current run of non-fenced text
    while pos <= n:
        nl = text.find("\n", pos)
        line_end = n if nl == -1 else nl
        line = text[pos:line_end]
        if fence is None:
            fence = fence_opening(line)
            if fence is not None:
                regions.extend(_inline_spans(text, prose_start, pos))
                fence_start = pos
        elif closes_fence(line, fence):
            regions.append((fence_start, line_end))
            fence = None
            prose_start = line_end
        if nl == -1:
            break
        pos = nl + 1
    if fence is not None:
        regions.append((fence_start, n))
    else:
        regions.extend(_inline_spans(text, prose_start, n))
    regions.sort()
    return regions


_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
_TICKS_RE = re.compile(r"`+")


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Inline code spans in text[start:end]; a span never crosses a blank line (paragraph end)."""
    out: list[tuple[int, int]] = []
    para_start = start
    for para_end in [m.start() for m in _BLANK_LINE_RE.finditer(text, start, end)] + [end]:
        runs = list(_TICKS_RE.finditer(text, para_start, para_end))
        i = 0
        while i < len(runs):
            opening = runs[i]
            size = len(opening.group())
            j = i + 1
            while j < len(runs) and len(runs[j].group()) != size:
                j += 1
            if j < len(runs):
                out.append((opening.start(), runs[j].end()))
                i = j + 1
            else:
                i += 1  # an unmatched run is literal text
        para_start = para_end
    return out


def _in_regions(regions: list[tuple[int, int]], start: int, end: int, idx: list[int]) -> bool:
    """True if [start, end) overlaps a region. idx[0] is a moving cursor (links come in order)."""
    i = idx[0]
    while i < len(regions) and regions[i][1] <= start:
        i += 1
    idx[0] = i
    return i < len(regions) and regions[i][0] < end


# ---------------------------------------------------------------------------------------------
# parsing


@dataclass(frozen=True)
class _Raw:
    link: WikiLink
    target_start: int
    target_end: int


def _frontmatter_end(text: str) -> int:
    """Character offset just after a complete leading `---` block, or 0."""
    if not _FM_FENCE_RE.match(text.split("\n", 1)[0]):
        return 0
    pos = text.find("\n") + 1
    while 0 < pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos : len(text) if nl == -1 else nl]
        if _FM_CLOSE_RE.match(line):
            return len(text) if nl == -1 else nl + 1
        if nl == -1:
            return 0
        pos = nl + 1
    return 0


def _iter_raw(text: str) -> Iterable[_Raw]:
    fm_end = _frontmatter_end(text)
    regions = code_mask(text[fm_end:])
    regions = [(a + fm_end, b + fm_end) for a, b in regions]
    cursor = [0]
    line_no = 1
    line_start = 0  # offset of the start of line `line_no`
    line_field: tuple[int, str | None] = (-1, None)  # (line_start, predicate position/name)
    inline_fields: list[tuple[int, int, str]] = []
    fm_key: str | None = None
    fm_key_line = 0
    for m in _LINK_RE.finditer(text):
        start, end = m.span()
        # advance the line counter
        while True:
            nl = text.find("\n", line_start, start)
            if nl == -1:
                break
            line_start = nl + 1
            line_no += 1
        if _in_regions(regions, start, end, cursor):
            continue
        inner = m.group(2)
        target_part, sep, alias = _split_alias(inner)
        tpart, hsep, anchor = target_part.partition("#")
        target = tpart.strip()
        if not target:
            continue
        lead = len(tpart) - len(tpart.lstrip())
        t_start = m.start(2) + lead
        t_end = t_start + len(target)
        predicate: str | None = None
        if start < fm_end:
            # frontmatter: predicate = the top-level key owning this line
            if fm_key_line != line_no:
                fm_key = _fm_key_for(text, line_start)
                fm_key_line = line_no
            predicate = fm_key
        else:
            if line_field[0] != line_start:
                line_end = text.find("\n", line_start)
                line_text = text[line_start : len(text) if line_end == -1 else line_end]
                lm = _LINE_FIELD_RE.match(line_text)
                field = (lm.end(), lm.group(1).strip()) if lm and "[[" not in line_text[: lm.end()] else None
                inline_fields = [
                    (fm.start() + line_start, fm.end() + line_start, (fm.group(1) or fm.group(3)).strip())
                    for fm in _INLINE_FIELD_RE.finditer(line_text)
                ]
                line_field = (line_start, field)  # type: ignore[assignment]
            for a, b, name in inline_fields:
                if a <= start and end <= b:
                    predicate = name
                    break
            else:
                field = line_field[1]
                if field and start - line_start >= field[0]:  # type: ignore[index]
                    predicate = field[1]  # type: ignore[index]
        link = WikiLink(
            target=target,
            anchor=anchor if hsep else None,
            alias=alias if sep else None,
            embed=bool(m.group(1)),
            predicate=predicate or None,
            line=line_no,
            start=start,
            end=end,
        )
        yield _Raw(link, t_start, t_end)


def _split_alias(inner: str) -> tuple[str, bool, str]:
    """Split `target|alias` at the first `|` (a table-escaped `\\|` counts as the separator)."""
    bar = inner.find("|")
    if bar == -1:
        return inner, False, ""
    target = inner[:bar]
    if target.endswith("\\"):
        target = target[:-1]
    return target, True, inner[bar + 1 :]


def _fm_key_for(text: str, line_start: int) -> str | None:
    """The top-level YAML key whose entry contains the line starting at line_start."""
    pos = line_start
    while pos >= 0:
        nl = text.find("\n", pos)
        line = text[pos : len(text) if nl == -1 else nl]
        km = _FM_KEY_RE.match(line)
        if km:
            return (km.group(1) or km.group(2) or km.group(3)).strip()
        if pos == 0:
            return None
        pos = text.rfind("\n", 0, pos - 1) + 1
    return None


def parse_links(text: str) -> list[WikiLink]:
    """All wikilinks of `text` in order (code excluded; frontmatter links carry their key)."""
    return [r.link for r in _iter_raw(text)]


def link_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `[[...]]`-shaped match, code or not: places a chunk boundary must avoid."""
    return [m.span() for m in _LINK_RE.finditer(text)]


def rewrite_links(text: str, retarget: Callable[[str], str | None]) -> tuple[str, int]:
    """Replace link targets; returns (new_text, number of links changed).

    Only the target characters are replaced, so anchor, alias, embed marker, predicate and the
    surrounding whitespace stay exactly as written. Code spans/blocks are never touched.
    """
    parts: list[str] = []
    last = 0
    count = 0
    for raw in _iter_raw(text):
        new = retarget(raw.link.target)
        if new is None or new == raw.link.target:
            continue
        if not new or any(c in new for c in "[]|#\n"):
            raise InvalidInputError(
                f"cannot rewrite a wikilink target to {new!r}: it may not contain [ ] | # or newlines"
            )
        parts.append(text[last : raw.target_start])
        parts.append(new)
        last = raw.target_end
        count += 1
    if not count:
        return text, 0
    parts.append(text[last:])
    return "".join(parts), count


# ---------------------------------------------------------------------------------------------
# resolution


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _stem(name: str) -> str:
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def build_stems(paths: Iterable[str]) -> dict[str, list[str]]:
    """Lookup table for resolve_target: casefolded stem and basename -> paths (sorted)."""
    stems: dict[str, set[str]] = {}
    for p in paths:
        base = _basename(p)
        for key in {base.casefold(), _stem(base).casefold()}:
            stems.setdefault(key, set()).add(p)
    return {k: sorted(v) for k, v in stems.items()}


def resolve_target(target: str, paths: Collection[str], stems: Mapping[str, list[str]]) -> Resolution:
    """Exact workspace path first; then Obsidian's short form (`[[光伏产业链]]`, `[[wiki/x]]`)
    when exactly one file's stem or basename matches (a folder part must match the path's tail)."""
    if target in paths:
        return Resolution(target, "exact")
    cleaned = target.strip().lstrip("/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    if cleaned and cleaned != target and cleaned in paths:
        return Resolution(cleaned, "exact")
    if not cleaned:
        return Resolution(None, "missing")
    base = _basename(cleaned)
    candidates: set[str] = set()
    for key in (base, base.casefold()):
        candidates.update(stems.get(key, ()))
    if "/" in cleaned:
        folder = cleaned.rsplit("/", 1)[0].casefold()
        candidates = {c for c in candidates if ("/" + c.casefold()).rsplit("/", 1)[0].endswith("/" + folder)}
    if len(candidates) > 1:
        # tie-breaks, Obsidian-style: a full file-name match beats a stem match ([[x.md]] is not
        # x.md.bak); an extension-less short link prefers the one Markdown note ([[x]] -> x.md, not x.pdf)
        named = {c for c in candidates if _basename(c).casefold() == base.casefold()}
        if named:
            candidates = named
        elif len(notes := {c for c in candidates if c.lower().endswith(".md")}) == 1:
            candidates = notes
    if len(candidates) == 1:
        return Resolution(next(iter(candidates)), "stem")
    if len(candidates) > 1:
        return Resolution(None, "ambiguous")
    return Resolution(None, "missing")
