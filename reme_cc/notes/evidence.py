"""Evidence protection for digest nodes (issue #6 item 2), enforced in code rather than prompts.

A digest node's value is its traceability: the ``## Sources`` links back to daily/resource/session
material and its links to other digest nodes. So:

* an update of an EXISTING ``digest/`` file may not drop any wikilink target the file had;
* a full write of a ``digest/`` file (new or overwrite) must carry a ``## Sources`` section that links
  at least one ``daily/``, ``resource/`` or ``session/`` path.

``check_digest_evidence`` is the one place this rule lives; the note service (notes/store.py) calls
it for every way into ``digest/`` (write, edit, frontmatter changes, move).
"""

from __future__ import annotations


from ..base.errors import EvidenceError
from .text import headings, split_lines
from .wikilinks import parse_links

SOURCE_LAYERS = ("daily/", "resource/", "session/")
_SOURCES_TITLES = {"sources", "source", "来源"}


def is_digest_path(path: str) -> bool:
    return path.startswith("digest/")


def link_targets(text: str) -> set[str]:
    """Every wikilink target in ``text`` (frontmatter included; code spans excluded by the parser)."""
    return {link.target for link in parse_links(text)}


def sources_section(text: str) -> str | None:
    """The text of the first ``## Sources`` section (any heading level; until the next heading of the
    same or a higher level), or None when there is none. Headings inside code fences do not count."""
    lines = [line.rstrip("\r") for line in split_lines(text)]
    start = level = None
    for i, depth, title in headings(lines):
        if start is None:
            if title in _SOURCES_TITLES:
                start, level = i + 1, depth
        elif depth <= (level or 0):
            return "\n".join(lines[start:i])
    return None if start is None else "\n".join(lines[start:])


def check_digest_evidence(path: str, old_text: str | None, new_text: str, *, full_write: bool) -> None:
    """Raise EvidenceError if writing ``new_text`` to ``path`` would break the evidence rule.

    ``old_text`` is the current content (None for a new file); ``full_write`` is True for a whole-file
    write (which must carry Sources), False for a partial update (edit, frontmatter change).
    Paths outside ``digest/`` are not checked.
    """
    if not is_digest_path(path):
        return
    if old_text is not None:
        lost = sorted(link_targets(old_text) - link_targets(new_text))
        if lost:
            shown = ", ".join(f"[[{t}]]" for t in lost[:8]) + (" …" if len(lost) > 8 else "")
            raise EvidenceError(
                f"refused: this change to {path} would remove its evidence links {shown}; "
                "keep every existing Sources and digest link (add new ones, or explain a correction in the text)"
            )
    if full_write:
        section = sources_section(new_text)
        if section is None or not any(t.startswith(SOURCE_LAYERS) for t in link_targets(section)):
            raise EvidenceError(
                f"refused: digest node {path} needs a '## Sources' section linking at least one daily/, "
                "resource/ or session/ file, e.g. '## Sources\\n- [[daily/2026-06-20/card.md]]'"
            )
