"""Helpers for the recorder/agent tests: fake-API environments for both backends and session copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from support.claude_cli import sdk_env

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "projects" / "-home-user-project"


def fixture(name: str) -> Path:
    """A real Claude Code transcript (captured from the real CLI, see tests/fixtures/claude_code/README.md)."""
    path = FIXTURES / name
    if not path.exists():
        raise FileNotFoundError(path)
    return path


def use_backend(monkeypatch: Any, backend: str, api: Any, home: Path) -> None:
    """Point both backends at the fake API with a temp HOME (the SDK child inherits our env)."""
    for k, v in sdk_env(api, home).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("REME_AGENT_BACKEND", backend)
    monkeypatch.setenv("REME_AGENT_RETRIES", "1")


def tool_name(backend: str, name: str) -> str:
    return f"mcp__reme__{name}" if backend == "sdk" else name


def write_copy(ws: Any, session_id: str, entries: list[dict[str, Any]], kind: str = "claude_code") -> Path:
    path = ws.root / "session" / kind / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for e in entries:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
    return path


def entry(role: str, content: Any, ts: str, uid: str, **extra: Any) -> dict[str, Any]:
    return {"type": role, "uuid": uid, "timestamp": ts, "message": {"role": role, "content": content}, **extra}


def copy_fixture(ws: Any, name: str, session_id: str) -> Path:
    """Copy a real transcript into the workspace through the hooks' own filter (transcript.py)."""
    from reme_cc.memory.transcript import copy_session

    src = fixture(name)
    tmp = ws.root.parent / "src" / f"{session_id}.jsonl"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, tmp)
    copy_session(ws, session_id, tmp)
    return ws.root / "session" / "claude_code" / f"{session_id}.jsonl"
