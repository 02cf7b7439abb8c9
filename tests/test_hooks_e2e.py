"""The real Claude Code CLI with `--plugin-dir <repo>` against the fake API: our hooks copy the session."""

from __future__ import annotations

import re

import pytest

from reme_cc.memory.transcript import read_copy
from support.claude_cli import kill_leftovers, leftover_processes, run_claude
from support.fake_api import FakeAPI, text
from support.files_helpers import conversational_uuids

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SECRET = "sk-" + "ant-api03-" + "Qw7" * 30


def test_cli_session_and_resume_are_copied_once(tmp_path):
    ws = tmp_path / "ws"
    home = tmp_path / "home"
    env = {"REME_WORKSPACE": str(ws), "REME_RECORD_MIN_MESSAGES": "1000", "REME_AUTO_DREAM": "false"}
    opts = {"workspace": str(ws)}
    with FakeAPI(default=text("Noted: teal.")) as api:
        run1 = run_claude(f"Remember my favourite colour is teal. <private>my PIN is 4321</private> key {SECRET}",
                          api=api, home=home, env=env, plugin_options=opts, allowed_tools=())  # fmt: skip
        assert run1.rc == 0, run1
        sid = run1.session_id
        run2 = run_claude("What is my favourite colour?", api=api, home=home, env=env, plugin_options=opts,
                          allowed_tools=(), extra_args=["--resume", sid])  # fmt: skip
        assert run2.rc == 0, run2
        try:
            leftover_processes(run1.run_id, wait=20)  # let the detached recorder finish against the fake API
            leftover_processes(run2.run_id, wait=20)
        finally:
            kill_leftovers(run1.run_id)
            kill_leftovers(run2.run_id)
    (transcript,) = (home / ".claude" / "projects").glob(f"*/{sid}.jsonl")
    from reme_cc.base.workspace import Workspace

    w = Workspace(ws)
    copied = [e["uuid"] for e in read_copy(w, sid)]
    assert copied == conversational_uuids(transcript)
    texts = [e["message"]["content"] for e in read_copy(w, sid) if isinstance(e["message"]["content"], str)]
    assert any("teal" in t for t in texts) and any("favourite colour?" in t for t in texts)
    log = (ws / "metadata" / "logs" / "hooks.log").read_text()
    assert len(re.findall(r" Stop: session ", log)) == 2 and len(re.findall(r" SessionEnd: session ", log)) == 2
    assert "recorder started" in log or "marked dirty" in log
    # only our session ever reached the hooks (the recorder's own SDK session fired none)
    assert set(re.findall(r"session ([0-9a-f-]{36})", log)) == {sid}
    for f in ws.rglob("*"):
        if f.is_file():
            data = f.read_text("utf-8", "replace")
            assert SECRET not in data and "PIN is 4321" not in data, f


def test_bash_commands_in_the_session_see_the_workspace(tmp_path):
    """The /reme-dream skill runs scripts/launch.py through Claude's Bash tool, which sees neither the
    plugin options nor CLAUDE_PLUGIN_DATA: SessionStart exports them through CLAUDE_ENV_FILE."""
    from support.fake_api import tool_use, tool_result_for

    ws = tmp_path / "my ws"
    env = {"REME_RECORD": "false", "REME_AUTO_DREAM": "false"}
    with FakeAPI(default=text("done")) as api:
        api.rule(tool_result_for("Bash"), text("done"))
        api.script(tool_use("Bash", {"command": 'echo "WS=$REME_WORKSPACE DATA=$REME_PLUGIN_DATA"'}))
        run = run_claude(
            "where is my memory?",
            api=api,
            home=tmp_path / "home",
            env=env,
            plugin_options={"workspace": str(ws)},
            allowed_tools=("Bash",),
        )
        assert run.rc == 0, run
        (result,) = api.tool_results("Bash")
    assert f"WS={ws}" in result.text
    assert "DATA=" in result.text and "plugins/data/reme" in result.text
