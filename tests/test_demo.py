"""`reme-cc demo` walks the whole loop offline, on real files and real processes: a session of the real
Claude Code CLI with the plugin's real hooks -> the transcript copy -> the recorder's card -> the dream's
digest node -> recall; every line of the scripted model is labelled; the "try next" lines run as printed."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reme_cc.notes.frontmatter import parse_note

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

REME = str(Path(sys.executable).with_name("reme-cc"))
TAG = "[scripted model]"


def user_env(home: Path) -> dict[str, str]:
    """A user's shell: their own HOME, no reme or Claude variables of a surrounding session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE", "ANTHROPIC"))}
    env.update(HOME=str(home), REME_EMBEDDING="none")
    return env


def section(out: str, start: str, end: str) -> str:
    return out.split(start, 1)[1].split(end, 1)[0]


def test_demo_walks_the_whole_loop_offline(tmp_path):
    home = tmp_path / "user-home"
    home.mkdir()
    d = tmp_path / "reme-demo"
    (d / "daily" / "2020-01-01").mkdir(parents=True)
    (d / "daily" / "2020-01-01" / "stale.md").write_text("from an earlier demo")
    (d / ".reme-demo").write_text("created by `reme-cc demo`")  # an earlier demo: it is re-created
    r = subprocess.run(
        [REME, "demo", str(d)], env=user_env(home), cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert out.startswith("Model: OFFLINE SCRIPTED MODEL"), out[:300]
    assert not (d / "daily" / "2020-01-01").exists()
    # offline, the CLI ran with the demo's own HOME: nothing of the user's Claude Code is read or written
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()
    assert (d / ".claude-home" / ".claude" / "projects").is_dir()

    # 1. the real hooks copied the session and started the recorder
    (copy,) = (d / "session" / "claude_code").glob("*.jsonl")
    sid = copy.stem
    hooks_log = (d / "metadata" / "logs" / "hooks.log").read_text()
    assert f"SessionEnd: session {sid}" in hooks_log and "recorder started" in hooks_log, hooks_log
    assert "always use pnpm, never npm" in copy.read_text()
    # 2. the recorder's card, dated today, leads back to the session copy
    today = dt.date.today().isoformat()
    (card,) = (d / "daily" / today).glob("*.md")
    card_rel = card.relative_to(d).as_posix()
    meta = parse_note(card.read_text()).meta
    assert meta["session_id"] == sid and meta["source_conversation"] == f"[[session/claude_code/{sid}.jsonl]]", meta
    assert meta["project"] == "webshop"  # the session ran in the demo project
    # 3. the dream's node cites the card in its Sources
    node = d / "digest" / "personal" / "prefers-pnpm.md"
    assert f"## Sources\n\n- Said in the session recorded in [[{card_rel}]]." in node.read_text()
    # the earlier history is there too (a workspace in use), outside the dream's window
    three_days_ago = (dt.date.today() - dt.timedelta(days=3)).isoformat()
    assert (
        "[[daily/%s/docs-style-review.md|Docs style review]]" % three_days_ago
        in (d / "daily" / f"{three_days_ago}.md").read_text()
    )
    assert (d / "digest" / "personal" / "docs-style.md").is_file()

    # what the model said is labelled, every line of it
    story = section(out, "\n1. ", "\n4. ")
    for said in (
        "Noted: pnpm for every JavaScript project",
        "The user said they always use pnpm",
        "Use pnpm, not npm, for JavaScript projects",
    ):
        lines = [ln for ln in story.splitlines() if said in ln]
        assert lines and all(ln.strip().startswith(TAG) for ln in lines), (said, lines)
    assert f"source_conversation: [[session/claude_code/{sid}.jsonl]]" in story
    assert "dream " + today + ": scanned 1, changed 1, units 1 (created 1" in story
    # 4. recall: the brief of the next session in the project and the search answer both hold the node
    recall = section(out, "\n4. ", "\nTry next:")
    brief, search = recall.split("The search tool", 1)
    assert "digest/personal/prefers-pnpm.md" in brief and "<memory-notes>" in brief
    assert re.search(r"1\. digest/personal/prefers-pnpm\.md:\d+-\d+", search), search

    # the "try next" lines work as printed, from a plain shell
    tries = [ln.strip() for ln in section(out, "\nTry next:\n", "\n\n").splitlines() if ln.strip()]
    assert len(tries) >= 4 and all(t.startswith(REME + " --workspace ") for t in tries), tries
    for t in tries:
        ran = subprocess.run(
            t, shell=True, env=user_env(home), cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert ran.returncode == 0, (t, ran.stdout, ran.stderr)
        if " search " in t or " read " in t:
            assert "prefers-pnpm" in ran.stdout or "pnpm" in ran.stdout, (t, ran.stdout)
        if t.endswith(" dream"):  # the cards are today's: scanned, and already dreamed (no model call)
            assert f"dream {today}: scanned 1, changed 0" in ran.stdout, ran.stdout


def test_a_recorder_that_writes_no_card_is_reported_with_its_log(ws):
    from reme_cc.surfaces.demo import wait_for_card
    from reme_cc.base.errors import ReMeError

    (ws.logs / "auto-memory.log").write_text("recorder failed: not logged in\n")
    with pytest.raises(ReMeError) as err:
        wait_for_card(ws, "0123abcd-0000-0000-0000-000000000000", timeout=1.0)
    assert "the recorder wrote no card within 1s for session 0123abcd" in str(err.value)
    assert "recorder failed: not logged in" in str(err.value) and "auto-memory.log" in str(err.value)


def test_real_mode_with_a_login_leaves_the_users_claude_settings_alone(tmp_path):
    """--real with a Claude login needs the user's HOME: their settings are neither changed nor applied
    (their hooks and plugins stay out of the demo session). The "real" API here is the scripted model
    behind ANTHROPIC_BASE_URL, as a proxy of the user's would be."""
    from reme_cc.surfaces.demo import SCRIPT
    from reme_cc.surfaces.demo_model import ScriptedModel

    home = tmp_path / "user-home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text(
        '{"claudeAiOauth": {"accessToken": "sk-ant-oat01-demo-test", "refreshToken": "sk-ant-ort01-demo-test", '
        '"expiresAt": 9999999999999, "scopes": ["user:inference"], "subscriptionType": "pro"}}'
    )
    hook_ran = tmp_path / "user-hook-ran"
    settings = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch %s"}]}]}}' % hook_ran
    (home / ".claude" / "settings.json").write_text(settings)
    with ScriptedModel(SCRIPT) as model:
        env = dict(user_env(home), ANTHROPIC_BASE_URL=model.url)
        r = subprocess.run(
            [REME, "demo", str(tmp_path / "d"), "--real"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Model: the REAL model (claude-haiku-4-5) through your Claude Code login"), r.stdout
    assert "[model] Noted: pnpm for every JavaScript project" in r.stdout and TAG not in r.stdout
    assert model.calls["session"] == 1 and model.calls["recorder"] == 2 and model.calls["integrator"] == 3
    assert (home / ".claude" / "settings.json").read_text() == settings and not hook_ran.exists()
    assert not (home / ".claude" / "plugins" / "installed_plugins.json").exists()  # nothing installed
