"""Issue #7 item 3: faults. Disk full and permission denied in the middle of a write, a read-only workspace,
a workspace path with spaces and non-ASCII characters, clock skew, the Claude CLI missing or failing to
start, the API hanging past the agent timeout. In each: a clear error, nothing lost, and the user's Claude
Code session unaffected (hooks exit 0, fast, with nothing on stdout). Real faults where we can (tmpfs,
read-only bind mounts, chattr +i, RLIMIT_FSIZE); a patched os call only for the in-process unit level.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from support import crash
from support.claude_cli import kill_leftovers, leftover_processes, sdk_env
from support.fake_api import FakeAPI, text, tool_use

from reme_cc.base.errors import ReMeError
from reme_cc.memory.transcript import copy_session, read_copy
from reme_cc.base.workspace import Workspace

PY = sys.executable
HOOK = crash.HOOK
SID = "fault-sess"


def sh(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True)


def mount_or_skip(*argv: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount")
    p = sh("mount", *argv)
    if p.returncode != 0:
        pytest.skip(f"mount {' '.join(argv)} failed: {p.stderr.strip()}")


@pytest.fixture
def mounts():
    made: list[Path] = []
    yield made
    for m in reversed(made):
        sh("umount", "-l", str(m))


def env_for(root: Path, **extra: str) -> dict[str, str]:
    return crash.base_env(root, uuid.uuid4().hex, {"REME_RECORD_MIN_MESSAGES": "1000", **extra})


def cli(root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        crash.reme(root, *args), env=env or env_for(root), capture_output=True, text=True, timeout=timeout, cwd="/"
    )


def hook(
    event: str, root: Path, transcript: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess, float]:
    payload = json.dumps(
        {"session_id": SID, "transcript_path": str(transcript), "hook_event_name": event, "cwd": "/home/user/project"}
    )
    t0 = time.monotonic()
    p = subprocess.run(
        [PY, "-S", str(HOOK), event],
        input=payload.encode(),
        capture_output=True,
        env=env or env_for(root),
        timeout=30,
        cwd="/",
    )
    return p, time.monotonic() - t0


def assert_hook_harmless(p: subprocess.CompletedProcess, seconds: float, event: str) -> None:
    assert p.returncode == 0, p.stderr
    assert seconds < 3.0, f"{event} hook took {seconds:.2f}s"
    if event == "SessionStart":
        assert p.stdout == b"" or json.loads(p.stdout)["hookSpecificOutput"]
    else:
        assert p.stdout == b""


def transcript(path: Path, n: int, start: int = 0) -> list[str]:
    import random

    entries = crash.transcript_entries(n, start, random.Random(start))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    return [e["uuid"] for e in entries if e["type"] in ("user", "assistant")]


def note(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\n---\n{body}\n"


def no_temp_files(root: Path) -> None:
    assert not [p for p in root.rglob("*.tmp")], "a failed write left its temp file"


# ---- disk full ---------------------------------------------------------------------------------------------


def test_disk_full_mid_write_on_a_real_tiny_tmpfs(tmp_path, mounts):
    mnt = tmp_path / "small"
    mnt.mkdir()
    mount_or_skip("-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt))
    mounts.append(mnt)
    root = mnt / "ws"
    ws = Workspace(root)
    ws.write_text("resource/keep.md", note("Keep", "kumquat harvest on Saturday"))
    assert cli(root, "reindex").returncode == 0
    src = tmp_path / "projects" / f"{SID}.jsonl"
    want = transcript(src, 300)
    copy_session(ws, SID, src)
    # fill the disk (leave ~40 KB)
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as fh:  # unbuffered: nothing left to flush (and fail) at close
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    os.truncate(filler, max(0, filler.stat().st_size - 30_000))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and "metadata" not in p.parts}

    # a tool write that does not fit: one clear line, exit 1, the old file untouched, no temp file
    big = "filler " * 14_000  # ~100 KB (one argv string is capped at 128 KB)
    p = cli(root, "write", "resource/keep.md", "--content", big)
    assert p.returncode == 1 and "disk is full" in p.stderr and "nothing was changed" in p.stderr, p
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = cli(root, "write", "resource/new.md", "--content", big)
    assert p.returncode == 1 and "disk is full" in p.stderr
    assert not (root / "resource/new.md").exists()
    no_temp_files(root)

    # the transcript copy runs out of space mid-append; the hook stays harmless
    want += transcript(src, 600, 1000)
    for event in ("Stop", "SessionEnd", "SessionStart"):
        res, secs = hook(event, root, src)
        assert_hook_harmless(res, secs, event)
    got = [e["uuid"] for e in read_copy(ws, SID)]
    assert got == want[: len(got)]  # a prefix: whatever landed is whole and in order
    # searching still works on a full disk
    p = cli(root, "search", "kumquat harvest")
    assert p.returncode == 0 and "resource/keep.md" in p.stdout, p
    for path, data in before.items():
        if path.suffix == ".md":
            assert path.read_bytes() == data, f"{path} changed on a full disk"

    # space comes back: the next hook completes the copy exactly once, nothing lost
    filler.unlink()
    res, secs = hook("Stop", root, src)
    assert_hook_harmless(res, secs, "Stop")
    crash.leftovers(env_for(root)["REME_TEST_RUN"], wait=0)
    assert [e["uuid"] for e in read_copy(ws, SID)] == want
    check = crash.check_files(root)
    assert not check.problems, check.problems


def test_file_size_limit_in_a_child_process(tmp_path):
    """RLIMIT_FSIZE: the write fails with EFBIG in the middle; a clear error and the old file intact."""
    root = tmp_path / "ws"
    ws = Workspace(root)
    ws.write_text("resource/a.md", note("A", "old text"))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    p = subprocess.run(
        crash.reme(root, "write", "resource/a.md", "--content", "x " * 50_000),
        env=env_for(root),
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=60,
    )
    assert p.returncode == 1 and "cannot write a.md" in p.stderr and "Traceback" not in p.stderr, p
    assert (root / "resource/a.md").read_text() == note("A", "old text")
    no_temp_files(root)


# ---- permission denied -------------------------------------------------------------------------------------


def test_permission_denied_on_an_immutable_file(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root)
    ws.write_text("resource/locked.md", note("Locked", "old"))
    target = root / "resource"
    if sh("chattr", "+i", str(target)).returncode != 0:
        pytest.skip("chattr +i not supported on this filesystem")
    try:
        p = cli(root, "write", "resource/locked.md", "--content", "new")
        assert p.returncode == 1 and "permission denied" in p.stderr and "nothing was changed" in p.stderr, p
        p = cli(root, "edit", "resource/locked.md", "--old-text", "old", "--new-text", "new")
        assert p.returncode == 1 and "permission denied" in p.stderr, p
    finally:
        sh("chattr", "-i", str(target))
    assert (root / "resource/locked.md").read_text() == note("Locked", "old")
    no_temp_files(root)


def test_permission_denied_in_the_middle_of_writes(tmp_path, monkeypatch):
    """Unit level: the data write of an atomic write, and the second write() of a copy's append, fail."""
    ws = Workspace(tmp_path / "ws")
    ws.write_text("resource/a.md", "old")
    real_write = os.write

    def half_then_refused(fd, data):  # the atomic write's data write (nofollow.write_at)
        real_write(fd, bytes(data[: len(data) // 2]))
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "write", half_then_refused)
    with pytest.raises(ReMeError, match=r"permission denied \(nothing was changed\)"):
        ws.write_text("resource/a.md", "new " * 1000)
    monkeypatch.undo()
    assert (ws.root / "resource/a.md").read_text() == "old"
    no_temp_files(ws.root)

    # the transcript copy: half of the append lands, then EACCES
    src = tmp_path / "s.jsonl"
    want = transcript(src, 200)
    real_write = os.write
    calls = {"n": 0}

    def half_then_fail(fd, data):
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "write", half_then_fail)
    with pytest.raises(PermissionError):
        copy_session(ws, SID, src)
    monkeypatch.undo()
    check = crash.check_files(ws.root)
    assert not check.problems and check.torn_tails == [f"session/claude_code/{SID}.jsonl"], check
    assert [e["uuid"] for e in read_copy(ws, SID)] == want[: len(read_copy(ws, SID))]
    copy_session(ws, SID, src)  # permission back: exactly once, nothing lost
    assert [e["uuid"] for e in read_copy(ws, SID)] == want


# ---- read-only workspace -----------------------------------------------------------------------------------


def test_read_only_workspace(tmp_path, mounts):
    from support.mcp_stdio import McpProcess

    real = tmp_path / "ws"
    ws = Workspace(real)
    ws.write_text("digest/wiki/kumquat.md", note("Kumquat harvest", "harvest the kumquats on the third Saturday"))
    assert cli(real, "reindex").returncode == 0
    src = tmp_path / "projects" / f"{SID}.jsonl"
    transcript(src, 20)
    ro = tmp_path / "ro-ws"
    ro.mkdir()
    mount_or_skip("--bind", str(real), str(ro))
    mounts.append(ro)
    p = sh("mount", "-o", "remount,bind,ro", str(ro))
    if p.returncode != 0:
        pytest.skip(f"cannot remount read-only: {p.stderr}")
    before = {p.relative_to(real): p.read_bytes() for p in real.rglob("*") if p.is_file()}

    # reading works (the existing index is served as a snapshot)
    p = cli(ro, "search", "kumquat harvest")
    assert p.returncode == 0 and "digest/wiki/kumquat.md" in p.stdout, p
    assert cli(ro, "read", "digest/wiki/kumquat.md").returncode == 0
    # writing says why, in one line
    p = cli(ro, "write", "resource/x.md", "--content", "x")
    assert p.returncode == 1 and "read-only" in p.stderr and "Traceback" not in p.stderr, p
    # hooks: exit 0, fast, nothing on stdout
    for event in ("Stop", "SessionEnd", "SessionStart"):
        res, secs = hook(event, ro, src)
        assert_hook_harmless(res, secs, event)
    # the MCP server starts and answers; a write is an error result, not a crash
    env = env_for(ro)
    with McpProcess([PY, "-m", "reme_cc", "mcp"], env=env) as srv:
        srv.initialize()
        out = srv.call_tool("search", {"query": "kumquat harvest"})
        assert not out.get("isError") and "kumquat" in json.dumps(out)
        out = srv.call_tool("write", {"path": "resource/y.md", "content": "y"})
        assert out.get("isError") and "read-only" in json.dumps(out)
    after = {p.relative_to(real): p.read_bytes() for p in real.rglob("*") if p.is_file()}
    assert after == before


# ---- a path with spaces and non-ASCII characters ------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_workspace_path_with_spaces_and_non_ascii_full_flow(tmp_path):
    """The real Claude CLI with the plugin (MCP server + hooks) on `My Memory – 记忆 é/ws`, then the
    recorder the SessionEnd hook starts, then the CLI."""
    from support.claude_cli import run_claude

    root = tmp_path / "My Memory – 记忆 é" / "w s"
    T = "mcp__plugin_reme_reme__"
    with FakeAPI() as api:
        api.script(
            tool_use(
                T + "write",
                {
                    "path": "resource/sourdough 面包.md",
                    "content": "# Sourdough\n\nFeed the zythum starter at 8am.\n",
                    "name": "Sourdough",
                    "description": "feeding",
                },
            ),
            tool_use(T + "search", {"query": "zythum starter"}),
            text("saved and found"),
            when=lambda r: "zythum" in json.dumps(r.messages[:1]),
        )
        run = run_claude(
            "remember: feed the zythum starter at 8am",
            api=api,
            home=tmp_path / "home 家",
            cwd=tmp_path / "proj ect",
            plugin_options={"workspace": str(root), "embedding": "none", "auto_dream": False},
        )
        try:
            assert run.rc == 0, run
            assert run.result == "saved and found", run
            (search,) = api.tool_results(T + "search")
            assert "resource/sourdough 面包.md" in search.text, search.text
            # the Stop/SessionEnd hooks copied the session into the workspace
            copies = list((root / "session" / "claude_code").glob("*.jsonl"))
            assert len(copies) == 1 and read_copy(Workspace(root), copies[0].stem), copies
            # the recorder the SessionEnd hook started finishes (small talk reply from the fake API)
            assert not leftover_processes(run.run_id, wait=90)
        finally:
            kill_leftovers(run.run_id)
    log = (root / "metadata/logs/auto-memory.log").read_text(encoding="utf-8")
    assert copies[0].stem in log and "Traceback" not in log, log[-2000:]
    p = cli(root, "search", "zythum")
    assert p.returncode == 0 and "sourdough 面包.md" in p.stdout, p
    assert "error" not in (root / "metadata/logs/hooks.log").read_text(encoding="utf-8").lower()


# ---- clock skew --------------------------------------------------------------------------------------------


def test_future_mtimes_do_not_hide_later_edits_from_the_index(tmp_path):
    from reme_cc.base.config import Config
    from reme_cc.index import Index

    ws = Workspace(tmp_path / "ws")
    ws.write_text("resource/a.md", note("A", "alpha bravo"))
    future = time.time() + 10 * 365 * 86400
    os.utime(ws.root / "resource/a.md", (future, future))
    idx = Index(ws, Config.load(None, env={"REME_EMBEDDING": "none"}), background_embedding=False)
    try:
        idx.sync(force=True)
        assert [h.path for h in idx.search("alpha").results] == ["resource/a.md"]
        ws.write_text("resource/a.md", note("A", "alpha charl"))  # same size, mtime now (< the indexed one)
        idx.sync(force=True)
        assert [h.path for h in idx.search("charl").results] == ["resource/a.md"]
    finally:
        idx.close()


def test_transcript_timestamps_in_the_future_past_and_garbage_are_recorded(tmp_path, monkeypatch):
    from support.recorder import entry, write_copy

    from reme_cc.base.config import Config
    from reme_cc.memory import daily
    from reme_cc.memory.auto_memory import record_session
    from reme_cc.memory.recording import load_cursor
    from reme_cc.surfaces.agent import with_agents
    from reme_cc.tools import Context

    ws = Workspace(tmp_path / "ws")
    write_copy(
        ws,
        SID,
        [
            entry("user", "Plan made in 2099.", "2099-01-01T09:00:00Z", "u1"),
            entry("assistant", "Noted.", "1970-01-01T00:00:01Z", "a1"),
            entry("user", "And a broken clock.", "not-a-time", "u2"),
            entry("assistant", "Still recorded.", "", "a2"),
        ],
    )
    with FakeAPI() as api:
        for k, v in sdk_env(api, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_BACKEND", "anthropic")
        monkeypatch.setenv("REME_ANTHROPIC_API_KEY", "sk-ant-fake")
        monkeypatch.setenv("REME_EMBEDDING", "none")
        api.default = text("done")
        api.rule(
            lambda r: not r.tool_results(last_only=True),
            lambda r: tool_use(
                "daily_write", {"name": "Skewed clocks", "description": "a plan", "content": r.last_user_text[-300:]}
            ),
        )
        ctx = with_agents(Context(ws, Config.load(ws.root)))
        try:
            report = record_session(ctx, SID)
        finally:
            ctx.close()
        prompts = "\n".join(r.last_user_text for r in api.messages_requests())
    assert report.status == "recorded", report
    for said in ("Plan made in 2099.", "Noted.", "And a broken clock.", "Still recorded."):
        assert said in prompts  # nothing dropped because of its timestamp
    assert load_cursor(ws, "claude_code", SID)["uuid"] == "a2"
    assert daily.find_card_by_session(ws, SID) is not None


def test_a_future_dream_stamp_does_not_block_the_automatic_dream_forever(tmp_path):
    from reme_cc.memory.dream_trigger import STAMP, last_dream_age_hours

    ws = Workspace(tmp_path / "ws")
    stamp = ws.root / STAMP
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    assert last_dream_age_hours(ws) < 0.01
    future = time.time() + 30 * 86400  # the clock was a month ahead when the last dream ran
    os.utime(stamp, (future, future))
    age = last_dream_age_hours(ws)
    assert age is None or age >= 24, f"a stamp from the future reads as {age} h old: no automatic dream for a month"


def test_a_future_last_record_time_does_not_stop_time_based_recording(tmp_path):
    from reme_cc.surfaces import hooks
    from reme_cc.base.config import Config
    from reme_cc.memory.transcript import load_state, save_state

    ws = Workspace(tmp_path / "ws")
    state = load_state(ws, SID)
    now = time.time()
    state.update({"pending_messages": 2, "pending_since": now - 3600, "last_record_at": now + 30 * 86400})
    save_state(ws, SID, state)
    config = Config(record_min_messages=100, record_min_minutes=15)
    assert hooks._should_record(ws, config, "Stop", SID, now=now), "a clock that was ahead blocks recording for a month"


# ---- the Claude CLI missing or failing; the API hanging past the timeout -----------------------------------


def _session_copy(ws: Workspace) -> None:
    from support.recorder import entry, write_copy

    write_copy(
        ws,
        SID,
        [
            entry("user", "We chose SQLite for the store.", "2026-06-20T09:00:00Z", "u1"),
            entry("assistant", "Noted: SQLite, WAL mode.", "2026-06-20T09:00:05Z", "a1"),
        ],
    )


@pytest.mark.parametrize("cli_kind", ["missing", "fails"])
def test_claude_cli_missing_or_failing_gives_a_clear_error_and_keeps_the_cursor(cli_kind, tmp_path):
    from reme_cc.memory.recording import cursor_path
    from reme_cc.memory.dream import load_catalog

    root = tmp_path / "ws"
    ws = Workspace(root)
    _session_copy(ws)
    ws.write_text("daily/2026-06-20/a.md", note("A", "lesson"))
    if cli_kind == "missing":
        claude, said = str(tmp_path / "no-such-claude"), "not found"
    else:
        claude = str(tmp_path / "broken-claude")
        Path(claude).write_text("#!/bin/sh\necho 'claude: cannot load libc++' >&2\nexit 3\n")
        os.chmod(claude, 0o755)
        said = "cannot load libc++"
    with FakeAPI() as api:
        env = env_for(
            root,
            **sdk_env(api, tmp_path / "home"),
            REME_AGENT_BACKEND="sdk",
            REME_AGENT_RETRIES="0",
            REME_CLAUDE_CLI=claude,
        )
        p = cli(root, "auto-memory", "--session-id", SID, env=env)
        assert p.returncode == 1 and "failed" in p.stdout and claude in p.stdout and said in p.stdout, p
        assert not (root / cursor_path("claude_code", SID)).exists()
        p = cli(root, "dream", "--date", "2026-06-20", env=env)
        assert p.returncode == 1 and said in p.stdout and "extract failed" in p.stdout, p
        assert load_catalog(ws) == {}
        # the user's session: the hook starts the recorder detached and returns at once
        res, secs = hook("SessionEnd", root, root / "session/claude_code" / f"{SID}.jsonl", env)
        assert_hook_harmless(res, secs, "SessionEnd")
        assert not leftover_processes(env["REME_TEST_RUN"], wait=60)
        assert api.messages_requests() == []


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_api_hanging_past_the_agent_timeout_loses_nothing(tmp_path):
    from reme_cc.memory import daily
    from reme_cc.memory.recording import cursor_path

    root = tmp_path / "ws"
    ws = Workspace(root)
    _session_copy(ws)
    with FakeAPI() as api:
        env = env_for(
            root,
            **sdk_env(api, tmp_path / "home"),
            REME_AGENT_BACKEND="sdk",
            REME_AGENT_RETRIES="0",
            REME_AGENT_TIMEOUT_S="4",
        )
        api.hang(600, times=None)
        t0 = time.monotonic()
        p = cli(root, "auto-memory", "--session-id", SID, env=env)
        took = time.monotonic() - t0
        assert p.returncode == 1 and "timed out after 4s" in p.stdout, p
        assert took < 30, f"the 4 s agent timeout took {took:.1f}s to fire"
        assert not (root / cursor_path("claude_code", SID)).exists() and daily.find_card_by_session(ws, SID) is None
        assert not leftover_processes(env["REME_TEST_RUN"], wait=10), "the timed-out Claude CLI was left running"
        # the API answers again: the retry records everything
        api.rules.clear()
        api.default = text("done")
        api.rule(
            lambda r: not r.tool_results(last_only=True),
            tool_use(
                "mcp__reme__daily_write",
                {"name": "SQLite store", "description": "Chose SQLite.", "content": "- SQLite, WAL mode"},
            ),
        )
        # a generous timeout for the retry: on a loaded machine the real CLI alone can take more than 4 s
        p = cli(root, "auto-memory", "--session-id", SID, env={**env, "REME_AGENT_TIMEOUT_S": "120"})
        assert p.returncode == 0 and "recorded" in p.stdout, p
    assert daily.find_card_by_session(ws, SID) is not None
