"""Pinned notes: ``pinned: true`` in a note's frontmatter (``reme-cc pin <path>`` sets it). A pinned
note is always a candidate for the session brief and per-prompt recall, and a dream may add to it but
never drops a line of it, unpins, moves or deletes it (memory/dream.py). Standard library only: the
hooks' brief reads it."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

PINNED_KEY = "pinned"


def is_pinned(meta: Mapping[str, Any] | None) -> bool:
    """The one rule: a note's frontmatter (parsed, or the index's ``extra`` JSON) says ``pinned: true``
    (YAML's true/yes, or the same words as a string)."""
    value = meta.get(PINNED_KEY) if isinstance(meta, Mapping) else None
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes"))


def set_pinned(notes: Any, rel: str, pinned: bool) -> Any:
    """Pin or unpin an existing note through the note service (``notes``: a NoteStore); other
    frontmatter lines stay verbatim. Returns the Written."""
    from ..base.errors import InvalidInputError, NotFoundError

    norm = notes.content_path(rel)
    if not norm.endswith(".md"):
        raise InvalidInputError(f"{norm} is not a Markdown note; only notes (.md) can be pinned")
    if not (notes.ws.root / norm).is_file():
        raise NotFoundError(f"{norm} does not exist; give the path of a note, e.g. digest/wiki/<name>.md")
    if pinned:
        written, _ = notes.update_frontmatter(norm, {PINNED_KEY: True})
    else:
        written, _ = notes.update_frontmatter(norm, {}, delete=[PINNED_KEY])
    return written


def dropped_lines(old_body: str, new_text: str) -> list[str]:
    """The non-blank lines of ``old_body`` that ``new_text`` no longer has (compared stripped)."""
    now = {line.strip() for line in new_text.splitlines()}
    return [line for line in old_body.splitlines() if line.strip() and line.strip() not in now]
