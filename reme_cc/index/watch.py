"""Freshness without walking: which files changed, learnt from the operating system (watchfiles:
inotify, FSEvents, ReadDirectoryChangesW) while a server runs.

Before each query the Index asks ``take()``: while notifications work it gets the few paths that
changed since the last query instead of re-stat'ing the whole workspace (72-140 ms at 10k files).
It falls back to the walk when notifications are unavailable (no watcher, watch limit reached:
inotify ``max_user_watches``), when they overflow (more than ``BURST_MAX`` changes pending, e.g. a
`git checkout`), or when the watcher thread dies; on network and FUSE filesystems, where
notifications miss other machines' writes, a background walk every ``REMOTE_CHECK_S`` seconds adds
what they missed (``LOCAL_CHECK_S`` elsewhere, a safety net against lost events). Every fallback is
logged once and shown by ``status``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from ..base.workspace import own_stat
from .sync import refused_name

BURST_MAX = 2000  # pending paths; more: one walk is cheaper (and loses nothing)
LOCAL_CHECK_S = 300.0  # background walk as a safety net on local filesystems
REMOTE_CHECK_S = 10.0  # the cheap periodic check for network/FUSE filesystems
DEBOUNCE_MS = 150  # group the events of one save (temp file + rename) into one batch
REMOTE_FS = (
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "afs",
    "ceph",
    "glusterfs",
    "lustre",
    "gpfs",
    "davfs",
    "virtiofs",
    "fuse",
)


def filesystem_type(path: Path, mountinfo: str | None = None) -> str:
    """The type of the filesystem ``path`` is on (Linux /proc/self/mountinfo; "" when unknown)."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
    target = os.path.realpath(path)
    best, kind = "", ""
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        parts = left.split()
        if len(parts) < 5 or not right:
            continue
        point = parts[4].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, right.split()[0]
    return kind


def is_remote(fstype: str) -> bool:
    return fstype.startswith(REMOTE_FS)


@dataclass
class Changes:
    paths: set[str] = field(default_factory=set)  # workspace paths (files or folders) that changed
    walk: bool = False  # unknown what changed: walk everything now
    disk: dict[str, tuple[int, int]] | None = None  # a background walk's result to diff with the catalog


class Watcher:
    """One thread per Index that collects changed paths under the walked layers."""

    def __init__(
        self,
        root: Path,
        layers: tuple[str, ...],
        log: Callable[[str], None],
        walk: Callable[[Path], dict[str, tuple[int, int]]],
    ):
        self.root = root
        self.layers = layers
        self._log = log
        self._walk = walk
        self.fstype = filesystem_type(root)
        self.remote = is_remote(self.fstype)
        self.mode = "walk"  # notify | walk
        self.reason: str | None = "not started"
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._overflow = False
        self._disk: dict[str, tuple[int, int]] | None = None
        self._stop = threading.Event()
        self._started = threading.Event()
        self._thread: threading.Thread | None = None
        self.events = 0

    def start(self, timeout: float = 0.0) -> bool:
        """Start watching (waits up to ``timeout`` for the watches to be in place); True once
        notifications are on. Until then ``take`` says "walk", so nothing is missed meanwhile."""
        if self._thread is None:
            self.reason = "starting"
            self._thread = threading.Thread(target=self._run, name="reme-watch", daemon=True)
            self._thread.start()
        self._started.wait(timeout)
        return self.mode == "notify"

    @property
    def starting(self) -> bool:
        """Started, watches not yet in place: its first walk (which follows them) is under way."""
        return self._thread is not None and not self._started.is_set()

    def take(self) -> Changes:
        """What changed since the last call."""
        with self._lock:
            if self.mode != "notify" or self._overflow:
                self._overflow = False
                self._paths = set()
                self._disk = None
                return Changes(walk=True)
            out = Changes(self._paths, False, self._disk)
            self._paths, self._disk = set(), None
            return out

    def info(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "reason": self.reason,
            "filesystem": self.fstype or "unknown",
            "periodic_check_s": REMOTE_CHECK_S if self.remote else LOCAL_CHECK_S,
            "events": self.events,
        }

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # ---- the thread --------------------------------------------------------------------------------
    def _fall_back(self, why: str) -> None:
        with self._lock:
            self.mode, self.reason = "walk", why
        self._log(f"file notifications off ({why}): every query re-checks the files (stat walk, at most once a second)")
        self._started.set()

    def _run(self) -> None:
        from .polite import lower_priority

        lower_priority()
        try:
            from watchfiles._rust_notify import RustNotify  # the documented low-level API of watchfiles

            # a layer linked elsewhere is not the workspace's own: neither walked nor watched
            notify = RustNotify(
                [str(self.root / l) for l in self.layers if own_stat(self.root, l) is not None],
                False,
                False,
                300,
                True,
                True,
            )
        except Exception as exc:  # noqa: BLE001 - no library, watch limit reached, unsupported platform
            self._fall_back(_why(exc))
            return
        # one walk once the watches are in place: what changed before them reaches the next query as a diff
        disk = self._walk(self.root)
        with self._lock:
            self.mode = "notify"
            self._disk = disk
            self.reason = (
                (f"{self.fstype} filesystem: other machines' writes are found by a walk every {REMOTE_CHECK_S:.0f} s")
                if self.remote
                else None
            )
        self._started.set()
        logging.getLogger("reme_cc.index").info("file notifications on for %s (%s)", self.root, self.fstype or "?")
        period = REMOTE_CHECK_S if self.remote else LOCAL_CHECK_S
        last_walk = time.monotonic()
        prefix = str(self.root).rstrip(os.sep) + os.sep
        try:
            while not self._stop.is_set():
                got = notify.watch(DEBOUNCE_MS, 20, 1000, self._stop)
                if got == "stop":
                    break
                if isinstance(got, set):
                    rels = {r for r in (_rel(p, prefix) for _, p in got) if r is not None}
                    with self._lock:
                        self.events += len(got)
                        self._paths |= rels
                        if len(self._paths) > BURST_MAX:
                            self._overflow = True  # the next query walks instead
                            self._paths = set()
                if time.monotonic() - last_walk >= period:
                    disk = self._walk(self.root)
                    last_walk = time.monotonic()
                    with self._lock:
                        self._disk = disk
        except Exception as exc:  # noqa: BLE001 - e.g. the watch limit reached for a new folder
            self._fall_back(_why(exc))
        finally:
            notify.close()


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if "limit" in text.lower():
        return f"{text}: raise fs.inotify.max_user_watches (sysctl) to get notifications back"
    return text


def _rel(path: str, prefix: str) -> str | None:
    """Workspace path of a notified path, None when it is not an indexed file (hidden, outside)."""
    if not path.startswith(prefix):
        return None
    rel = path[len(prefix) :].replace(os.sep, "/")
    if any(part.startswith(".") for part in rel.split("/")):
        return None  # temp files of atomic writes, .obsidian/, .git/
    if refused_name(rel):
        return None  # a name the index refuses (control characters, not UTF-8): the walks report it
    return rel
