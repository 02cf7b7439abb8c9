"""Vectors always catch up, politely: one detached, low-priority embedding worker per workspace.

Whatever process leaves chunks without a vector (a CLI write, the recorder, the dream, a resource
import, an MCP server indexing a hand edit) calls ``ensure_worker``: it starts
``reme-cc embed --worker`` in its own session unless one already holds ``metadata/embed.lock``. The
worker embeds the whole backlog at the lowest CPU and I/O priority with one compute thread, waits a
little for more, then exits and so releases the passage model: only one process per workspace holds
it, and only while there is work. Its rate goes to ``metadata/embed-progress.json``, from which
``status`` estimates the time left. A killed worker leaves nothing half-written (each batch is one
transaction); the next writer, or the server's periodic check, starts another.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from ..base.errors import ReMeError
from ..base.workspace import Workspace, atomic_write
from .catalog import index_log

if TYPE_CHECKING:  # pragma: no cover
    from ..base.config import Config
    from . import Index

LOCK = "embed.lock"
PROGRESS = "embed-progress.json"
SPAWN_GAP_S = 5.0  # a worker this process started is still importing: do not start another
IDLE_GRACE_S = 10.0  # the worker waits this long for new chunks before it exits
CHECK_EVERY_S = 30.0  # a server re-checks the backlog this often (a killed worker is replaced)
FAILURE_BACKOFF_S = 600.0  # after a worker failed, the next one starts no sooner than this
_spawned: dict[str, float] = {}


def lock(metadata: Path, timeout: float = 0.0) -> Any:
    from filelock import FileLock

    return FileLock(str(metadata / LOCK), timeout=timeout)


def worker_running(metadata: Path) -> bool:
    """True while some process embeds for this workspace (it holds the embed lock)."""
    from filelock import Timeout

    try:
        with lock(metadata):
            return False
    except Timeout:
        return True
    except OSError:
        return True  # cannot even open the lock file: nothing we could start would do better


def ensure_worker(ws: Workspace, config: Config) -> int | None:
    """Start the workspace's embedding worker unless one runs (or was just started). Returns its pid.
    It embeds with this process's embedding settings (which may not come from the environment)."""
    key = str(ws.metadata)
    if time.monotonic() - _spawned.get(key, -1e9) < SPAWN_GAP_S or worker_running(ws.metadata):
        return None
    failed = read_progress(ws.metadata).get("failed_at")
    if isinstance(failed, (int, float)) and time.time() - failed < FAILURE_BACKOFF_S:
        return None  # the last worker could not embed (model missing?): not every 30 s again
    from ..base.bootstrap import module_argv, spawn_detached
    from .polite import ONE_THREAD_ENV

    _spawned[key] = time.monotonic()
    # this process already runs in reme's environment: the same interpreter runs the worker
    argv = module_argv(sys.executable, "reme_cc", "--workspace", str(ws.root), "embed", "--worker")
    try:
        pid = spawn_detached(
            argv,
            ws.logs / "embed-worker.log",
            env={"REME_WORKSPACE": str(ws.root), **ONE_THREAD_ENV, **_embedding_env(config), **_metadata_env(ws)},
        )
    except OSError as exc:
        index_log(ws.metadata, f"cannot start the embedding worker ({exc}); `reme-cc embed` embeds in the foreground")
        return None
    return pid


METADATA_ENV = "REME_WORKER_METADATA"


def _metadata_env(ws: Workspace) -> dict[str, str]:
    """A team memory's worker must use the derived-state folder its parent uses (in the personal
    workspace), never the repository's metadata/: it is told so, the parent being trusted."""
    return {METADATA_ENV: str(ws.metadata)} if ws.metadata != ws.root / "metadata" else {METADATA_ENV: ""}


def _embedding_env(config: Config) -> dict[str, str]:
    keys = ("embedding", "embedding_model", "embedding_base_url", "embedding_api_key")
    return {f"REME_{k.upper()}": str(getattr(config, k)) for k in keys if getattr(config, k, None) not in (None, "")}


def read_progress(metadata: Path) -> dict[str, Any]:
    try:
        return json.loads((metadata / PROGRESS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def record_worker_failure(metadata: Path, exc: BaseException) -> None:
    """A worker that could not embed: recorded for `status` and the back-off, and logged."""
    _write_progress(metadata, {"pid": os.getpid(), "error": str(exc), "failed_at": time.time()})
    index_log(metadata, f"embedding worker failed: {exc}")


def _write_progress(metadata: Path, info: dict[str, Any]) -> None:
    try:
        atomic_write(metadata / PROGRESS, json.dumps(info).encode())
    except ReMeError:  # a full or read-only disk (atomic_write's one error): progress is informative only
        pass


def coverage(index: Index) -> dict[str, Any]:
    """Chunks with a vector, the backlog and an estimate of the time left (for `status`). ``carried``:
    the backlog's texts that search meanwhile finds by the vector their note's previous text lent them."""
    embedded, carried, total = index.vectors.coverage_with_loans()
    backlog = total - embedded
    prog = read_progress(index.metadata)
    rate = float(prog.get("rate") or 0.0)
    running = worker_running(index.metadata) if index.mode == "rw" else False
    out: dict[str, Any] = {
        "embedded": embedded,
        "total": total,
        "backlog": backlog,
        "carried": carried,
        "error": prog.get("error"),
        "percent": round(100.0 * embedded / total, 1) if total else 100.0,
        "worker": {"running": running, "pid": prog.get("pid") if running else None},
        "rate_chunks_per_s": round(rate, 2) if rate else None,
        "eta_s": round(backlog / rate) if backlog and rate else (0 if not backlog else None),
    }
    return out


def describe(cov: dict[str, Any]) -> str:
    """One line: "vectors for 62 % of 49,027 chunks; 18,700 left, about 1 h 40 min (worker pid 1234);
    15,000 of them carry their previous text's vector until re-embedded"."""
    if not cov["total"]:
        return "no chunks to embed yet: the workspace holds no notes"
    line = f"vectors for {cov['percent']:g} % of {cov['total']:,} chunks"
    if cov["backlog"]:
        line += f"; {cov['backlog']:,} left"
        if cov.get("eta_s"):
            line += f", about {duration(cov['eta_s'])} at {cov['rate_chunks_per_s']:g} chunks/s"
        w = cov.get("worker") or {}
        line += (
            f" (worker pid {w['pid']})"
            if w.get("running") and w.get("pid")
            else (" (embedding)" if w.get("running") else " (no worker running: `reme-cc embed`)")
        )
    if cov.get("carried"):
        line += (
            f"; {cov['carried']:,} of them carry their previous text's vector until re-embedded"
            " (search uses it meanwhile)"
        )
    if cov.get("error"):
        line += f"; the last worker failed: {cov['error']}"
    return line


def duration(seconds: float) -> str:
    s = int(seconds)
    if s < 90:
        return f"{s} s"
    if s < 5400:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {round((s % 3600) / 60)} min"


def run(index: Index, *, worker: bool, progress: Callable[[int, int], None] | None = None) -> int:
    """Embed the whole backlog while holding the embed lock; returns chunks embedded.

    ``worker``: the detached worker (lowest priority, exits after IDLE_GRACE_S without new chunks;
    leaves at once when another process embeds). Otherwise the foreground `reme-cc embed`: waits for a
    running worker, following its progress, then embeds what is left."""
    from filelock import Timeout

    metadata = index.metadata
    if worker:
        from .polite import lower_priority

        lower_priority()
    held = lock(metadata, timeout=2.0 if worker else 0.0)
    while True:
        try:
            held.acquire()
            break
        except Timeout:
            if worker:
                return 0  # another worker (or `reme-cc embed`) is at it
            if progress:
                embedded, total = index.vector_coverage()
                progress(embedded, total)
            time.sleep(1.0)
    done = 0
    started = time.monotonic()
    worked = 0.0
    try:
        idle_since = None
        while True:

            def report(n: int) -> None:
                nonlocal done
                done += n
                rate = done / max(time.monotonic() - started, 1e-3)
                _write_progress(
                    metadata,
                    {
                        "pid": os.getpid(),
                        "rate": rate,
                        "done": done,
                        "updated": time.time(),
                        "started": time.time() - (time.monotonic() - started),
                    },
                )
                if progress:
                    embedded, total = index.vector_coverage()
                    progress(embedded, total)

            n = index.embed_backlog(report)
            if n:
                idle_since = None
                worked = time.monotonic() - started
                continue
            if not worker:
                break
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= IDLE_GRACE_S:
                break
            time.sleep(1.0)
        if done:  # before the lock goes: whoever sees the worker gone sees its line
            index_log(
                metadata, f"embedded {done} chunks in {worked:.0f} s" + (" (background worker)" if worker else "")
            )
    finally:
        held.release()
    return done
