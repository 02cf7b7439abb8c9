"""A note's tags, as Obsidian reads them: frontmatter ``tags`` (a YAML list, or one string of tags
separated by commas or spaces) and inline ``#tags`` in the body. Standard library only.

A tag is letters, digits, ``_``, ``-`` and ``/`` (nested tags: ``project/reme``), with at least one
character that is not a digit; tags are case-insensitive and written with or without a leading ``#``.
In the body a tag starts at the beginning of a line or after whitespace, so a Markdown heading
(``# Title``), a shebang (``#!/bin/sh``), ``C#``, ``issue #12`` and a link's ``page#anchor`` are no
tags; nor is anything in fenced or indented code or in an inline code span (``#include`` in a C
block). Tags are labels of the note: they do not change the words it is found by.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Iterable

from ..base.errors import InvalidInputError

KEYS = ("tags", "tag")  # Obsidian's frontmatter keys (``tag``: its older spelling)
MAX_TAG_CHARS = 100
MAX_FILTER_TAGS = 16
_PART = re.compile(r"[\w-]+")  # one level of a nested tag (\w: letters and digits of every script, _)
_INLINE = re.compile(r"(?<!\S)#([\w/-]+)")
_SEPARATORS = re.compile(r"[,\s]+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).+?\1")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def normalize(text: str) -> str | None:
    """The canonical form of one tag (lower case, no ``#``, no empty levels), or None when it is none."""
    parts = [p for p in text.strip().removeprefix("#").lower().split("/") if p]
    if not parts or not all(_PART.fullmatch(p) for p in parts):
        return None
    tag = "/".join(parts)
    return tag if not tag.replace("/", "").isdigit() and len(tag) <= MAX_TAG_CHARS else None


def frontmatter_tags(meta: dict[str, Any]) -> list[str]:
    """The tags a note's frontmatter names (anything that is no tag is passed over)."""
    out: list[str] = []
    for key in KEYS:
        value = meta.get(key)
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, str):
                out += [t for t in map(normalize, _SEPARATORS.split(item)) if t]
    return out


def inline_tags(body: str) -> list[str]:
    """The ``#tags`` of a note's body, outside code (see the module docstring)."""
    if not _INLINE.search(body):
        return []  # most notes: no line to walk (a heading's "# " is no tag)
    out: list[str] = []
    fence = ""  # the open fence's marker
    blank = True  # the line before was blank (an indented line after one opens a code block)
    in_code = in_list = False
    for line in body.splitlines():
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end() :].strip():
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        if not line.strip():
            blank = True
            continue
        indented = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" ")) >= 4
        if indented and (in_code or (blank and not in_list)):
            in_code, blank = True, False
            continue
        if not indented:
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and not blank)
        in_code = blank = False
        if "#" in line:
            out += [t for t in map(normalize, _INLINE.findall(_CODE_SPAN.sub(" ", line))) if t]
    return out


def note_tags(meta: dict[str, Any], body: str) -> list[str]:
    """Every tag of a note, each once, in order (frontmatter first)."""
    return list(dict.fromkeys(frontmatter_tags(meta) + inline_tags(body)))


def with_parents(tags: Iterable[str]) -> set[str]:
    """The tags and every level above them (``a/b/c`` -> a, a/b, a/b/c): what a filter on ``a`` finds."""
    out: set[str] = set()
    for tag in tags:
        parts = tag.split("/")
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return out


def filter_tags(given: Iterable[Any], what: str = "search") -> tuple[str, ...]:
    """The tags a search filter names, canonical and each once; InvalidInputError says how to write one."""
    out: list[str] = []
    for raw in given:
        if not isinstance(raw, str):
            raise InvalidInputError(f"{what}: a tag must be text, got {raw!r}")
        text = raw.strip()
        if len(text) > MAX_TAG_CHARS:
            raise InvalidInputError(
                f"{what}: a tag of {len(text):,} characters is too long (at most {MAX_TAG_CHARS}); "
                "give the tag's name, e.g. project/reme"
            )
        if not text.removeprefix("#").strip("/"):
            raise InvalidInputError(f"{what}: a tag is empty; give a tag's name, e.g. project/reme (the # is optional)")
        if re.search(r"\s", text):
            raise InvalidInputError(
                f"{what}: tag {text!r} holds a space, which no tag does; give each tag on its own "
                "(tags: [a, b] or --tag a --tag b): a note must carry all of them"
            )
        tag = normalize(text)
        if tag is None:
            raise InvalidInputError(
                f"{what}: {text!r} is not a tag: tags hold letters, digits, _, - and / (nested: a/b), at least "
                "one of them not a digit; give each tag on its own (--tag a --tag b)"
            )
        out.append(tag)
    tags = tuple(dict.fromkeys(out))
    if len(tags) > MAX_FILTER_TAGS:
        raise InvalidInputError(f"{what}: {len(tags)} tags given, at most {MAX_FILTER_TAGS}; a note must carry all")
    return tags
