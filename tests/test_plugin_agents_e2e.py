"""The plugin's agents (agents/*.md) as a user's Claude Code session sees them: listed for the Agent
tool, launched by the main thread, working with the plugin's MCP tools (real CLI, fake API)."""

from __future__ import annotations

import json

import pytest

from support.claude_cli import kill_leftovers, run_claude
from support.dream_script import node_md
from support.fake_api import all_of, fake_api, is_main, is_subagent, system_contains, text, tool_result_for, tool_use  # noqa: F401

pytestmark = pytest.mark.e2e

T = "mcp__plugin_reme_reme__"
CARD = "daily/2026-06-20/tooling.md"
NODE = "digest/personal/prefers-pnpm.md"


def test_the_integrator_keeps_a_lesson_from_the_users_session(fake_api, tmp_path):
    ws = tmp_path / "ws"
    (ws / "daily" / "2026-06-20").mkdir(parents=True)
    (ws / CARD).write_text(
        "---\nname: Tooling\ndescription: tooling chat\n---\nThe user said they use pnpm, never npm.\n"
    )
    ask = {
        "subagent_type": "reme:dream-integrator",
        "description": "keep the pnpm preference",
        "run_in_background": False,
        "prompt": f"Keep as a personal preference: the user uses pnpm, never npm. Source: {CARD}",
    }
    fake_api.rule(all_of(is_main, tool_result_for("Agent")), text("Kept it in digest/personal/prefers-pnpm.md."))
    fake_api.rule(
        all_of(is_subagent, system_contains("**Integrate** phase")),
        [
            tool_use(T + "search", {"query": "pnpm", "folder": "digest"}),
            tool_use(
                T + "write",
                {"path": NODE, "content": node_md("Prefers pnpm", "package manager", "The user uses pnpm.", [CARD])},
            ),
            text(json.dumps({"action": "CREATE", "path": NODE, "related": []})),
        ],
    )
    fake_api.rule(is_main, tool_use("Agent", ask))
    run = run_claude(
        "remember for good that I use pnpm",
        api=fake_api,
        home=tmp_path / "home",
        cwd=tmp_path / "proj",
        plugin_options={"workspace": str(ws), "embedding": "none", "record": False, "auto_dream": False},
    )
    try:
        assert run.rc == 0 and "prefers-pnpm" in (run.result or ""), run
        main = next(r for r in fake_api.messages_requests() if is_main(r))
        assert "- reme:dream-integrator: Keeps ONE durable lesson" in main.system_text
        for name in ("recorder", "dream-extractor", "resource"):
            assert f"reme:{name}" not in main.system_text  # pipeline-only prompts are not the user's agents
        sub = [r for r in fake_api.messages_requests() if is_subagent(r)]
        assert sub, "the integrator never ran"
        tools = {
            T + n for n in ("search", "traverse", "read", "frontmatter_read", "write", "edit", "frontmatter_update")
        }
        assert set(sub[0].tool_names) - {"DeferredToolPlaceholder"} == tools  # exactly its own, loaded at once
        write = [r for r in fake_api.tool_results(T + "write")]
        assert len(write) == 1 and not write[0].is_error, write
        assert f"[[{CARD}]]" in (ws / NODE).read_text()
        assert not run.permission_denials, run.permission_denials
    finally:
        kill_leftovers(run.run_id)
