"""Claude Code hooks: Stop, SessionEnd, SessionStart.

Standard library only: ``hooks/reme_hook.py`` runs this with the system ``python3`` (often before
the plugin's own environment exists), so a hook never waits for an install.

Rules every hook follows: read the JSON payload from stdin; never print to stdout (except the
SessionStart brief, which Claude Code adds to the model's context); log to
``<workspace>/metadata/logs/hooks.log``; always exit 0; exit at once inside our own memory agents'
sessions (``REME_INTERNAL_AGENT=1``). Anything slow runs in a detached process (new session, stdio to
a log file) so the CLI's hook timeout (1.5 s for a plugin's SessionEnd) can never cut it short.

Stop:        copy new transcript entries; start a recording when enough new conversation waits
             (``record_min_messages`` messages or ``record_min_minutes`` since the last recording).
SessionEnd:  copy the rest; always ask for a recording when the session has conversation (the
             recorder's own cursor makes a no-op run cheap); maybe start the automatic dream.
SessionStart: print the memory brief as additionalContext; maybe start the automatic dream.
``record=false`` turns all of it off: no copy, no recording (nothing of the session is stored).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..base.config import Config
from ..base.deadline import call_with_timeout
from ..base.errors import LockedError, ReMeError
from ..base.workspace import Workspace
from .hook_log import log as _log

EVENTS = ("Stop", "SessionEnd", "SessionStart", "UserPromptSubmit", "PreCompact")
INTERNAL_ENV = "REME_INTERNAL_AGENT"  # set by the memory agents' runner in their SDK sessions
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the plugin root (holds reme_cc/)

# Source bytes a hook copies inline. Above this the whole job goes to a detached worker, which keeps
# Stop within its budget even when a 20 MB transcript is seen for the first time.
INLINE_COPY_BYTES = 4 * 1024 * 1024
STOP_LOCK_WAIT = 0.05  # Stop never queues behind another copier: the busy one gets a worker instead
BRIEF_TIMEOUT = 0.8
COMPACT_WAIT_S = 15.0  # PreCompact waits this long at most for the recorder to bring the card up to date
_STDIN_MAX = 4 * 1024 * 1024


# ---- entry point ---------------------------------------------------------------------------------


def main(
    argv: list[str] | None = None,
    *,
    raw: bytes | None = None,
    server_note: str = "",
    deadline: float | None = None,
) -> int:
    """``reme_hook.py <event>``: always returns 0; stdout only carries what Claude Code adds to the
    model's context. UserPromptSubmit comes here from its fast path (prompt_hook.py) when no server
    answered: ``raw`` is the payload it read, ``server_note`` why no server answered, ``deadline`` the
    seconds left."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get(INTERNAL_ENV) == "1":
        return 0
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # a stray print anywhere below must not reach Claude Code
    ws: Workspace | None = None
    try:
        if argv and argv[0] == "_worker":
            return _worker(argv[1:])
        event = argv[0] if argv else ""
        payload = _read_payload(raw)
        event = event or str(payload.get("hook_event_name") or "")
        ws = Workspace()
        output = handle(event, payload, ws, server_note=server_note, deadline=deadline)
        if output:
            real_stdout.write(output)
            real_stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - a hook must never fail the user's session
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return 0
        _log(ws, "error", f"{type(exc).__name__}: {exc}", tb=not isinstance(exc, ReMeError))
    finally:
        sys.stdout = real_stdout
    return 0


def _read_payload(raw: bytes | None = None) -> dict[str, Any]:
    if raw is None:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        raw = sys.stdin.buffer.read(_STDIN_MAX)
    try:
        data = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        raise ReMeError(f"hook payload is not JSON ({len(raw)} bytes); ignored") from None
    if not isinstance(data, dict):
        raise ReMeError("hook payload is not a JSON object; ignored")
    return data


def handle(
    event: str, payload: dict[str, Any], ws: Workspace, *, server_note: str = "", deadline: float | None = None
) -> str:
    """Run one hook event; returns what to print on stdout ("" almost always)."""
    if event not in EVENTS:
        _log(ws, "skip", f"unhandled event {event!r}")
        return ""
    t0 = time.monotonic()
    try:
        config = Config.load(ws.root)
    except ReMeError as exc:
        _log(ws, event, f"config error, doing nothing: {exc}")
        return ""
    out = ""
    note = ""
    if event == "UserPromptSubmit":
        out, note = _prompt_recall(ws, config, payload, server_note, deadline)
    elif event == "SessionStart":
        _export_for_bash(ws)
        out = _session_start(ws, config, payload)
        _maybe_auto_dream(ws, config)
    elif not config.record:
        note = "record=false: nothing copied"
    else:
        note = _copy_and_trigger(ws, config, event, payload, inline=True)
        if event == "SessionEnd":
            _maybe_auto_dream(ws, config)
        elif event == "PreCompact":
            note += "; " + _wait_for_card(ws, payload)
    _log(ws, event, f"{note} ({(time.monotonic() - t0) * 1000:.0f} ms)".strip())
    return out


# ---- Stop / SessionEnd ------------------------------------------------------------------------------


def _session_args(payload: dict[str, Any]) -> tuple[str, str]:
    from ..memory.transcript import check_session_id

    sid = check_session_id(payload.get("session_id"))
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ReMeError(f"hook payload for session {sid} has no transcript_path; nothing to copy")
    return sid, os.path.expanduser(path)


def _copy_and_trigger(ws: Workspace, config: Config, event: str, payload: dict[str, Any], *, inline: bool) -> str:
    from ..memory.transcript import copy_session, pending_bytes

    sid, path = _session_args(payload)
    if inline:
        waiting = pending_bytes(ws, sid, path)
        if waiting > INLINE_COPY_BYTES:
            _spawn_worker(ws, event, sid, path)
            return f"session {sid}: {waiting} bytes waiting, handed to a detached worker"
    try:
        wait = STOP_LOCK_WAIT if inline and event == "Stop" else (0.5 if inline else 120.0)
        result = copy_session(ws, sid, path, lock_timeout=wait)
    except LockedError:
        if inline:
            _spawn_worker(ws, event, sid, path)
            return f"session {sid}: copy busy, handed to a detached worker"
        raise
    note = f"session {sid}: +{result.entries} entries, +{result.messages} messages"
    if result.rescanned:
        note += f", re-scanned {len(result.rescanned)} replaced/truncated source(s)"
    if _should_record(ws, config, event, sid):
        note += "; " + start_recording(ws, config, sid)
    return note


def _should_record(ws: Workspace, config: Config, event: str, sid: str, now: float | None = None) -> bool:
    from ..memory.transcript import load_state

    state = load_state(ws, sid)
    now = time.time() if now is None else now
    pending = int(state.get("pending_messages", 0))
    if event in ("SessionEnd", "PreCompact"):
        # Always flush: the recorder knows (its cursor) what is left, including a failed earlier run.
        return int(state.get("total_messages", 0)) > 0
    if pending <= 0:
        return False
    if pending >= config.record_min_messages:
        return True
    since = float(state.get("last_record_at") or state.get("pending_since") or now)
    if since > now + 300:  # stamped by a clock that was ahead: unknown age, do not wait for that date
        return True
    return now - since >= config.record_min_minutes * 60


def start_recording(ws: Workspace, config: Config, sid: str) -> str:
    """Ask for a recording of ``sid`` (memory/recording.py), and start the recorder unless one runs."""
    from ..memory import recording
    from ..memory.transcript import load_state, save_state

    recording.request(ws, sid)
    with ws.lock(f"transcript-{sid}", timeout=2.0):
        state = load_state(ws, sid)
        state["pending_messages"] = 0
        state.pop("pending_since", None)
        state["last_record_at"] = time.time()
        state["record_requests"] = int(state.get("record_requests", 0)) + 1
        save_state(ws, sid, state)
    if recording.running(ws, sid):
        return "recorder already running: marked dirty"
    pid = spawn_recorder(ws, sid)
    return f"recorder started (pid {pid})"


def recorder_command(ws: Workspace, sid: str) -> list[str]:
    """The detached recorder's argv (``REME_PYTHON`` wins, else the plugin env, built first if missing)."""
    from ..base import bootstrap

    return bootstrap.reme_argv("auto-memory", "--session-id", sid, "--workspace", str(ws.root))


def spawn_recorder(ws: Workspace, sid: str) -> int:
    return spawn_detached(recorder_command(ws, sid), ws.logs / "auto-memory.log", ws)


def _self_command() -> list[str]:
    # Works from a plugin checkout and from an installed package alike.
    code = "import sys; sys.path.insert(0, sys.argv[1]); from reme_cc.surfaces.hooks import main; sys.exit(main(sys.argv[2:]))"
    from ..base.bootstrap import SAFE_PATH

    return [sys.executable or "python3", SAFE_PATH, "-S", "-c", code, str(PACKAGE_ROOT)]


def _spawn_worker(ws: Workspace, event: str, sid: str, path: str) -> int:
    return spawn_detached(
        [*_self_command(), "_worker", event, sid, path, str(ws.root)], ws.logs / "hooks-worker.log", ws
    )


def _worker(args: list[str]) -> int:
    """Detached: the full copy (no byte cap, waits for the lock) + the recording trigger."""
    event, sid, path, root = args[:4]
    ws = Workspace(root)
    try:
        config = Config.load(ws.root)
        if config.record:
            note = _copy_and_trigger(ws, config, event, {"session_id": sid, "transcript_path": path}, inline=False)
            _log(ws, f"{event}-worker", note)
    except Exception as exc:  # noqa: BLE001
        _log(ws, f"{event}-worker", f"{type(exc).__name__}: {exc}", tb=not isinstance(exc, ReMeError))
    return 0


def spawn_detached(argv: list[str], log_path: Path, ws: Workspace) -> int:
    from ..base import bootstrap

    return bootstrap.spawn_detached(argv, log_path, env={"REME_WORKSPACE": str(ws.root)})


# ---- SessionStart ---------------------------------------------------------------------------------


def _export_for_bash(ws: Workspace) -> None:
    """Commands Claude runs with its Bash tool (the /reme-dream skill runs scripts/launch.py) see neither
    the plugin options nor CLAUDE_PLUGIN_DATA; Claude Code sources CLAUDE_ENV_FILE into them, so the
    workspace and the plugin's data folder (where its environment lives) are exported there."""
    env_file = os.environ.get("CLAUDE_ENV_FILE", "").strip()
    if not env_file:
        return
    import shlex

    lines = [f"export REME_WORKSPACE={shlex.quote(str(ws.root))}\n"]
    data = os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if data:
        lines.append(f"export REME_PLUGIN_DATA={shlex.quote(data)}\n")
    try:
        with open(env_file, "a", encoding="utf-8") as fh:
            fh.writelines(lines)
    except OSError as exc:
        _log(ws, "SessionStart", f"cannot export the workspace to CLAUDE_ENV_FILE: {exc}")


def _session_start(ws: Workspace, config: Config, payload: dict[str, Any]) -> str:
    parts = []
    if config.brief_chars > 0:
        try:
            brief = call_with_timeout(lambda p: _brief(p, ws, config), payload, BRIEF_TIMEOUT)
        except Exception as exc:  # noqa: BLE001
            _log(ws, "SessionStart", f"brief skipped: {type(exc).__name__}: {exc}")
            brief = ""
        if isinstance(brief, str) and brief.strip():
            parts.append(brief)
    if payload.get("source") in ("compact", "resume") and config.auto_recall and config.recall_chars > 0:
        try:
            again = call_with_timeout(lambda p: _session_so_far(ws, config, p), payload, BRIEF_TIMEOUT)
        except Exception as exc:  # noqa: BLE001
            _log(ws, "SessionStart", f"session notes skipped: {type(exc).__name__}: {exc}")
            again = ""
        if again:
            parts.append(again)
    if not parts:
        return ""
    out = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "\n".join(parts)}}
    return json.dumps(out, ensure_ascii=False)


def _session_so_far(ws: Workspace, config: Config, payload: dict[str, Any]) -> str:
    """After compaction (or on resume): the session's own card — what was decided and done so far, as
    the recorder wrote it — and the notes recalled into it earlier, within ``recall_chars``."""
    from ..index import readonly
    from ..memory import untrusted
    from ..memory.prompt_recall import session_start_block
    from ..memory.transcript import check_session_id

    sid = check_session_id(payload.get("session_id"))
    budget = config.recall_chars
    out = []
    card = readonly.with_index(ws.metadata, lambda conn: readonly.session_card(conn, sid), None)
    if card is not None:
        what = (
            f"This session's own card in the user's memory ({card}): what was decided and done before it was compacted."
        )
        room = budget // 2 if budget > 600 else budget
        from ..notes.history import split_front

        # the body: its frontmatter repeats what the frame says
        _front, text, _lines = split_front(ws.read_bytes(card).decode("utf-8", "replace"))
        body = untrusted.text_block(text.strip())[: max(0, room - len(untrusted.as_notes("", what)) - 2)].rstrip()
        if body:
            out.append(untrusted.as_notes(body, what))
    left = budget - sum(len(x) + 1 for x in out)
    earlier = session_start_block(ws, sid, left)
    if earlier:
        out.append(earlier)
    _log(
        ws,
        "SessionStart",
        f"session {sid} ({payload.get('source')}): card {'re-injected' if card else 'not written yet'}, "
        f"{earlier.count(chr(10) + '- ') if earlier else 0} earlier notes",
    )
    return "\n".join(out)


# ---- UserPromptSubmit / PreCompact --------------------------------------------------------------------


def _prompt_recall(
    ws: Workspace, config: Config, payload: dict[str, Any], server_note: str, deadline: float | None
) -> tuple[str, str]:
    """(stdout for Claude Code, the log line) when no MCP server answered: keyword evidence only."""
    from .recall import DEADLINE_S, hook_output, recall_for_payload

    decision = recall_for_payload(
        ws, config, payload, deadline=DEADLINE_S if deadline is None else deadline, note=server_note
    )
    return hook_output(decision)


def _wait_for_card(ws: Workspace, payload: dict[str, Any], wait: float = COMPACT_WAIT_S) -> str:
    """Before compaction: give the recorder started above up to ``wait`` seconds to bring the
    session's card up to date (its request flag is cleared when it takes it; its lock is held while it runs)."""
    from ..memory import recording
    from ..memory.transcript import check_session_id

    sid = check_session_id(payload.get("session_id"))
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait:
        if not recording.dirty_flag(ws, sid).exists() and not recording.running(ws, sid):
            return f"card up to date after {time.monotonic() - t0:.1f}s"
        time.sleep(0.2)
    return f"recorder still running after {wait:.0f}s; compaction goes on"


def _brief(payload: dict[str, Any], ws: Workspace, config: Config) -> str:
    from ..memory.brief import session_start_brief  # lazy: only SessionStart needs it

    return session_start_brief(payload, ws, config)


def _maybe_auto_dream(ws: Workspace, config: Config) -> None:
    def start() -> None:
        from ..memory.dream_trigger import maybe_start_auto_dream  # lazy: only session start/end need it

        maybe_start_auto_dream(ws, config)

    try:
        call_with_timeout(lambda _arg: start(), None, 0.3)
    except Exception as exc:  # noqa: BLE001
        _log(ws, "dream", f"automatic dream check skipped: {exc}")


# ---- logging ---------------------------------------------------------------------------------------


# ---- CLI: `reme-cc hook <event>` ----------------------------------------------------------------------


def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "hook", help="run a Claude Code hook (Stop, SessionEnd, SessionStart) with the payload on stdin"
    )
    p.add_argument("event", choices=EVENTS)
    p.set_defaults(func=lambda args: main([args.event]))
