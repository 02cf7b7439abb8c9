"""Contradictions the dream could not resolve from evidence (issue 26, 2): same subject, different
values, nothing saying which holds now. The dream records them instead of picking one; ``status``
lists them until they are resolved.

``metadata/dream/contradictions.json`` (derived state, written by the dream only)::

    {"contradictions": [{"subject": …, "values": […], "node": "digest/…" | null, "sources": [...],
                         "projects": [...], "date": …, "run": …, "node_sha256": … | null}]}

A contradiction is resolved — and dropped by the next dream — when its node changed since it was
recorded (a later dream corrected it, or the user edited it), when its node is gone, or, for one
without a node, when a later dream's unit lands all of its sources in a node. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..base.errors import ReMeError
from ..base.workspace import Workspace

FILE = "metadata/dream/contradictions.json"
MAX_KEPT = 200  # the oldest fall off: status shows what is open, not an archive


def load(ws: Workspace) -> list[dict[str, Any]]:
    try:
        data = json.loads((ws.metadata / "dream" / "contradictions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = data.get("contradictions") if isinstance(data, dict) else None
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def save(ws: Workspace, items: list[dict[str, Any]]) -> None:
    ws.write_text(FILE, json.dumps({"contradictions": items[-MAX_KEPT:]}, ensure_ascii=False, indent=1))


def node_hash(ws: Workspace, node: str | None) -> str | None:
    if not node:
        return None
    try:
        return hashlib.sha256(ws.read_bytes(node)).hexdigest()
    except ReMeError:
        return None


def entry(
    ws: Workspace,
    *,
    subject: str,
    values: list[str],
    node: str | None,
    sources: list[str],
    projects: list[str],
    date: str,
    run: str,
) -> dict[str, Any]:
    return {
        "subject": subject,
        "values": values,
        "node": node,
        "sources": sources,
        "projects": projects,
        "date": date,
        "run": run,
        "node_sha256": node_hash(ws, node),
    }


def open_ones(ws: Workspace, items: list[dict[str, Any]], integrated: set[str] | None = None) -> list[dict[str, Any]]:
    """The contradictions still open: node unchanged since recorded; a node-less one until a dream
    integrates all its sources into a node (``integrated``: the sources a dream's units landed)."""
    out = []
    for c in items:
        node = c.get("node")
        if node:
            if node_hash(ws, node) == c.get("node_sha256"):
                out.append(c)
        elif integrated is None or not set(c.get("sources") or []) <= integrated:
            out.append(c)
    return out
