"""What a note says now, what it said before, and whether it still holds (issue 26: memory that stays true).

A digest node's *statement* is its body without its ``## Sources`` and ``## History`` sections. When a
statement is corrected, the text it replaced is kept in the node's ``## History`` section, one dated
entry per correction, readable as plain Markdown (Obsidian shows it as a list of quotes)::

    ## History
    - until 2026-06-21 (held since 2026-06-02), replaced by the statement above; evidence [[daily/2026-06-21/db.md]]
      > The event store runs on Postgres 15.

Frontmatter keys (flat strings, so Obsidian's properties panel shows them):

* ``valid_from``: the day the current statement started to hold (set when a correction is kept);
* ``superseded_by`` / ``valid_until``: the whole note no longer holds — another note replaces it, or
  nothing does (``valid_until`` alone);
* ``stale`` / ``stale_since``: the note cites a file, folder, command or symbol of its project that no
  longer exists (memory/stale.py writes them at dream time); ``stale_kept``: a review decided the note
  holds anyway, and why.

``note_status(text)`` is the one answer to "may I present this note as current?", for search, the
brief and per-prompt recall. Standard library only (the SessionStart brief reads it under the system
python3): the frontmatter keys above are read with a small reader of flat ``key: value`` lines.
"""

from __future__ import annotations

from typing import Any

import datetime as _dt
import re
from dataclasses import dataclass

from .text import headings, split_lines

VALID_FROM = "valid_from"
VALID_UNTIL = "valid_until"
SUPERSEDED_BY = "superseded_by"
STALE = "stale"
STALE_SINCE = "stale_since"
STALE_KEPT = "stale_kept"
HISTORY_TITLE = "History"
_HISTORY_TITLES = {"history", "历史"}
_SOURCES_TITLES = {"sources", "source", "来源"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ENTRY = re.compile(r"^- until (\d{4}-\d{2}-\d{2})(?: \(held since (\d{4}-\d{2}-\d{2})\))?")
_DAILY_DATE = re.compile(r"(?:^|\[\[)daily/(\d{4}-\d{2}-\d{2})/")


@dataclass(frozen=True)
class NoteStatus:
    """Whether a note may be presented as what is true now."""

    state: str  # "current" | "superseded" | "stale"
    reason: str = ""  # why not current ("" when current)
    date: str | None = None  # when it stopped holding / was found stale
    superseded_by: str | None = None  # the note that replaces it, if any

    def label(self) -> str:
        """One short label for output ("" when current)."""
        if self.state == "current":
            return ""
        when = f" since {self.date}" if self.date else ""
        return f"{self.state}{when}: {self.reason}" if self.reason else f"{self.state}{when}"


@dataclass(frozen=True)
class Past:
    """One History entry: a statement that held ``since`` (None: unknown) until ``until``."""

    until: str
    since: str | None
    statement: str


# ---- reading ----------------------------------------------------------------------------------------
def split_front(text: str) -> tuple[str, str, int]:
    """(frontmatter block text, body, number of lines before the body); ("", text, 0) without one."""
    lines = split_lines(text)
    if lines and lines[0].rstrip("\r") == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip("\r") in ("---", "..."):
                return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 1
    return "", text, 0


def flat_meta(text: str) -> dict[str, str]:
    """The top-level ``key: scalar`` lines of a note's frontmatter (quotes removed); nested values and
    lists are left out. Enough for the keys this module writes; the full YAML reader is frontmatter.py."""
    block, _body, _n = split_front(text)
    out: dict[str, str] = {}
    for line in split_lines(block):
        m = re.match(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$", line.rstrip("\r"))
        if not m or not m.group(2):
            continue
        value = m.group(2)
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1].replace("''", "'")
        elif len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        out[m.group(1)] = value
    return out


def section_spans(body: str) -> dict[str, tuple[int, int]]:
    """0-based [start, end) line spans of the body's Sources and History sections ("sources",
    "history"), each from its heading to the next heading of the same or a higher level; headings in
    code fences do not count. The first of each only."""
    lines = [line.rstrip("\r") for line in split_lines(body)]
    spans: dict[str, tuple[int, int]] = {}
    open_name, open_start, open_level = None, 0, 0
    for i, level, title in headings(lines):
        if open_name is not None and level <= open_level:
            spans[open_name] = (open_start, i)
            open_name = None
        kind = "sources" if title in _SOURCES_TITLES else "history" if title in _HISTORY_TITLES else None
        if open_name is None and kind and kind not in spans:
            open_name, open_start, open_level = kind, i, level
    if open_name is not None:
        spans[open_name] = (open_start, len(lines))
    return spans


def statement(text: str) -> str:
    """The note's statement: its body without the Sources and History sections."""
    _block, body, _n = split_front(text)
    lines = split_lines(body)
    drop: set[int] = set()
    for start, end in section_spans(body).values():
        drop.update(range(start, end))
    return "\n".join(line for i, line in enumerate(lines) if i not in drop).strip()


def history(text: str) -> list[Past]:
    """The History entries of a note, in the order written (oldest first)."""
    return [past for past, _raw in _entries(text)]


def _entries(text: str) -> list[tuple[Past, str]]:
    """Each History entry and its lines as written."""
    _block, body, _n = split_front(text)
    span = section_spans(body).get("history")
    if span is None:
        return []
    out: list[tuple[Past, str]] = []
    current: tuple[str, str | None, list[str], list[str]] | None = None

    def close() -> None:
        if current:
            raw = "\n".join(current[3]).rstrip() + "\n"
            out.append((Past(current[0], current[1], "\n".join(current[2]).strip()), raw))

    for line in split_lines(body)[span[0] + 1 : span[1]]:
        line = line.rstrip("\r")
        m = _ENTRY.match(line)
        if m:
            close()
            current = (m.group(1), m.group(2), [], [line])
        elif current and line.lstrip().startswith(">"):
            current[2].append(line.lstrip()[1:].removeprefix(" "))
            current[3].append(line)
        elif current and line.strip():
            current[3].append(line)
    close()
    return out


def history_lines(text: str) -> tuple[int, int] | None:
    """1-based inclusive file lines of the History section (for labelling a search hit inside it)."""
    _block, body, before = split_front(text)
    span = section_spans(body).get("history")
    return None if span is None else (before + span[0] + 1, before + span[1])


def source_dates(text: str) -> list[str]:
    """The days of the daily cards a note's text links (sorted, unique)."""
    return sorted(set(_DAILY_DATE.findall(text)))


def began(text: str) -> str | None:
    """The first day the note is known to have held something: its oldest History entry's start,
    else ``valid_from``, else its oldest daily source (None: unknown)."""
    starts = [p.since for p in history(text) if p.since]
    meta = flat_meta(text)
    if _DATE.fullmatch(meta.get(VALID_FROM, "")):
        starts.append(meta[VALID_FROM])
    dates = source_dates(text)
    if dates:
        starts.append(dates[0])
    return min(starts) if starts else None


def note_status(text: str, *, today: str | None = None) -> NoteStatus:
    """THE status of a note: ``superseded`` (``superseded_by`` set, or ``valid_until`` reached),
    ``stale`` (``stale`` set: it cites what its project no longer has), else ``current``."""
    return status_of(flat_meta(text), today=today)


def status_of(meta: dict[str, Any], *, today: str | None = None) -> NoteStatus:
    """``note_status`` from frontmatter already read (the index's ``extra``: values may be non-strings)."""
    meta = {k: "" if v is None else str(v) for k, v in meta.items()}
    today = today or _dt.date.today().isoformat()
    until = meta.get(VALID_UNTIL, "")
    by = meta.get(SUPERSEDED_BY, "").strip().strip("[]") or None
    if by or (until and until <= today):
        why = f"replaced by {by}" if by else "no longer holds"
        return NoteStatus("superseded", why, until or None, by)
    if meta.get(STALE):
        return NoteStatus("stale", meta[STALE], meta.get(STALE_SINCE) or None)
    return NoteStatus("current")


def statement_as_of(text: str, day: str) -> str | None:
    """What the note said on ``day`` (YYYY-MM-DD): the current statement, an earlier one from its
    History, or None when the note did not hold then (not yet known, or superseded by then)."""
    meta = flat_meta(text)
    until = meta.get(VALID_UNTIL, "")
    if until and day >= until:
        return None
    start = began(text)
    if start and day < start:
        return None
    for past in sorted(history(text), key=lambda p: p.until):
        if day < past.until:
            return past.statement
    return statement(text)


# ---- writing ----------------------------------------------------------------------------------------
def _blocks(text: str) -> list[str]:
    """Paragraphs (blank-line separated) of a statement."""
    return [b.strip() for b in re.split(r"\n[ \t\r]*\n", text) if b.strip()]


def _squash(text: str) -> str:
    return " ".join(text.split())


def replaced_blocks(old_text: str, new_text: str) -> list[str]:
    """The paragraphs of ``old_text``'s statement that ``new_text`` no longer says (word for word, or
    as part of a longer paragraph) and that its History does not already keep."""
    new_statement = _squash(statement(new_text))
    kept = _squash(" ".join(p.statement for p in history(new_text)))
    said = [(b, _squash(b).rstrip(".。;；!！")) for b in _blocks(statement(old_text))]  # "x." -> "x, and y."
    return [b for b, s in said if s not in new_statement and s not in kept]


def history_entry(blocks: list[str], until: str, since: str | None, evidence: list[str]) -> str:
    head = f"- until {until}" + (f" (held since {since})" if since and since < until else "")
    head += ", replaced by the statement above"
    if evidence:
        head += "; evidence " + ", ".join(f"[[{p}]]" for p in evidence)
    quoted = "\n  >\n".join("\n".join(f"  > {line}".rstrip() for line in b.split("\n")) for b in blocks)
    return f"{head}\n{quoted}\n" if blocks else f"{head}\n"


def keep_history(old_text: str | None, new_text: str, *, until: str, evidence: list[str]) -> str:
    """``new_text`` with what it replaced of ``old_text``'s statement appended to its History section,
    dated: held since the old ``valid_from`` (or its oldest source) until ``until``. Unchanged when
    nothing was replaced (a new note, an addition, a new source)."""
    if old_text is None:
        return new_text
    now = {past.statement for past in history(new_text)}
    for past, raw in _entries(old_text):  # History is never dropped, even by a whole rewrite
        if past.statement not in now:
            new_text = append_history(new_text, raw)
    blocks = replaced_blocks(old_text, new_text)
    if not blocks:
        return new_text
    earlier = [p.until for p in history(old_text)]  # the replaced text held from the last change on
    since = flat_meta(old_text).get(VALID_FROM) or (max(earlier) if earlier else None)
    since = since or (source_dates(old_text) or [None])[0]
    return append_history(new_text, history_entry(blocks, until, since, evidence))


def redate(text: str, first: int, until: str, evidence: list[str]) -> str:
    """``text`` with its History entries from the ``first``-th on (0-based) dated ``until`` and citing
    ``evidence``: the dream settles the entries a unit's edits made once the unit is done, whatever
    order its edits came in (the claim before the source, or after)."""
    block, body, before = split_front(text)
    span = section_spans(body).get("history")
    if span is None:
        return text
    lines = split_lines(body)
    n = -1
    for i in range(span[0] + 1, span[1]):
        m = _ENTRY.match(lines[i].rstrip("\r"))
        if not m:
            continue
        n += 1
        if n >= first:
            lines[i] = history_entry([], until, m.group(2), evidence).rstrip("\n")
    head = "\n".join(split_lines(text)[:before])
    return (head + "\n" if before else "") + "\n".join(lines)


def append_history(text: str, entry: str) -> str:
    """``text`` with ``entry`` added at the end of its History section (made at the end if missing)."""
    block, body, before = split_front(text)
    lines = split_lines(body)
    span = section_spans(body).get("history")
    if span is None:
        tail = body.rstrip("\n")
        new_body = f"{tail}\n\n## {HISTORY_TITLE}\n{entry}"
    else:
        end = span[1]
        while end > span[0] + 1 and not lines[end - 1].strip():
            end -= 1
        rest = "\n".join(lines[span[1] :])
        new_body = "\n".join(lines[:end]) + "\n" + entry + ("\n" + rest if rest else "")
    head = "\n".join(split_lines(text)[:before])
    return (head + "\n" if before else "") + new_body
