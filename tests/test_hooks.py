"""The hook entry point run as Claude Code runs it: `python3 -S hooks/reme_hook.py <event>` with stdin JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reme_cc.surfaces import hooks
from reme_cc.base.bootstrap import SAFE_PATH
from reme_cc.memory.transcript import copy_path, load_state, read_copy

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "reme_hook.py"
FIXTURES = Path(__file__).parent / "fixtures" / "claude_code"  # real CLI captures (copied from shared/)
SID = "cf0565d1-9dd3-4e0c-9c37-4f1acd73559e"
PYTHON = shutil.which("python3") or sys.executable  # the system python3, as hooks.json uses


def run_hook(event: str, stdin: bytes | str, env: dict[str, str], timeout: float = 20) -> subprocess.CompletedProcess:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    full = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    full["REME_AUTO_DREAM"] = "false"  # the dream trigger has its own tests; keep spawns countable here
    full.update(env)
    return subprocess.run([PYTHON, "-S", str(HOOK), event], input=data, capture_output=True, env=full,
                          timeout=timeout, cwd="/")  # fmt: skip


def payload(event: str, transcript: Path, sid: str = SID, **extra) -> str:
    return json.dumps({"session_id": sid, "transcript_path": str(transcript), "cwd": "/home/user/project",
                       "hook_event_name": event, "stop_hook_active": False, **extra})  # fmt: skip


@pytest.fixture
def session(tmp_path):
    src = tmp_path / "projects" / f"{SID}.jsonl"
    src.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "projects" / "-home-user-project" / f"{SID}.jsonl", src)
    return src


@pytest.fixture
def fake_recorder(tmp_path):
    """A stand-in for the plugin env's python: records the argv it was started with."""
    out = tmp_path / "recorder-calls"
    script = tmp_path / "fake-python"
    script.write_text(f'#!/bin/sh\necho "$$ $@" >> "{out}"\nsleep 0.3\n')
    script.chmod(0o755)
    return script, out


def wait_for(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_stop_copies_and_repeats_are_idempotent(ws, session, fake_recorder):
    script, calls = fake_recorder
    env = {"REME_WORKSPACE": str(ws.root), "REME_PYTHON": str(script), "REME_RECORD_MIN_MESSAGES": "100"}
    for event in ("Stop", "Stop", "Stop"):
        p = run_hook(event, payload(event, session, stop_hook_active=True), env)
        assert (p.returncode, p.stdout) == (0, b""), p.stderr
    assert len(read_copy(ws, SID)) == 4
    assert not calls.exists()  # 4 messages < 100: no recording yet
    log = (ws.logs / "hooks.log").read_text()
    assert "+4 entries" in log and log.count("+0 entries") == 2


def test_stop_starts_recorder_after_enough_messages_then_session_end_flushes(ws, session, fake_recorder):
    script, calls = fake_recorder
    env = {"REME_WORKSPACE": str(ws.root), "REME_PYTHON": str(script), "REME_RECORD_MIN_MESSAGES": "3"}
    assert run_hook("Stop", payload("Stop", session), env).returncode == 0
    assert wait_for(calls.exists)
    line = calls.read_text().split()
    # safe-path mode: the recorder never has a folder a repository controls on its import path
    assert line[1:] == [SAFE_PATH, "-m", "reme_cc", "auto-memory", "--session-id", SID, "--workspace", str(ws.root)]
    assert (ws.metadata / "locks" / f"record-{SID}.dirty").exists()
    assert load_state(ws, SID)["pending_messages"] == 0
    # another Stop with nothing new: no second recording
    run_hook("Stop", payload("Stop", session), env)
    time.sleep(0.3)
    assert len(calls.read_text().splitlines()) == 1
    # SessionEnd always asks for a flush
    assert run_hook("SessionEnd", payload("SessionEnd", session, reason="other"), env).returncode == 0
    assert wait_for(lambda: len(calls.read_text().splitlines()) == 2)


def test_recorder_is_detached_in_its_own_session(ws, session, fake_recorder):
    script, calls = fake_recorder
    env = {"REME_WORKSPACE": str(ws.root), "REME_PYTHON": str(script)}
    run_hook("SessionEnd", payload("SessionEnd", session), env)
    assert wait_for(calls.exists)
    pid = int(calls.read_text().split()[0])
    try:
        assert os.getsid(pid) == pid  # setsid: survives the CLI killing the hook's process group
    except ProcessLookupError:
        pass  # already finished: it was not killed with the hook either


def test_running_recorder_gets_dirty_flag_instead_of_a_second_process(ws, session, fake_recorder):
    script, calls = fake_recorder
    env = {"REME_WORKSPACE": str(ws.root), "REME_PYTHON": str(script)}
    with ws.lock(f"record-{SID}"):  # what the recorder holds while it runs
        assert run_hook("SessionEnd", payload("SessionEnd", session), env).returncode == 0
    time.sleep(0.4)
    assert not calls.exists()
    assert (ws.metadata / "locks" / f"record-{SID}.dirty").exists()
    assert "marked dirty" in (ws.logs / "hooks.log").read_text()


def test_record_false_stores_nothing(ws, session, fake_recorder):
    script, calls = fake_recorder
    env = {"REME_WORKSPACE": str(ws.root), "REME_PYTHON": str(script), "REME_RECORD": "false"}
    for event in ("Stop", "SessionEnd"):
        assert run_hook(event, payload(event, session), env).returncode == 0
    assert not (ws.root / copy_path(SID)).exists() and not calls.exists()


@pytest.mark.parametrize("stdin", [b"", b"garbage{{", b"[1,2]", b"\xff\xfe\x00", b'{"session_id": "../../etc"}',
                                   b'{"session_id": "abc"}', json.dumps({"session_id": 5}).encode()])  # fmt: skip
@pytest.mark.parametrize("event", ["Stop", "SessionEnd", "SessionStart", "Bogus"])
def test_bad_input_exits_zero_silently(ws, stdin, event):
    p = run_hook(event, stdin, {"REME_WORKSPACE": str(ws.root)})
    assert p.returncode == 0 and p.stdout == b""
    assert not list((ws.root / "session" / "claude_code").iterdir())


def test_missing_transcript(ws, tmp_path):
    p = run_hook("Stop", payload("Stop", tmp_path / "nope.jsonl"), {"REME_WORKSPACE": str(ws.root)})
    assert (p.returncode, p.stdout) == (0, b"")


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_unwritable_workspace(tmp_path, session, where):
    if where == "under-a-file":
        (tmp_path / "afile").write_text("x")
        root = tmp_path / "afile" / "ws"
    else:
        root = Path("/proc/reme-test-ws")
    for event in ("Stop", "SessionEnd", "SessionStart"):
        p = run_hook(event, payload(event, session), {"REME_WORKSPACE": str(root)})
        assert (p.returncode, p.stdout) == (0, b""), p.stderr


def test_internal_agent_marker_exits_at_once(tmp_path, session):
    root = tmp_path / "ws-never-created"
    env = {"REME_WORKSPACE": str(root), "REME_INTERNAL_AGENT": "1", "CLAUDE_CODE_ENTRYPOINT": "sdk-py"}
    for event in ("Stop", "SessionEnd", "SessionStart"):
        p = run_hook(event, payload(event, session), env)
        assert (p.returncode, p.stdout) == (0, b"")
    assert not root.exists()


def test_real_payload_fixtures_are_accepted(ws, tmp_path):
    projects = tmp_path / "home" / ".claude" / "projects"
    shutil.copytree(FIXTURES / "projects", projects)
    env = {"REME_WORKSPACE": str(ws.root), "REME_RECORD": "true", "REME_PYTHON": "/bin/true"}
    for name in ("Stop.json", "Stop.after_tools.json", "Stop.background_agent_running.json",
                 "Stop.stop_hook_active.json", "SessionEnd.json"):  # fmt: skip
        raw = (FIXTURES / "hook_payloads" / name).read_text().replace("/home/user", str(tmp_path / "home"))
        event = json.loads(raw)["hook_event_name"]
        p = run_hook(event, raw, env)
        assert (p.returncode, p.stdout) == (0, b"")
    copies = sorted(p.name for p in (ws.root / "session" / "claude_code").glob("*.jsonl"))
    assert SID + ".jsonl" in copies and len(copies) >= 2
    assert "error" not in (ws.logs / "hooks.log").read_text()


def test_session_start_prints_brief_json(ws, monkeypatch, capsys):
    monkeypatch.setattr(hooks, "_brief", lambda payload, ws, config: "Recent memory: [[daily/2026-11-30/x.md]]")
    out = hooks.handle("SessionStart", {"session_id": SID, "source": "startup"}, ws)
    data = json.loads(out)
    assert data == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                           "additionalContext": "Recent memory: [[daily/2026-11-30/x.md]]"}}  # fmt: skip


def test_session_start_slow_or_broken_brief_is_skipped(ws, monkeypatch):
    monkeypatch.setattr(hooks, "BRIEF_TIMEOUT", 0.1)
    monkeypatch.setattr(hooks, "_brief", lambda payload, ws, config: time.sleep(2) or "late")
    t0 = time.monotonic()
    assert hooks.handle("SessionStart", {"session_id": SID}, ws) == ""
    assert time.monotonic() - t0 < 1.5
    monkeypatch.setattr(hooks, "_brief", lambda payload, ws, config: 1 / 0)
    assert hooks.handle("SessionStart", {"session_id": SID}, ws) == ""


def test_session_start_stdout_is_valid_json_or_empty(ws, session):
    p = run_hook("SessionStart", payload("SessionStart", session, source="startup"), {"REME_WORKSPACE": str(ws.root)})
    assert p.returncode == 0
    if p.stdout:
        assert json.loads(p.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_big_backlog_goes_to_a_detached_worker(ws, session, monkeypatch, fake_recorder):
    script, _ = fake_recorder
    monkeypatch.setenv("REME_PYTHON", str(script))
    monkeypatch.setattr(hooks, "INLINE_COPY_BYTES", 1000)
    note = hooks._copy_and_trigger(ws, hooks.Config.load(ws.root), "Stop",
                                   {"session_id": SID, "transcript_path": str(session)}, inline=True)  # fmt: skip
    assert "detached worker" in note
    assert wait_for(lambda: len(read_copy(ws, SID)) == 4, timeout=20)


def test_hooks_json_points_at_the_entry_script():
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    for event in ("Stop", "SessionEnd", "SessionStart"):
        (cmd,) = [h["command"] for group in data["hooks"][event] for h in group["hooks"]]
        assert cmd.startswith("python3 ") and '"${CLAUDE_PLUGIN_ROOT}/hooks/reme_hook.py"' in cmd
        assert cmd.endswith(f" {event}")


def test_incremental_stop_reads_only_the_new_bytes(ws, session):
    """A Stop on a transcript copied before reads from its offset on, never the whole file again (how
    fast that is, is bench/bench_hooks.py's business; here the behaviour): a line rewritten in place
    behind the offset, with a new uuid, stays uncopied, while the turn appended after it is copied."""
    env = {"REME_WORKSPACE": str(ws.root), "REME_RECORD_MIN_MESSAGES": "1000"}
    run_hook("Stop", payload("Stop", session), env)
    before = read_copy(ws, SID)
    lines = session.read_bytes().splitlines(keepends=True)
    first_user = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "user")
    entry = json.loads(lines[first_user])
    rewritten = entry | {"uuid": "00000000-0000-4000-8000-000000000000",
                         "message": {"role": "user", "content": "REREAD-MARKER"}}  # fmt: skip
    fake = json.dumps(rewritten, separators=(",", ":")).encode()
    assert len(fake) < len(lines[first_user])
    lines[first_user] = fake + b" " * (len(lines[first_user]) - len(fake) - 1) + b"\n"  # same size and inode
    appended = entry | {"uuid": "11111111-1111-4111-8111-111111111111",
                        "message": {"role": "user", "content": "APPENDED-TURN"}}  # fmt: skip
    with open(session, "r+b") as f:
        f.write(b"".join(lines))
        f.write(json.dumps(appended).encode() + b"\n")
    res = run_hook("Stop", payload("Stop", session), env)
    assert res.returncode == 0, res
    after = read_copy(ws, SID)
    assert "APPENDED-TURN" in json.dumps(after) and "REREAD-MARKER" not in json.dumps(after)
    assert after[: len(before)] == before and len(after) == len(before) + 1
