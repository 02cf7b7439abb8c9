"""The automatic dream, without a daemon: the SessionStart/SessionEnd hooks call
``maybe_start_auto_dream`` which, when no dream ran in the last ``config.dream_interval_hours``,
starts ``<python> -m reme_cc dream`` as a detached process and returns at once.

Standard library only (the hooks run with the system python3). The dream itself takes the
workspace-wide dream lock, so even two windows triggering at the same moment run one dream.
"""

from __future__ import annotations

import os
import time

from ..base.config import Config
from ..base.errors import LockedError
from ..base.workspace import Workspace

STAMP = "metadata/dream/last_started"  # touched by every dream run (manual or automatic)
TRIGGER_STAMP = "metadata/dream/auto_requested"  # touched when a hook spawns one (debounce)
DREAM_LOCK = "dream"


def last_dream_age_hours(ws: Workspace) -> float | None:
    """Hours since a dream last started or was requested; None when never."""
    times = []
    for rel in (STAMP, TRIGGER_STAMP):
        try:
            times.append((ws.root / rel).stat().st_mtime)
        except OSError:
            pass
    now = time.time()
    # A stamp from the future was written by a clock that was ahead: it says nothing about when the
    # last dream ran, and clamping it to "0 h ago" would hold the automatic dream off until that date.
    times = [t for t in times if t <= now + 300]
    return None if not times else max(0.0, (now - max(times)) / 3600.0)


def touch(ws: Workspace, rel: str) -> None:
    path = ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    os.utime(path, None)


def dream_running(ws: Workspace) -> bool:
    return ws.is_locked(DREAM_LOCK)


def maybe_start_auto_dream(ws: Workspace, config: Config) -> bool:
    """Start a detached dream if automatic dreams are on and none started in the configured interval.
    Returns True when one was started. Never raises for the expected cases (off, recent, running)."""
    if not config.auto_dream:
        return False
    age = last_dream_age_hours(ws)
    if age is not None and age < config.dream_interval_hours:
        return False
    try:
        # two hooks firing together: only the first one past this lock spawns
        with ws.lock("dream-trigger", timeout=0):
            age = last_dream_age_hours(ws)
            if (age is not None and age < config.dream_interval_hours) or dream_running(ws):
                return False
            touch(ws, TRIGGER_STAMP)
            _spawn(ws)
            return True
    except LockedError:
        return False


def _spawn(ws: Workspace) -> None:
    from ..base import bootstrap

    argv = bootstrap.reme_argv("--workspace", str(ws.root), "dream")
    bootstrap.spawn_detached(
        argv, ws.logs / "dream-auto.log", env={"REME_WORKSPACE": str(ws.root), "REME_AUTO_DREAM": "1"}
    )
