"""The recording protocol, in one place: how the hooks ask for a recording of a session and how the
recorder (auto_memory.py) takes it.

* the lock ``metadata/locks/record-<ID>.lock`` (flock) is held by the one recorder of a session;
* the dirty flag ``metadata/locks/record-<ID>.dirty`` is a request for a recording: the hooks set it
  before they start a recorder, a recorder that finds the lock held sets it, and the recorder that
  holds the lock clears it before each round and runs another one while it is set again;
* the cursor ``metadata/auto_memory/<kind>-<ID>.json`` names the last recorded entry;
* the card target: the one card a recorder run may write, bound to its ``daily_write`` tool.

Standard library only: the hooks import it with the system ``python3``.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from ..base.errors import LockedError, NotFoundError
from ..base.workspace import Workspace

if TYPE_CHECKING:  # pragma: no cover
    from ..notes.store import NoteStore


def lock_name(session_id: str) -> str:
    return f"record-{session_id}"


def dirty_flag(ws: Workspace, session_id: str) -> Path:
    """File that tells a running recorder of the session that more conversation arrived."""
    return ws.metadata / "locks" / f"{lock_name(session_id)}.dirty"


def request(ws: Workspace, session_id: str) -> None:
    """Ask for a recording: the recorder holding the lock picks the flag up before it exits."""
    flag = dirty_flag(ws, session_id)
    flag.parent.mkdir(parents=True, exist_ok=True)
    flag.write_text(f"{time.time():.3f}\n", encoding="utf-8")


def running(ws: Workspace, session_id: str) -> bool:
    """True while a recorder of the session holds its lock."""
    return ws.is_locked(lock_name(session_id))


def record_rounds(ws: Workspace, session_id: str, round_: Callable[[], bool]) -> bool:
    """Be the session's one recorder: under its lock, run ``round_`` (True: recorded, False: failed,
    stop) until no request is left. False when another recorder holds the lock: the request is
    left to it (flag set)."""
    flag = dirty_flag(ws, session_id)
    while True:
        try:
            held = ws.lock(lock_name(session_id), timeout=0)
            held.__enter__()
        except LockedError:
            request(ws, session_id)
            return False
        try:
            while True:
                with contextlib.suppress(FileNotFoundError):
                    flag.unlink()
                ok = round_()
                if not ok or not flag.exists():
                    break
        finally:
            held.__exit__(None, None, None)
        # a request may have set the flag between our last check and the unlock: look once more
        if not ok or not flag.exists():
            return True


# ---- the cursor ---------------------------------------------------------------------------------


def cursor_path(kind: str, session_id: str) -> str:
    return f"metadata/auto_memory/{kind}-{session_id}.json"


def load_cursor(ws: Workspace, kind: str, session_id: str) -> dict[str, Any]:
    try:
        data = json.loads(ws.read_bytes(cursor_path(kind, session_id)))
        return data if isinstance(data, dict) else {}
    except (NotFoundError, ValueError):
        return {}


def save_cursor(ws: Workspace, kind: str, session_id: str, cursor: dict[str, Any]) -> None:
    ws.write_text(cursor_path(kind, session_id), json.dumps(cursor, indent=2, sort_keys=True) + "\n")


def start_line(entries: list[tuple[int, dict[str, Any]]], cursor: dict[str, Any]) -> int:
    """First line not yet recorded. The cursor names the last recorded entry by uuid (and its line
    as a hint); if the copy was rewritten and the uuid is gone, fall back to its timestamp."""
    uid, hint = cursor.get("uuid"), int(cursor.get("line", -1))
    if not uid and hint < 0:
        return 0
    if uid:
        for line, entry in entries:
            if line == hint and entry.get("uuid") == uid:
                return hint + 1
        for line, entry in entries:
            if entry.get("uuid") == uid:
                return line + 1
    stamp = str(cursor.get("timestamp") or "")
    for line, entry in entries:
        if str(entry.get("timestamp") or "") > stamp:
            return line
    return entries[-1][0] + 1 if entries else 0


def advance(
    ws: Workspace,
    kind: str,
    session_id: str,
    entries: list[tuple[int, dict[str, Any]]],
    line: int,
    cursor: dict[str, Any],
    recorded: bool,
) -> None:
    """Move the cursor to ``line`` (once what is before it is safely recorded)."""
    last = next((e for ln, e in reversed(entries) if ln <= line), None)
    if last is None:
        return
    cursor.update(
        {"line": line, "uuid": last.get("uuid"), "timestamp": last.get("timestamp"), "updated_at": time.time()}
    )
    if recorded:
        cursor["recorded_at"] = time.time()
    save_cursor(ws, kind, session_id, cursor)


# ---- the card target ----------------------------------------------------------------------------


@dataclass
class CardTarget:
    """The one card a recorder run may write: the runner binds it to the run's ``daily_write`` tool,
    which writes through ``notes`` (the run's note service, whose index updates wait for its end)."""

    date: str
    session_id: str
    source: str  # workspace path of the conversation copy
    notes: NoteStore | None = None
    written: list[str] = field(default_factory=list)  # card paths written by this run
    project: dict[str, str] = field(default_factory=dict)  # project/project_root/cwd from the transcript
