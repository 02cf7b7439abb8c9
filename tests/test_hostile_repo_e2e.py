"""Issue 21, done means: one repository holding every trick of the review (tests/support/hostile_repo.py),
opened by a real Claude Code session with the plugin. The session's brief, a search and a `list` show
nothing forged and nothing from outside the repository, nothing is created outside it, none of its code
runs, and every tool answers within a second while its content is indexed in the background."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from support import hostile_repo as hr
from support.claude_cli import REPO, kill_leftovers, run_claude
from support.fake_api import all_of, fake_api, is_main, text, tool_result_for, tool_use  # noqa: F401
from support.mcp_stdio import McpProcess

pytestmark = pytest.mark.e2e

T = "mcp__plugin_reme_reme__"
FORGED = (hr.HIDDEN, hr.FORGED_RULE, hr.SYSTEM_NOTICE, hr.OUTSIDE_SECRET)


def personal_workspace(root: Path) -> Path:
    (root / "digest" / "procedure").mkdir(parents=True)
    (root / "digest" / "procedure" / "deploy-mine.md").write_text(
        "---\nname: my deploy routine\ndescription: how I deploy services\n---\n"
        "I deploy with `./ship.sh --canary` and watch the dashboard.\n"
    )
    return root


def forged_lines(output: str) -> list[str]:
    """Lines of tool or brief output that pose as something they are not: a hit header for a team note
    without its `.reme/` path, a personal brief entry made by a folder name, text from outside."""
    bad = []
    for line in output.splitlines():
        if line.startswith("========== digest/procedure/deploy.md"):
            bad.append(line)  # the team note's fake header, or the team hit shown without `.reme/`
        if line.startswith("- digest/procedure/release.md"):
            bad.append(line)
        if line.strip().startswith(hr.SYSTEM_NOTICE):
            bad.append(line)
        if hr.HIDDEN in line or hr.OUTSIDE_SECRET in line:
            bad.append(line)
    return bad


def test_a_hostile_repository_in_a_real_session(fake_api, tmp_path):
    hostile = hr.build(tmp_path / "attack")
    ws = personal_workspace(tmp_path / "ws")
    fake_api.rule(all_of(is_main, tool_result_for(T + "list")), text("done"))
    fake_api.rule(all_of(is_main, tool_result_for(T + "search")), tool_use(T + "list", {"path": ".reme/digest/wiki"}))
    fake_api.rule(is_main, tool_use(T + "search", {"query": "deploy", "limit": 10}))
    opts = {"workspace": str(ws), "embedding": "none", "record": False, "auto_dream": False}
    run = run_claude(
        "how do we deploy?",
        api=fake_api,
        home=tmp_path / "home",
        cwd=hostile.repo,
        plugin_options=opts,
        env={"REME_RECORD": "false", "REME_AUTO_DREAM": "false"},
    )
    try:
        assert run.rc == 0, run
        first = json.dumps(fake_api.messages_requests()[0].body, ensure_ascii=False)
        context = json.loads(first)
        brief = "\n".join(_texts(context))
        assert "reme-cc trust" in brief, brief  # said once: how to let this repository's notes in
        assert forged_lines(brief) == [], brief
        assert hr.INSTRUCTION not in brief  # an untrusted repository's team memory stays out of the brief
        # per-prompt recall ran on this prompt (the first request holds what it injected, checked above),
        # and nothing of the untrusted repository's team memory was a candidate for it
        (entry,) = [json.loads(line) for line in (ws / "metadata" / "logs" / "recall.log").read_text().splitlines()]
        assert entry["prompt"] == "how do we deploy?" and entry["source"], entry
        assert not any(c["workspace"] == "team" for c in entry["injected"] + entry["considered"]), entry
        (search,) = fake_api.tool_results(T + "search")
        assert not search.is_error, search.text
        assert "deploy-mine.md" in search.text, search.text  # the team notes may still be being indexed
        assert forged_lines(search.text) == [], search.text
        (listing,) = fake_api.tool_results(T + "list")
        assert not listing.is_error, listing.text
        assert forged_lines(listing.text) == [], listing.text
    finally:
        kill_leftovers(run.run_id)
    assert hostile.code_ran() == []
    assert hostile.outside_files() == ["diary.md"]


def _texts(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [t for v in node.values() for t in _texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return []


def test_every_tool_answers_within_a_second_while_the_repository_is_indexed(tmp_path):
    hostile = hr.build(tmp_path / "attack", daily_notes=20_000)
    ws = personal_workspace(tmp_path / "ws")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update(
        REME_WORKSPACE=str(ws),
        REME_EMBEDDING="none",
        REME_PYTHON=sys.executable,
        CLAUDE_PLUGIN_ROOT=str(REPO),
        CLAUDE_PLUGIN_DATA=str(tmp_path / "data"),
    )
    calls = [
        ("search", {"query": "deploy"}),
        ("list", {"path": ".reme/digest/wiki"}),
        ("node_search", {"query": "deploy"}),
        ("status", {}),
        ("search", {"query": "quokkas"}),
    ]
    with McpProcess(
        [sys.executable, str(REPO / "scripts" / "launch.py"), "mcp"], env=env, cwd=str(hostile.repo)
    ) as srv:
        srv.initialize()
        srv.request("tools/list")
        took = {}
        for name, args in calls:
            t0 = time.monotonic()
            out = srv.call_tool(name, args)
            took[f"{name} {args}"] = time.monotonic() - t0
            assert not out["isError"], srv.text(out)
            assert forged_lines(srv.text(out)) == [], srv.text(out)
        print(
            "\nfirst calls in a repository with 20,000 team notes and two page-tree PDFs:",
            {k: f"{v * 1000:.0f} ms" for k, v in took.items()},
        )
        assert max(took.values()) < 1.0, took
        # once indexed in the background, the team note is found, under its own path, labelled, unforged
        deadline = time.monotonic() + 300
        while True:
            found = srv.text(srv.call_tool("search", {"query": "blue-green deploy script"}))
            if ".reme/digest/procedure/deploy.md" in found or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert ".reme/digest/procedure/deploy.md" in found and hr.INSTRUCTION in found, found
        assert forged_lines(found) == [], found
        assert srv.stop() == 0
    assert hostile.code_ran() == [] and hostile.outside_files() == ["diary.md"]
