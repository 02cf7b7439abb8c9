"""Projects end to end with the real Claude Code CLI (bundled in claude-agent-sdk) and the fake API.

1. What an MCP server process and the transcript see when Claude Code starts in a subfolder of a git
   repository (a probe plugin whose server only records its cwd and environment).
2. A session started in project alpha recalls alpha's fact first through the plugin's MCP server, in
   a workspace where beta holds the contradicting fact (tests/support/project_corpus.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from support import project_corpus as pc
from support.claude_cli import kill_leftovers, leftover_processes, run_claude
from support.fake_api import all_of, fake_api, is_main, text, tool_result_for, tool_use  # noqa: F401

pytestmark = pytest.mark.e2e

T = "mcp__plugin_reme_reme__"

PROBE_SERVER = """\
import json, os, sys
with open(sys.argv[1], "w") as fh:
    json.dump({"cwd": os.getcwd(), "CLAUDE_PROJECT_DIR": os.environ.get("CLAUDE_PROJECT_DIR")}, fh)
for _ in sys.stdin:  # never answers: the CLI gives up on this server and carries on
    pass
"""


def probe_plugin(root: Path, dump: Path) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "probe", "version": "0.0.1"}))
    (root / "server.py").write_text(PROBE_SERVER)
    (root / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"probe": {"command": sys.executable, "args": [str(root / "server.py"), str(dump)]}}})
    )
    return root


def test_mcp_server_and_transcript_see_the_session_folder(fake_api, tmp_path):
    repo = tmp_path / "code" / "alpha"
    pc.git_init(repo)
    sub = repo / "web" / "app"
    sub.mkdir(parents=True)
    dump = tmp_path / "probe.json"
    fake_api.script(text("ok"), when=is_main)
    home = tmp_path / "home"
    run = run_claude(
        "hello",
        api=fake_api,
        home=home,
        cwd=sub,
        plugin_dir=probe_plugin(tmp_path / "probe", dump),
        allowed_tools=(),
        env={"CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "3000"},
    )
    try:
        assert run.rc == 0, run
        seen = json.loads(dump.read_text())
        # measured: the server runs in the folder Claude Code was started in (not the git root), and
        # CLAUDE_PROJECT_DIR is that same folder; the project's git root is found by walking up
        assert seen == {"cwd": str(sub), "CLAUDE_PROJECT_DIR": str(sub)}
        (transcript,) = (home / ".claude" / "projects").glob(f"*/{run.session_id}.jsonl")
        cwds = {json.loads(line).get("cwd") for line in transcript.read_text().splitlines()} - {None}
        assert cwds == {str(sub)}  # every entry carries the session's cwd
        from reme_cc.memory.project import cwd_of_entries, detect

        entries = [json.loads(line) for line in transcript.read_text().splitlines()]
        assert detect(cwd_of_entries(entries)).name == "alpha"
    finally:
        kill_leftovers(run.run_id)


def first_hit(search_text: str) -> str:
    m = re.search(r"=+ (\S+?\.md):\d+-\d+ ", search_text)
    assert m, search_text
    return m.group(1)


def test_session_in_project_alpha_recalls_alphas_fact_first(fake_api, tmp_path):
    lay = pc.build(tmp_path)
    question, fact_a, fact_b = pc.PAIRS[0]
    fake_api.rule(
        all_of(is_main, tool_result_for(T + "search")),
        lambda req: text(first_hit(req.tool_results(last_only=True)[0].text)),
    )
    fake_api.rule(is_main, tool_use(T + "search", {"query": question, "limit": 3}))
    cwd = lay.alpha / "src"
    cwd.mkdir()
    opts = {"workspace": str(lay.ws), "embedding": "none", "record": False, "auto_dream": False}
    run = run_claude(f"how do I {question} here?", api=fake_api, home=tmp_path / "home", cwd=cwd, plugin_options=opts)
    try:
        assert run.rc == 0, run
        (search,) = fake_api.tool_results(T + "search")
        assert not search.is_error, search.text
        assert first_hit(search.text) == lay.cards[(0, "alpha")] == run.result
        assert "project: alpha" in search.text and lay.cards[(0, "beta")] in search.text  # beta's after
        assert search.text.index("make check") < search.text.index("pytest -x")
        assert not leftover_processes(run.run_id)
    finally:
        kill_leftovers(run.run_id)


def test_a_team_memory_hit_is_read_through_the_plugin_at_the_path_it_shows(fake_api, tmp_path):
    """In a repository with a committed .reme/, Claude searches, then reads the team hit with the
    plugin's `read` at the `.reme/…` path the search showed."""
    repo = pc.git_init(tmp_path / "code" / "shop")
    team = repo / ".reme" / "digest" / "procedure"
    team.mkdir(parents=True)
    (team / "release.md").write_text(
        "---\nname: release\ndescription: how the shop is released\n---\n"
        "Release with `make ship-narwhal`, then tag the commit.\n"
    )

    # a team hit's header: "========== .reme/<path>:a-b [scores] team memory (written by others) =========="
    def shown(req):
        return re.search(
            r"^=+ (\.reme/\S+\.md):\d+-\d+ .*team memory \(written by others\)",
            req.tool_results(last_only=True)[0].text,
            re.M,
        )

    fake_api.rule(
        all_of(is_main, tool_result_for(T + "read")), lambda req: text(req.tool_results(last_only=True)[0].text)
    )
    fake_api.rule(
        all_of(is_main, tool_result_for(T + "search")),
        lambda req: tool_use(T + "read", {"path": shown(req).group(1)}) if shown(req) else text("no team hit"),
    )
    fake_api.rule(is_main, tool_use(T + "search", {"query": "ship-narwhal", "limit": 3}))
    opts = {"workspace": str(tmp_path / "ws"), "embedding": "none", "record": False, "auto_dream": False}
    run = run_claude("how do we release?", api=fake_api, home=tmp_path / "home", cwd=repo, plugin_options=opts)
    try:
        assert run.rc == 0, run
        (read,) = fake_api.tool_results(T + "read")
        assert not read.is_error, read.text
        assert "make ship-narwhal" in read.text and "make ship-narwhal" in run.result
    finally:
        kill_leftovers(run.run_id)
