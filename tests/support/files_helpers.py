"""Helpers for the file/daily/CLI tests: run a tool through the registry, snapshot a workspace."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any


def conversational_uuids(path: Path) -> list[str]:
    """What a transcript copy must hold: the uuid of every user/assistant line with a message."""
    import json

    out = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("type") in ("user", "assistant") and isinstance(obj.get("message"), dict):
            out.append(obj["uuid"])
    return out


def note(name: str, desc: str, body: str) -> str:
    """A Markdown note with name/description frontmatter."""
    return f"---\nname: {name}\ndescription: {desc}\n---\n{body}\n"


def run(ctx: Any, tool_name: str, /, **arguments: Any) -> Any:
    from reme_cc.tools import all_tools

    return all_tools()[tool_name].run(ctx, arguments)


def put(ws: Any, rel: str, text: str | bytes) -> Path:
    """Write a fixture file directly (bypassing the tools), as a user's editor would."""
    path = ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def snapshot(root: Path, *, skip_metadata: bool = True) -> dict[str, str]:
    """{relative path: sha256} of every file (metadata/ skipped: the index may change there)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not (skip_metadata and rel.startswith("metadata/")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


DIGEST = """---
name: Docs style
description: prefers direct docs
kind: preference
---
Related: [[digest/procedure/write-docs.md]].

## Sources
- [[daily/2026-06-20/style.md#L3]]
"""
