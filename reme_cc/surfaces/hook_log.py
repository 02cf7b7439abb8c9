"""metadata/logs/hooks.log: one line per hook run (and per prompt a server answered for the hook)."""

from __future__ import annotations

import os

from ..base.workspace import Workspace

LOG_MAX_BYTES = 1_000_000


def log(ws: Workspace | None, event: str, message: str, *, tb: bool = False) -> None:
    """One line in metadata/logs/hooks.log (rotated at ~1 MB). Never raises."""
    try:
        if ws is None:
            return
        line = f"pid={os.getpid()} {event}: {message}"
        if tb:
            import traceback

            line += "\n" + "".join("    " + ln for ln in traceback.format_exc().splitlines(True)).rstrip("\n")
        ws.append_log("hooks.log", line, rotate_at=LOG_MAX_BYTES)
    except Exception:  # noqa: BLE001
        pass
