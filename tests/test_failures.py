"""Issue 22, item 2: a background failure is never silent.

The recorder runs detached; with no Claude login the real Claude Code CLI it drives fails with "Not
logged in". That failure (and any other: API errors, caps, a broken env) must show in `status`, fail
`doctor` with the fix, and reach the next SessionStart brief as one line, until a run works again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reme_cc.memory import failures
from reme_cc.base.workspace import Workspace
from support.claude_cli import cli_env
from support.fake_api import FakeAPI, text
from support.recorder import copy_fixture

SID = "cf0565d1-9dd3-4e0c-9c37-4f1acd73559e"


def reme(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reme_cc", "--workspace", str(ws), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def not_logged_in_env(home: Path) -> dict[str, str]:
    env = cli_env("http://127.0.0.1:9", home)  # a closed loopback port: nothing leaves the machine
    del env["ANTHROPIC_API_KEY"]  # and no ~/.claude credentials in the fresh HOME: not logged in
    env["REME_AGENT_BACKEND"] = "sdk"  # the real Claude Code CLI, as on a user's machine with no API key
    env["REME_AGENT_RETRIES"] = "1"
    return env


@pytest.mark.e2e
def test_not_logged_in_shows_in_status_doctor_and_brief_until_it_works(ws, tmp_path):
    copy_fixture(ws, f"{SID}.jsonl", SID)
    env = not_logged_in_env(tmp_path / "home")
    for _ in range(2):
        run = reme(ws.root, env, "auto-memory", "--session-id", SID)
        assert run.returncode == 1, run.stdout + run.stderr
    (streak,) = failures.current(ws)
    assert (streak.agent, streak.count, streak.cause) == ("recorder", 2, "not logged in"), streak
    assert "login" in streak.error.lower()
    line = streak.line()
    assert line.startswith("memory recording has failed 2 times since ") and line.endswith(
        "run /login in Claude Code (or set ANTHROPIC_API_KEY)"
    )

    status = reme(ws.root, env, "status")
    assert f"FAILING: {line}" in status.stdout, status.stdout
    as_json = json.loads(reme(ws.root, env, "--json", "status").stdout)
    assert [f["line"] for f in as_json["status"]["failures"]] == [line]
    doctor = reme(ws.root, env, "doctor")
    assert doctor.returncode == 1 and f"PROBLEM background work: {line}" in doctor.stdout, doctor.stdout

    brief = _brief(ws.root, tmp_path)
    assert brief.count(line) == 1, brief

    # it works again (logged in: the fake API answers; a conversation with nothing worth a card): cleared
    with FakeAPI(text("small talk, no card")) as api:
        ok_env = dict(cli_env(api, tmp_path / "home"), REME_AGENT_BACKEND="sdk", REME_AGENT_RETRIES="1")
        run = reme(ws.root, ok_env, "auto-memory", "--session-id", SID)
        assert run.returncode == 0, run.stdout + run.stderr
    assert failures.current(ws) == []
    assert "FAILING" not in reme(ws.root, env, "status").stdout
    assert line not in _brief(ws.root, tmp_path)


def _brief(root: Path, tmp_path: Path) -> str:
    """What the SessionStart hook adds to the session (the hook itself, with the system python's -S)."""
    hook = Path(__file__).resolve().parent.parent / "hooks" / "reme_hook.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update(REME_WORKSPACE=str(root), REME_RECORD="false", REME_AUTO_DREAM="false")
    payload = {
        "session_id": "brief-check",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(tmp_path),
        "transcript_path": str(tmp_path / "none.jsonl"),
    }
    out = subprocess.run(
        [sys.executable, "-S", str(hook), "SessionStart"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"] if out.stdout.strip() else ""


def test_each_cause_has_its_fix():
    cases = {
        "Not logged in · Please run /login": "not logged in",
        'API Error: 401 {"type":"authentication_error"}': "the API key was refused",
        "API Error: 429 rate_limit_error": "the API is rate limiting",
        "API Error: 529 overloaded_error": "the API failed",
        "daily recorder cap reached (40/40 runs today); raise daily_recorder_runs to record more": "today's cap is reached",
        "reme could not prepare its Python environment: installing packages failed": "the plugin's environment is broken",
        "Your credit balance is too low": "the API account has no credit left",
    }
    for error, cause in cases.items():
        assert failures.explain(error)[0] == cause, error
    cause, fix = failures.explain("something odd happened\nwith details")
    assert cause == "something odd happened" and "auto-memory.log" in fix


def test_a_streak_counts_keeps_its_start_and_clears(tmp_path):
    ws = Workspace(tmp_path / "ws")
    first = failures.record_failure(ws, "dream", "extract failed: Not logged in")
    second = failures.record_failure(ws, "dream", "extract failed: API Error: 529 overloaded")
    assert (second.count, second.since, second.cause) == (2, first.since, "the API failed")  # the latest cause
    assert second.line().startswith("the dream has failed 2 times since ")
    failures.record_success(ws, "recorder")  # another agent's success leaves the streak alone
    assert len(failures.current(ws)) == 1
    failures.record_success(ws, "dream")
    assert failures.current(ws) == []
    (ws.root / failures.FILE).write_text("{not json")
    assert failures.current(ws) == []  # damaged: no streaks, never an error


@pytest.mark.e2e
def test_a_dream_that_cannot_reach_the_model_says_so_and_is_kept(ws, tmp_path):
    import datetime as dt

    today = dt.date.today().isoformat()
    card = ws.root / "daily" / today / "lock-work.md"
    card.parent.mkdir(parents=True, exist_ok=True)
    card.write_text(
        "---\nname: Lock work\ndescription: fixed the flock bug\n---\nWe switched to flock because "
        "fcntl locks were lost when a child closed the file.\n"
    )
    run = reme(ws.root, not_logged_in_env(tmp_path / "home"), "dream")
    assert run.returncode == 1, run.stdout + run.stderr
    head = run.stdout.splitlines()[0]
    assert "FAILED" in head and "ERROR" in run.stdout, run.stdout  # never "failed 0" alone next to an error
    (streak,) = failures.current(ws)
    assert (streak.agent, streak.cause) == ("dream", "not logged in"), streak
