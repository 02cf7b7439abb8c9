"""The dream end to end: the real Claude CLI through the Agent SDK against the scripted fake API."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from support.claude_cli import sdk_env
from support.dream_script import (
    corroborate_plan,
    create_plan,
    extractor_requests,
    extractor_turn,
    final,
    script_dream,
    subagent_ids,
    T,
)
from support.fake_api import FakeAPI, tool_use

from reme_cc.memory import dream, interests
from reme_cc.notes.evidence import link_targets, sources_section
from reme_cc.notes.frontmatter import parse_note

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

DATE = "2026-06-20"
C1 = "daily/2026-06-19/leaked-key.md"
C2 = "daily/2026-06-20/key-rotation-and-wal.md"
C3 = "daily/2026-06-20/tooling-chat.md"
WAL = "digest/wiki/sqlite-wal.md"
WAL_TEXT = (
    "---\nname: SQLite WAL mode\ndescription: readers never block the writer\n---\n"
    "WAL lets many readers run while one writer commits.\n\n## Sources\n- First noted in [[daily/2026-06-01/db.md]].\n"
)


@pytest.fixture
def api(monkeypatch, tmp_path):
    with FakeAPI() as fake:
        for k, v in sdk_env(fake, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_RETRIES", "0")
        yield fake


def card(ws, rel: str, name: str, body: str) -> None:
    ws.write_text(rel, f"---\nname: {name}\ndescription: {name}\n---\n{body}\n")


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {"metadata", ".git"} & set(p.relative_to(root).parts)
    }


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_dream_creates_corroborates_commits_and_undoes(ctx, api):
    ws = ctx.workspace
    card(ws, C1, "Leaked key", "The staging API key leaked in a log; we rotated it within the hour.")
    card(
        ws,
        C2,
        "Key rotation and WAL",
        "Rotated keys again via the vault script. SQLite in WAL mode kept readers going.",
    )
    card(ws, C3, "Tooling chat", "User said again they prefer pnpm over npm for every JS project.")
    ws.write_text(WAL, WAL_TEXT)
    git(ws.root, "init", "-q")
    ws.write_text(".gitignore", "metadata/\n")  # as `reme-cc init --git` sets it up
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "before the dream")
    before = tree(ws.root)

    units = [
        {
            "name": "Rotate leaked API keys",
            "bucket": "procedure",
            "summary": "Rotate a leaked key within the hour using the vault script.",
            "paths": [C1, C2],
        },
        {"name": "Prefers pnpm", "bucket": "personal", "summary": "The user prefers pnpm over npm.", "paths": [C3]},
        {"name": "SQLite WAL mode", "bucket": "wiki", "summary": "WAL keeps readers going.", "paths": [C2]},
    ]
    topics = [
        {
            "title": "Secrets hygiene",
            "reason": "two leaks this week",
            "evidence": "rotations on 19 and 20",
            "keywords": ["api key", "vault"],
            "paths": [C1, C2],
        },
        {"title": "JS tooling", "reason": "pnpm", "evidence": "chat", "keywords": ["pnpm"], "paths": [C3]},
    ]
    rotate = "digest/procedure/rotate-leaked-api-keys.md"
    pnpm = "digest/personal/prefers-pnpm.md"
    plans = {
        "Rotate leaked API keys": create_plan(
            rotate,
            "Rotate leaked API keys",
            "Rotate a leaked key within the hour with the vault script; see also [[digest/wiki/sqlite-wal.md]] "
            "for why the services kept reading meanwhile.",
            [C1, C2],
            [WAL],
        ),
        "Prefers pnpm": create_plan(pnpm, "Prefers pnpm", "Use pnpm, not npm, in the user's JS projects.", [C3]),
        "SQLite WAL mode": corroborate_plan(
            WAL,
            "SQLite WAL mode",
            "- First noted in [[daily/2026-06-01/db.md]].\n",
            f"- First noted in [[daily/2026-06-01/db.md]].\n- Confirmed again in [[{C2}]] during a key rotation.\n",
        ),
    }
    script_dream(api, extractions=[extractor_turn(units, topics)], plans=plans)

    summary = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date=DATE)))

    assert summary.error is None, summary.text()
    assert (summary.changed, summary.units, summary.created, summary.corroborated, summary.failed) == (3, 3, 2, 1, 0), (
        summary.text()
    )
    assert len(subagent_ids(api)) == 3  # one subagent per unit, each with its own x-claude-code-agent-id
    assert summary.agent_sessions == 2 and summary.tokens > 0
    for node, sources in ((rotate, {C1, C2}), (pnpm, {C3}), (WAL, {C2, "daily/2026-06-01/db.md"})):
        text = ws.read_bytes(node).decode()
        assert sources <= link_targets(sources_section(text) or "")
    assert WAL in link_targets(ws.read_bytes(rotate).decode())  # related node woven in
    assert parse_note(ws.read_bytes(pnpm).decode()).meta["name"] == "Prefers pnpm"
    assert {n["path"]: n["action"] for n in summary.nodes} == {rotate: "CREATE", pnpm: "CREATE", WAL: "CORROBORATE"}
    # the index finds the new nodes (written through the tools, so already indexed)
    assert pnpm in [h.path for h in ctx.index.node_search("pnpm", 10)]
    assert rotate in [h.path for h in ctx.index.search("vault script rotation", 5).results]
    data = interests.parse_interests(ws.read_bytes(f"daily/{DATE}/interests.yaml").decode())
    assert data["date"] == DATE and [t.title for t in data["topics"]] == ["Secrets hygiene", "JS tooling"]
    # one git commit of exactly what the dream changed, summary as message
    log = git(ws.root, "log", "-1", "--format=%B", "--name-only")
    assert "2 created, 1 corroborated" in log and f"Reme-Dream-Run: {summary.run}" in log
    assert {rotate, pnpm, WAL, f"daily/{DATE}/interests.yaml"} <= set(log.split())
    assert C1 not in log.split()  # sources are not rewritten

    n_requests = len(api.messages_requests())
    again = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date=DATE)))
    assert again.changed == 0 and again.agent_sessions == 0 and again.error is None
    assert len(api.messages_requests()) == n_requests  # nothing changed -> no agent call at all

    dream.undo(ctx)
    assert tree(ws.root) == before
    assert not git(ws.root, "status", "--porcelain")


def test_dropped_sources_link_is_refused_and_failed_unit_is_retried(ctx, api):
    ws = ctx.workspace
    good, bad = "daily/2026-06-20/good.md", "daily/2026-06-20/bad.md"
    card(ws, good, "Good", "Use ripgrep for code search.")
    card(ws, bad, "Bad", "WAL again.")
    ws.write_text(WAL, WAL_TEXT)
    units = [
        {"name": "Use ripgrep", "bucket": "procedure", "summary": "rg is faster", "paths": [good]},
        {"name": "SQLite WAL mode", "bucket": "wiki", "summary": "WAL", "paths": [bad]},
    ]
    node = "digest/procedure/use-ripgrep.md"
    plans = {
        "Use ripgrep": create_plan(node, "Use ripgrep", "Prefer rg for searching code.", [good]),
        # tries to replace the existing Sources link instead of adding to it, then claims success
        "SQLite WAL mode": [
            tool_use(
                T + "edit",
                {
                    "path": WAL,
                    "old_text": "- First noted in [[daily/2026-06-01/db.md]].",
                    "new_text": f"- Noted in [[{bad}]].",
                },
            ),
            final("CORROBORATE", WAL),
        ],
    }
    script_dream(api, extractions=[extractor_turn(units), extractor_turn([])], plans=plans)

    first = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date=DATE, concurrency=2)))
    assert (first.created, first.failed) == (1, 1), first.text()
    assert ws.read_bytes(WAL).decode() == WAL_TEXT  # the refused edit changed nothing
    refusals = [r for r in api.tool_results(T + "edit") if r.is_error]
    assert refusals and "daily/2026-06-01/db.md" in refusals[0].text  # the error names the lost link
    assert first.failures[0]["paths"] == [bad]
    catalog = dream.load_catalog(ws)
    assert good in catalog and bad not in catalog

    second = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date=DATE)))
    assert second.changed == 1 and second.error is None
    prompt = extractor_requests(api)[-1].messages[0]
    text = json.dumps(prompt, ensure_ascii=False)
    assert f"### {bad}" in text and f"### {good}" not in text  # exactly the failed unit's files again
    assert bad in dream.load_catalog(ws)
