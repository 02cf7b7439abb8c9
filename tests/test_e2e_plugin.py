"""End to end with the real Claude Code CLI (bundled in claude-agent-sdk) and the scripted fake API.

The MCP server runs through the plugin's real launcher (.mcp.json -> scripts/launch.py) with
REME_PYTHON pointing at this test interpreter, so no env is built here (test_e2e_bootstrap.py does that).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from support.claude_cli import REPO, finish, kill_leftovers, leftover_processes, popen_claude, run_claude, run_cli
from support.fake_api import (
    FakeAPI,
    all_of,
    any_user_contains,
    fake_api,  # noqa: F401  (a fixture)
    is_main,
    text,
    tool_result_for,
    tool_use,
)

pytestmark = pytest.mark.e2e

T = "mcp__plugin_reme_reme__"


def make_workspace(root: Path) -> Path:
    (root / "digest" / "wiki").mkdir(parents=True)
    (root / "digest" / "wiki" / "kumquat-harvest.md").write_text(
        "---\nname: Kumquat harvest\ndescription: when and how we pick the kumquats\n---\n"
        "# Kumquat harvest\n\nWe agreed to harvest the kumquats on the third Saturday of January.\n"
        "Bring the long ladder from the shed.\n"
    )
    (root / "digest" / "wiki" / "tomatoes.md").write_text(
        "---\nname: Tomatoes\ndescription: greenhouse tomato notes\n---\n# Tomatoes\n\nWater them daily in July.\n"
    )
    return root


def opts(ws: Path) -> dict[str, object]:
    # record/auto_dream off: the hooks' detached memory agents would otherwise outlive the CLI (by design)
    # and talk to the fake API; this file is about the MCP server
    return {"workspace": str(ws), "embedding": "none", "record": False, "auto_dream": False}


NO_AGENTS = {"REME_RECORD": "false", "REME_AUTO_DREAM": "false"}


def first_hit_path(search_text: str) -> str:
    m = re.search(r"=+ (\S+?\.md):\d+-\d+ ", search_text)
    assert m, f"no hit in search output:\n{search_text}"
    return m.group(1)


def test_plugin_validate_is_clean(tmp_path):
    run = run_cli(["plugin", "validate", str(REPO)], home=tmp_path / "home")
    assert run.rc == 0, run
    assert "✘" not in run.stdout + run.stderr, run


def test_search_then_read_returns_the_note_text(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.rule(
        all_of(is_main, tool_result_for(T + "read")), text("The harvest is on the third Saturday of January.")
    )
    fake_api.rule(
        all_of(is_main, tool_result_for(T + "search")),
        lambda req: tool_use(T + "read", {"path": first_hit_path(req.tool_results(last_only=True)[0].text)}),
    )
    fake_api.rule(
        all_of(is_main, any_user_contains("when do we harvest")),
        tool_use(T + "search", {"query": "kumquat harvest ladder", "limit": 3}),
    )
    run = run_claude(
        "when do we harvest the kumquats?",
        api=fake_api,
        home=tmp_path / "home",
        cwd=tmp_path / "proj",
        plugin_options=opts(ws),
    )
    try:
        assert run.rc == 0, run
        assert run.result == "The harvest is on the third Saturday of January.", run
        (search,) = fake_api.tool_results(T + "search")
        assert not search.is_error and "digest/wiki/kumquat-harvest.md" in search.text, search.text
        (read,) = fake_api.tool_results(T + "read")
        assert read.input == {"path": "digest/wiki/kumquat-harvest.md"}
        assert not read.is_error and "third Saturday of January" in read.text and "long ladder" in read.text
        assert not run.permission_denials
        assert not leftover_processes(run.run_id), "MCP server left running after the CLI exited"
    finally:
        kill_leftovers(run.run_id)


def test_write_then_search_finds_the_new_note(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    note = {
        "path": "resource/sourdough.md",
        "content": "# Sourdough\n\nFeed the starter zythum flour at 8am.\n",
        "name": "Sourdough",
        "description": "starter feeding schedule",
    }
    fake_api.script(
        tool_use(T + "write", note),
        tool_use(T + "search", {"query": "zythum starter"}),
        text("saved and found"),
        when=is_main,
    )
    run = run_claude(
        "remember the sourdough schedule",
        api=fake_api,
        home=tmp_path / "home",
        cwd=tmp_path / "proj",
        plugin_options=opts(ws),
    )
    try:
        assert run.rc == 0, run
        (write,) = fake_api.tool_results(T + "write")
        assert not write.is_error, write.text
        assert (ws / "resource/sourdough.md").read_text().startswith("---\n")
        (search,) = fake_api.tool_results(T + "search")
        assert first_hit_path(search.text) == "resource/sourdough.md", search.text
        assert run.result == "saved and found"
    finally:
        kill_leftovers(run.run_id)


def test_tool_error_reaches_the_model_and_session_continues(fake_api, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    fake_api.script(
        tool_use(T + "read", {"path": "../../etc/passwd"}),
        tool_use(T + "read", {"pth": "x"}),
        text("handled"),
        when=is_main,
    )
    run = run_claude(
        "read something", api=fake_api, home=tmp_path / "home", cwd=tmp_path / "proj", plugin_options=opts(ws)
    )
    try:
        assert run.rc == 0 and run.result == "handled", run
        outside, bad_args = fake_api.tool_results(T + "read")
        assert outside.is_error and "root:" not in outside.text and "workspace" in outside.text.lower()
        assert bad_args.is_error
    finally:
        kill_leftovers(run.run_id)


def test_two_sessions_at_once_on_one_workspace(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    with FakeAPI() as api:
        for i in (1, 2):
            api.rule(all_of(any_user_contains(f"session {i}"), tool_result_for(T + "search")), text(f"done {i}"))
            api.rule(
                all_of(any_user_contains(f"session {i}"), tool_result_for(T + "write")),
                tool_use(T + "search", {"query": f"parallel note {i}"}),
            )
            api.rule(
                any_user_contains(f"session {i}"),
                tool_use(
                    T + "write",
                    {
                        "path": f"resource/parallel-{i}.md",
                        "content": f"# Parallel {i}\n\nparallel note {i} marker{i}\n",
                    },
                ),
            )
        started = time.monotonic()
        procs = [
            popen_claude(
                f"session {i}", api=api, home=tmp_path / f"home{i}", cwd=tmp_path / "proj", plugin_options=opts(ws)
            )
            for i in (1, 2)
        ]
        runs = [finish(p, rid, args, started) for p, rid, args in procs]
        try:
            for i, run in zip((1, 2), runs):
                assert run.rc == 0 and run.result == f"done {i}", run
                assert (ws / f"resource/parallel-{i}.md").is_file()
            results = {r.text for r in api.tool_results(T + "search")}
            assert any("parallel-1.md" in t for t in results) and any("parallel-2.md" in t for t in results)
            assert all(not r.is_error for r in api.tool_results())
            for run in runs:
                assert not leftover_processes(run.run_id)
        finally:
            for run in runs:
                kill_leftovers(run.run_id)


def test_marketplace_add_and_install_offline_then_use(fake_api, tmp_path):
    """The README quick start, in a fresh HOME: marketplace add + install, options via --config."""
    home = tmp_path / "home"
    ws = make_workspace(tmp_path / "ws")
    add = run_cli(["plugin", "marketplace", "add", str(REPO)], home=home)
    assert add.rc == 0, add
    inst = run_cli(
        [
            "plugin",
            "install",
            "reme@reme-cc",
            "--config",
            f"workspace={ws}",
            "--config",
            "embedding=none",
            "--config",
            "record=false",
            "--config",
            "auto_dream=false",
        ],
        home=home,
    )
    assert inst.rc == 0, inst
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"]["reme@reme-cc"] is True
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    assert "reme@reme-cc" in json.dumps(installed)
    fake_api.script(tool_use(T + "read", {"path": "digest/wiki/tomatoes.md"}), text("ok"), when=is_main)
    run = run_claude("tomatoes?", api=fake_api, home=home, cwd=tmp_path / "proj", plugin_dir=None)
    try:
        assert run.rc == 0, run
        (read,) = fake_api.tool_results(T + "read")
        assert "Water them daily in July." in read.text, read.text
        assert (home / ".claude" / "plugins" / "data" / "reme-reme-cc").is_dir()
    finally:
        kill_leftovers(run.run_id)


def test_unset_options_fall_back_to_inherited_environment(fake_api, tmp_path):
    """No plugin options at all: the ${user_config.*} defaults are empty and REME_WORKSPACE from the
    user's environment is used."""
    ws = make_workspace(tmp_path / "ws")
    fake_api.script(tool_use(T + "read", {"path": "digest/wiki/tomatoes.md"}), text("ok"), when=is_main)
    run = run_claude(
        "tomatoes?",
        api=fake_api,
        home=tmp_path / "home",
        cwd=tmp_path / "proj",
        env={"REME_WORKSPACE": str(ws), **NO_AGENTS},
    )
    try:
        assert run.rc == 0, run
        (read,) = fake_api.tool_results(T + "read")
        assert "Water them daily" in read.text, read.text
    finally:
        kill_leftovers(run.run_id)
