"""The user's real path, end to end (issue 11 item 0): the plugin installed from its marketplace into
a fresh HOME, running in the environment its own launcher built (tests/support/installed_plugin.py),
against the fake API. A session is recorded by the real Stop/SessionEnd hooks, ``/reme-dream`` runs
through the skill's Bash command, the dream writes a digest node, and the plugin's MCP search finds it.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from support.dream_script import create_plan, extractor_turn, script_dream
from support.fake_api import (
    FakeAPI,
    Request,
    all_of,
    any_user_contains,
    has_tool,
    not_,
    text,
    tool_result_for,
    tool_use,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(2400)]

T = "mcp__plugin_reme_reme__"
SAID = "For JavaScript projects I always use pnpm, never npm. Please keep that in mind."
NODE = "digest/personal/prefers-pnpm.md"


def in_user_session(req: Request) -> bool:
    """The user's own `claude -p` (entrypoint sdk-cli), not a memory agent's SDK session (sdk-py)."""
    return "sdk-cli" in req.headers.get("user-agent", "") and not req.agent_id


def wait_for_file(folder: Path, pattern: str, contains: str, timeout: float = 300.0) -> Path:
    """The detached recorder writes the card after the CLI has exited: wait for it (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in folder.glob(pattern):
            if contains in path.read_text(errors="replace"):
                return path
        time.sleep(0.5)
    logs = folder / "metadata" / "logs"
    raise AssertionError(
        f"no {pattern} containing {contains!r} after {timeout}s; logs:\n"
        + "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in sorted(logs.glob("*.log")))
    )


def skill_bash(req: Request) -> object:
    """What Claude does with the expanded /reme-dream skill: run its Bash command from the plugin folder
    "two levels above this skill's base directory"."""
    base = re.search(r"Base directory for this skill: (\S+)", req.last_user_text)
    assert base, req.last_user_text[:500]
    plugin = Path(base.group(1)).parents[1]
    undo = "<command-args>undo</command-args>" in req.last_user_text
    return tool_use(
        "Bash",
        {
            "command": f'python3 "{plugin}/scripts/launch.py" dream' + (" --undo" if undo else ""),
            "timeout": 600000,
            "description": "Run the reme dream",
        },
    )


def test_recorded_session_dreamed_and_recalled(installed_plugin):
    user = installed_plugin
    ws = user.workspace
    with FakeAPI(default=text("OK")) as api:
        # 1. a session, recorded by the real hooks: the recorder agent (Agent SDK) writes the daily card
        api.rule(
            has_tool("mcp__reme__daily_write"),
            [
                tool_use(
                    "mcp__reme__daily_write",
                    {
                        "name": "JavaScript package manager",
                        "description": "The user said they always use pnpm, never npm.",
                        "content": "## Conclusions\n- The user always uses pnpm, never npm, for JavaScript projects.\n",
                    },
                ),
                text("Recorded the card."),
            ],
        )
        api.rule(all_of(in_user_session, any_user_contains(SAID)), text("Noted: pnpm for every JavaScript project."))
        run = user.claude(SAID, api=api)
        assert run.rc == 0, run
        card = wait_for_file(ws, "daily/*/*.md", "pnpm")
        card_rel = card.relative_to(ws).as_posix()

        # 2. /reme-dream through the skill: its Bash command runs the dream in the plugin's env
        script_dream(
            api,
            extractions=[
                extractor_turn(
                    [
                        {
                            "name": "Prefers pnpm",
                            "bucket": "personal",
                            "summary": "The user uses pnpm, never npm, for JavaScript.",
                            "paths": [card_rel],
                        }
                    ]
                )
            ],
            plans={
                "Prefers pnpm": create_plan(
                    NODE, "Prefers pnpm", "The user uses pnpm rather than npm in every JavaScript project.", [card_rel]
                )
            },
        )
        api.rule(
            all_of(in_user_session, tool_result_for("Bash")), lambda req: text(req.tool_results(last_only=True)[0].text)
        )
        api.rule(
            all_of(in_user_session, any_user_contains("Base directory for this skill:"), not_(tool_result_for("Bash"))),
            skill_bash,
        )
        dream = user.claude("/reme-dream", api=api, allowed_tools=["Bash", "mcp__plugin_reme_reme"])
        assert dream.rc == 0, dream
        (bash,) = api.tool_results("Bash")
        assert not bash.is_error and "created" in bash.text.lower(), bash.text
        node = ws / NODE
        assert node.is_file(), bash.text
        assert f"[[{card_rel}]]" in node.read_text()

        # 3. recall through the plugin's MCP search, in a new session
        api.rule(all_of(in_user_session, tool_result_for(T + "search")), text("You prefer pnpm."))
        api.rule(
            all_of(in_user_session, any_user_contains("package manager do I use")),
            tool_use(T + "search", {"query": "which JavaScript package manager, pnpm or npm"}),
        )
        before = len(api.messages_requests())
        ask = user.claude("Which package manager do I use for JavaScript, pnpm or npm?", api=api)
        assert ask.rc == 0 and ask.result == "You prefer pnpm.", ask
        (search,) = api.tool_results(T + "search")
        assert not search.is_error and NODE in search.text, search.text
        # per-prompt recall (issue 24): the UserPromptSubmit hook put the node into the model's request
        # before it searched; a bare "yes" gets nothing
        # the user's session only: a recorder of an earlier session may be asking the fake API meanwhile
        asked = [r for r in api.messages_requests()[before:] if in_user_session(r)]
        first = json.dumps(asked[0].body, ensure_ascii=False)
        assert "package manager do I use" in first, first[-3000:]
        recalled = ws / "metadata" / "logs" / "recall.log"
        why = recalled.read_text()[-3000:] if recalled.exists() else "no recall.log"
        assert "ReMe recalled these notes" in first and "pnpm" in first, why
        assert NODE in first or card_rel in first, first[-3000:]
        before = len(api.messages_requests())
        yes = user.claude("yes", api=api)
        assert yes.rc == 0, yes
        said_yes = [r for r in api.messages_requests()[before:] if in_user_session(r)]
        assert said_yes and not any("ReMe recalled these notes" in json.dumps(r.body) for r in said_yes)
        log = [json.loads(line) for line in (ws / "metadata" / "logs" / "recall.log").read_text().splitlines()]
        assert [e["injected"][0]["path"] for e in log if e["injected"]][-1] in (NODE, card_rel)
        assert "acknowledgement" in log[-1]["abstained"]

        # 4. `/reme-dream undo` through the skill takes the node back out
        undo = user.claude("/reme-dream undo", api=api, allowed_tools=["Bash"])
        assert undo.rc == 0, undo
        assert "--undo" in api.tool_results("Bash")[-1].input["command"] and not node.exists(), undo

    # 5. the same plugin from a terminal (README: python3 <plugin>/scripts/launch.py ...): no Claude Code
    # variables, yet the env Claude Code uses, the default workspace, the CLI commands
    launcher, inside = (json.loads(user.terminal(*args).stdout) for args in (["--status"], ["env"]))
    assert launcher["ready"] and inside["ready"] and launcher["python"] == inside["python"], (launcher, inside)
    found = user.terminal("search", "pnpm npm")
    assert found.returncode == 0 and card_rel in found.stdout, found
    assert "all good" in user.terminal("doctor").stdout
