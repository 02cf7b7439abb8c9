"""Give cards recorded before projects existed their ``project``/``project_root``/``cwd``.

Run by ``reme-cc reindex`` (and the ``reindex`` tool) before the rebuild. A card's working directory
comes from its ``source_conversation`` copy, whose entries keep ``cwd``; only those three keys are
added (merge on offsets: every other line of the card stays byte for byte) through the note service, and a card whose copy is gone, carries no ``cwd`` (``session/dialog``
conversations) or has broken frontmatter is left as it is and counted."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..base.workspace import DATE_RE, Workspace
from .context import Context
from .project import cwd_of_entries, detect

CARD_KEYS = ("project", "project_root", "cwd")


@dataclass
class BackfillReport:
    filled: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why

    def text(self) -> str:
        out = f"projects: {len(self.filled)} cards given their project"
        return out + (f", {len(self.skipped)} left without (no conversation copy with a cwd)" if self.skipped else "")


def _cards(ws: Workspace) -> list[str]:
    root = ws.root / "daily"
    if not root.is_dir():
        return []
    return sorted(
        ws.relpath(p)
        for day in root.iterdir()
        if day.is_dir() and DATE_RE.match(day.name)
        for p in day.glob("*.md")
        if p.is_file() and not p.is_symlink()
    )


def _conversation_cwd(ws: Workspace, link: object) -> str | None:
    from ..notes.wikilinks import parse_links

    links = parse_links(link) if isinstance(link, str) else []
    if not links or not links[0].target.startswith("session/"):
        return None
    try:
        data = ws.read_bytes(links[0].target)
    except Exception:  # noqa: BLE001 - a missing or unreadable copy: the card stays as it is
        return None
    entries = []
    for line in data.splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return cwd_of_entries(e for e in entries if isinstance(e, dict))


def backfill_projects(ctx: Context) -> BackfillReport:
    """Through the note service (one notes lock, atomic write, index update)."""
    from ..notes.frontmatter import parse_note

    ws = ctx.workspace
    report = BackfillReport()
    with ctx.notes.lock():
        notes = {}
        known: dict[str, str] = {}
        for rel in _cards(ws):
            text = ws.read_bytes(rel).decode("utf-8", errors="replace")
            note = parse_note(text)
            notes[rel] = (text, note)
            name, root = note.meta.get("project"), note.meta.get("project_root")
            if isinstance(name, str) and isinstance(root, str):
                known.setdefault(name, root)  # names already given stay; newcomers are qualified
        for rel, (_text, note) in notes.items():
            if note.meta.get("project") or "source_conversation" not in note.meta:
                continue
            if note.error:
                report.skipped[rel] = f"broken frontmatter ({note.error})"
                continue
            cwd = _conversation_cwd(ws, note.meta.get("source_conversation"))
            if cwd is None:
                report.skipped[rel] = "its conversation copy is missing or has no cwd"
                continue
            project = detect(cwd, known)
            known.setdefault(project.name, project.root)
            ctx.notes.update_frontmatter(rel, dict(project.frontmatter()))
            report.filled.append(rel)
    return report
