"""Dream pieces that need no model: interests, the dream catalog, answer parsing, change lists, undo,
the dream lock and the automatic-dream trigger."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reme_cc.base.errors import ConflictError, LockedError
from reme_cc.memory import dream, gitlog, interests
from reme_cc.memory.dream_trigger import STAMP, maybe_start_auto_dream
from reme_cc.notes.store import NoteStore

T = interests.Topic


def card(ws, rel: str, name: str, body: str) -> None:
    ws.write_text(rel, f"---\nname: {name}\ndescription: {name} notes\n---\n{body}\n")


# ---- interests ------------------------------------------------------------------------------------
def test_topic_similarity_and_merge():
    assert interests.similar(T("Rotating API keys"), T("rotating api-keys!"))
    assert interests.similar(T("光伏产业链研究"), T("光伏产业链"))
    assert interests.similar(T("a", keywords=["faiss", "vectors"]), T("b", keywords=["Faiss", "vectors", "x"]))
    assert not interests.similar(T("SQLite WAL"), T("React server components"))
    same_day = [T("SQLite WAL mode", paths=["daily/d/a.md"])]
    previous = [T("Key rotation")]
    cands = [
        T("sqlite wal-mode", paths=["daily/d/b.md"]),
        T("Key rotation!"),
        T("Jieba tokenising"),
        T("RRF fusion"),
        T("Too many"),
    ]
    merged = interests.merge_topics(same_day, cands, previous, 3)
    assert [t.title for t in merged] == ["SQLite WAL mode", "Jieba tokenising", "RRF fusion"]
    assert merged[0].paths == ["daily/d/a.md", "daily/d/b.md"]  # the twin widened today's topic


def test_interests_round_trip_with_and_without_yaml(ws, monkeypatch):
    topics = [T('Quotes "and" colons: yes', "why: because", "seen in [[daily/x.md]]", ["a", "中文"], ["daily/x.md"])]
    text = interests.render_interests("2026-06-20", topics, 3, 7)
    import yaml

    data = yaml.safe_load(text)
    assert data["date"] == "2026-06-20" and data["topic_count"] == 3 and data["diversity_days"] == 7
    assert data["topics"][0]["keywords"] == ["a", "中文"]
    plain = interests._parse_plain(text)  # the stdlib reader the SessionStart brief may use
    assert plain["topics"][0]["title"] == 'Quotes "and" colons: yes' and plain["topics"][0]["paths"] == ["daily/x.md"]
    ws.write_text(interests.interests_path("2026-06-20"), text)
    assert interests.read_interests(ws, "2026-06-20")[0].evidence == "seen in [[daily/x.md]]"
    assert interests.latest_interests(ws, "2026-06-25")[0] == "2026-06-20"
    ws.write_text(interests.interests_path("2026-06-21"), "topics: [unclosed\n")
    assert interests.read_interests(ws, "2026-06-21") == []  # broken hand edit: ignored, not fatal


def test_interests_hand_edit_reads_the_same_under_the_system_python(monkeypatch):
    """The brief (system python3, maybe without PyYAML) and the dream (plugin env) read interests.yaml
    with one parser, so a hand edit means the same topics to both."""
    text = (
        'date: "2026-06-20"\ntopics:\n  - title: Rotating keys  # my note\n    keywords:\n      - api key\n'
        '      - rotation\n    paths: ["daily/x.md"]\n'
    )
    with_yaml = interests.parse_interests(text)
    monkeypatch.setitem(sys.modules, "yaml", None)  # as under a python3 without PyYAML
    without = interests.parse_interests(text)
    assert with_yaml == without
    (topic,) = without["topics"]
    assert (
        topic.title == "Rotating keys" and topic.keywords == ["api key", "rotation"] and topic.paths == ["daily/x.md"]
    )


# ---- catalog and parsing ------------------------------------------------------------------------------
def test_scan_window_and_changed_files(ws):
    card(ws, "daily/2026-06-19/a.md", "A", "alpha")
    card(ws, "daily/2026-06-20/b.md", "B", "beta")
    card(ws, "daily/2026-06-17/old.md", "Old", "outside the window")
    ws.write_text("daily/2026-06-20/interests.yaml", "topics: []\n")
    ws.write_text("daily/2026-06-20.md", "# index page\n")
    dates = dream.window_dates("2026-06-20", 2)
    assert dates == ["2026-06-19", "2026-06-20"]
    scanned = dream.scan_daily(ws, dates)
    assert [s[0] for s in scanned] == ["daily/2026-06-19/a.md", "daily/2026-06-20/b.md"]
    catalog: dict = {}
    changed = dream.find_changed(ws, scanned, catalog)
    assert set(changed) == {"daily/2026-06-19/a.md", "daily/2026-06-20/b.md"}
    catalog.update(changed)
    assert dream.find_changed(ws, scanned, catalog) == {}
    # touched with the same bytes: not a change; new bytes: a change
    p = ws.resolve("daily/2026-06-19/a.md")
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 5_000_000_000))
    assert dream.find_changed(ws, dream.scan_daily(ws, dates), catalog) == {}
    card(ws, "daily/2026-06-20/b.md", "B", "beta, more")
    assert set(dream.find_changed(ws, dream.scan_daily(ws, dates), catalog)) == {"daily/2026-06-20/b.md"}


def test_parse_extraction_and_units(ws):
    card(ws, "daily/2026-06-20/a.md", "A", "alpha")
    answer = (
        'Sure.\n```json\n{"units": [{"name": "Use pnpm", "bucket": "Preferences", "summary": "s", '
        '"paths": ["daily/2026-06-20/a.md", "daily/missing.md", "../etc/passwd"]}, '
        '{"name": "No evidence", "bucket": "wiki", "paths": ["digest/wiki/x.md"]}, '
        '{"name": "Second", "bucket": "procedure", "paths": ["[[daily/2026-06-20/a.md]]"]}], "topics": []}\n```'
    )
    data = dream.parse_extraction(answer)
    units = dream.normalize_units(data["units"], ws, ["daily/2026-06-20/a.md"], 5)
    assert [(u.name, u.bucket, u.paths) for u in units] == [
        ("Use pnpm", "wiki", ["daily/2026-06-20/a.md"]),  # unknown bucket -> wiki; bad paths dropped
        ("Second", "procedure", ["daily/2026-06-20/a.md"]),
    ]
    assert len(dream.normalize_units(data["units"], ws, [], 1)) == 1
    with pytest.raises(Exception, match="no JSON object"):
        dream.parse_extraction("I found nothing worth keeping.")


# ---- change lists and undo without git ------------------------------------------------------------------
def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "metadata" not in p.relative_to(root).parts and ".git" not in p.relative_to(root).parts
    }


def test_change_list_and_undo_without_git(ws):
    ws.write_text("digest/wiki/keep.md", "old\n")
    ws.write_text("digest/wiki/gone.md", "bye\n")
    before = _tree(ws.root)
    rec = gitlog.ChangeRecorder(ws)
    rec.snapshot(["digest"])
    ws.write_text("digest/wiki/keep.md", "new\n")
    ws.write_text("digest/wiki/new.md", "fresh\n")
    ws.resolve("digest/wiki/gone.md").unlink()
    rec.touched("digest/wiki/keep.md", "digest/wiki/new.md", "digest/wiki/gone.md", "metadata/x")
    record = gitlog.save_run(ws, "run1", rec, {"date": "2026-06-20"})
    assert {c["path"] for c in record["changes"]} == {
        "digest/wiki/keep.md",
        "digest/wiki/new.md",
        "digest/wiki/gone.md",
    }
    assert json.loads(ws.read_bytes("metadata/dream/run1.json"))["changes"] == record["changes"]
    gitlog.undo_last_run(NoteStore(ws))
    assert _tree(ws.root) == before
    with pytest.raises(Exception, match="no dream run to undo"):
        gitlog.undo_last_run(NoteStore(ws))


def test_undo_refuses_when_user_edited_since(ws):
    rec = gitlog.ChangeRecorder(ws)
    rec.snapshot(["digest"])
    ws.write_text("digest/wiki/n.md", "dreamed\n")
    rec.touched("digest/wiki/n.md")
    gitlog.save_run(ws, "run1", rec, {})
    ws.write_text("digest/wiki/n.md", "dreamed, then edited by the user\n")
    with pytest.raises(ConflictError, match="changed since the dream"):
        gitlog.undo_last_run(NoteStore(ws))
    assert ws.read_bytes("digest/wiki/n.md") == b"dreamed, then edited by the user\n"


def git(ws, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws.root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def git_repo(ws, committed: dict[str, str], other: dict[str, str] | None = None) -> None:
    """The workspace as a git repository: ``committed`` files in its first commit, ``other`` files not."""
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    for rel, text in {**committed, **(other or {})}.items():
        ws.write_text(rel, text)
    git(ws, "add", *committed)
    git(ws, "commit", "-qm", "init")


def test_git_commit_of_exactly_the_changed_paths_and_revert(ws):
    git_repo(ws, {"digest/wiki/a.md": "a\n"}, {"notes-of-user.md": "user work in progress\n"})
    assert gitlog.is_git_repo(ws)
    before = _tree(ws.root)
    rec = gitlog.ChangeRecorder(ws)
    rec.snapshot(["digest"])
    ws.write_text("digest/wiki/a.md", "a, refined\n")
    ws.write_text("digest/wiki/b.md", "b\n")
    rec.touched("digest/wiki/a.md", "digest/wiki/b.md")
    sha = gitlog.git_commit(ws, [c["path"] for c in rec.changes()], "reme dream test", "run1")
    gitlog.save_run(ws, "run1", rec, {"commit": sha})
    shown = subprocess.run(
        ["git", "-C", str(ws.root), "show", "--name-only", "--format=%B", sha],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Reme-Dream-Run: run1" in shown
    assert "digest/wiki/a.md" in shown and "digest/wiki/b.md" in shown and "notes-of-user.md" not in shown
    gitlog.undo_last_run(NoteStore(ws))
    assert _tree(ws.root) == before
    log = subprocess.run(["git", "-C", str(ws.root), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert log.splitlines()[0].startswith("Revert")


def test_undo_of_a_commit_leaves_what_git_revert_leaves(tmp_path):
    """The undo writes through the note service, yet the work tree and the commit are git revert's: a
    twin repository reverted by git itself ends the same (files, their bytes, the commit message)."""
    from reme_cc.base.workspace import Workspace

    def repo(name: str) -> tuple[Workspace, str]:
        ws = Workspace(tmp_path / name)
        git_repo(ws, {"digest/wiki/a.md": "a\n", "digest/wiki/gone.md": "bye\n"})
        rec = gitlog.ChangeRecorder(ws)
        rec.snapshot(["digest"])
        ws.write_text("digest/wiki/a.md", "a, refined\n")
        ws.write_text("digest/wiki/new.md", "fresh\n")
        ws.resolve("digest/wiki/gone.md").unlink()
        rec.touched("digest/wiki/a.md", "digest/wiki/new.md", "digest/wiki/gone.md")
        sha = gitlog.git_commit(ws, [c["path"] for c in rec.changes()], "reme dream test", "run1")
        gitlog.save_run(ws, "run1", rec, {"commit": sha})
        return ws, sha

    ours, our_sha = repo("ours")
    gitlog.undo_last_run(NoteStore(ours))
    theirs, sha = repo("theirs")
    git(theirs, "revert", "--no-edit", sha)
    assert _tree(ours.root) == _tree(theirs.root)
    assert git(ours, "log", "-1", "--format=%B") == git(theirs, "log", "-1", "--format=%B").replace(sha, our_sha)
    assert git(ours, "log", "-1", "--format=%T") == git(theirs, "log", "-1", "--format=%T")  # the same tree committed
    assert git(ours, "status", "--porcelain") == git(theirs, "status", "--porcelain")


def test_undo_of_a_commit_is_refused_like_git_revert_while_changes_are_staged(ws):
    git_repo(ws, {"digest/wiki/a.md": "a\n"}, {"staged.md": "the user's work\n"})
    rec = gitlog.ChangeRecorder(ws)
    rec.snapshot(["digest"])
    ws.write_text("digest/wiki/a.md", "a, refined\n")
    rec.touched("digest/wiki/a.md")
    gitlog.save_run(ws, "run1", rec, {"commit": gitlog.git_commit(ws, ["digest/wiki/a.md"], "dream", "run1")})
    git(ws, "add", "staged.md")
    with pytest.raises(ConflictError, match="would be overwritten by revert"):
        gitlog.undo_last_run(NoteStore(ws))
    assert ws.read_bytes("digest/wiki/a.md") == b"a, refined\n"


# ---- lock, no-change dream, trigger ---------------------------------------------------------------------
def test_second_dream_reports_the_lock(ctx):
    with ctx.workspace.lock("dream", timeout=0):
        with pytest.raises(LockedError, match="another dream is already running"):
            asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date="2026-06-20")))


def test_dream_without_changes_calls_no_agent(ctx, monkeypatch):
    from reme_cc.surfaces import agent

    async def boom(*a, **k):  # any agent call would be a bug here
        raise AssertionError("agent called")

    monkeypatch.setattr(agent, "run_agent", boom)
    summary = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date="2026-06-20")))
    assert summary.error is None and summary.changed == 0 and summary.agent_sessions == 0
    assert ctx.workspace.resolve(STAMP).exists()


def test_two_cli_dreams_at_once_one_reports_the_lock(ws, tmp_path):
    """Two real `reme-cc dream` processes: the lock is held by the first (simulated by a slow holder)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys,time; from reme_cc.base.workspace import Workspace; ws=Workspace(sys.argv[1]);\n"
                "with ws.lock('dream', timeout=0):\n print('held', flush=True); time.sleep(20)"
            ),
            str(ws.root),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        proc = subprocess.run(
            [sys.executable, "-m", "reme_cc", "--workspace", str(ws.root), "dream"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 75, proc.stderr
        assert "another dream is already running" in proc.stderr
        assert "Traceback" not in proc.stderr
    finally:
        holder.kill()
        holder.wait()


def test_auto_dream_trigger(ws, tmp_path, monkeypatch):
    from reme_cc.base.config import Config

    assert not maybe_start_auto_dream(ws, Config(auto_dream=False))
    fake_python = tmp_path / "fake-python"
    marker = tmp_path / "spawned"
    fake_python.write_text(f'#!/bin/sh\necho "$@" >> {marker}\n')
    fake_python.chmod(0o755)
    monkeypatch.setenv("REME_PYTHON", str(fake_python))  # stands in for the plugin env's python
    assert maybe_start_auto_dream(ws, Config())
    assert not maybe_start_auto_dream(ws, Config())  # debounced: just requested
    deadline = time.time() + 10
    while not marker.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert "-m reme_cc --workspace" in marker.read_text() and marker.read_text().strip().endswith("dream")
    assert maybe_start_auto_dream(ws, Config(dream_interval_hours=0))
    with ws.lock("dream", timeout=0):  # a dream running right now: do not start another
        assert not maybe_start_auto_dream(ws, Config(dream_interval_hours=0))
