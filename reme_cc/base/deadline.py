"""A call with a deadline, standard library only: the hooks' work must never hold up a prompt or a
session start, whatever a slow disk or a locked database does."""

from __future__ import annotations

import threading
from typing import Any

from .errors import ReMeError


def call_with_timeout(fn: Any, arg: Any, timeout: float) -> Any:
    """Run ``fn(arg)`` in a daemon thread; give up after ``timeout`` seconds (ReMeError; the thread dies
    with the hook's process)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(arg)
        except Exception as exc:  # noqa: BLE001 - raised again in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(max(0.0, timeout))
    if t.is_alive():
        raise ReMeError(f"{getattr(fn, '__name__', 'call')} took longer than {timeout:.2f}s; skipped")
    if "error" in box:
        raise box["error"]
    return box.get("value")
