"""Issue 21 items 12, 14: `reme-cc share` writes into a repository that will be pushed, so nothing
personal may go with the node — private spans, links to personal notes (in code and frontmatter too),
personal frontmatter keys, e-mail addresses, home paths, secrets — and it reads the node by the one file
rule (no symlink, no hard link). The command shows what it will write before writing it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reme_cc.base.errors import ReMeError
from reme_cc.memory.team import SHARED_KEYS, share
from reme_cc.notes.frontmatter import parse_note
from support.project_corpus import git_init

HOME = os.path.expanduser("~")
NETRC = "Netrc" + "S3cret77"


def personal_node(ws) -> str:
    rel = "digest/procedure/deploy.md"
    (ws.root / "daily" / "2026-11-30").mkdir(parents=True, exist_ok=True)
    (ws.root / "daily" / "2026-11-30" / "x.md").write_text("---\nname: deploy day\ndescription: d\n---\nx\n")
    ws.write_text(
        rel,
        f"""---
name: deploy
description: "how we deploy (ask alice.smith@example.com; logs in {HOME}/work/app)"
tags: [deploy, ops]
owner_email: bob@example.org
sources: ["[[daily/2026-11-30/x.md]]", "[[session/claude_code/s1.jsonl]]"]
source_resource: "[[resource/2026-11-30/notes.pdf]]"
project: app
cwd: {HOME}/work/app
---
Run `make ship` <private>my bank PIN is 4321</private>then wait.
See `[[daily/2026-11-30/x.md]]` and `cat session/claude_code/s1.jsonl` for the run.
Logs live in /home/alice/projects/app/logs and {HOME}/work/app/logs.
```
[[resource/2026-11-30/notes.pdf]]
machine build.example.com login ci password {NETRC}
```
Write to carol@example.net; clone git@github.com:org/app.git; ssh deploy@build.example.com.

## Sources

- [[daily/2026-11-30/x.md]]
- [[session/claude_code/s1.jsonl]]
""",
    )
    return rel


def test_share_leaves_everything_personal_behind(ctx, ws, tmp_path):
    repo = git_init(tmp_path / "repo")
    rel = personal_node(ws)
    result = share(ctx, rel, repo)
    text = (repo / ".reme" / rel).read_text()
    for leak in (
        "<private>",
        "bank PIN",
        "4321",
        "daily/2026-11-30",
        "session/claude_code",
        "resource/2026-11-30",
        "alice.smith@example.com",
        "bob@example.org",
        "carol@example.net",
        "/home/alice",
        HOME + "/",
        NETRC,
        "project: app",
        "owner_email",
        "sources:",
        "source_resource",
    ):
        assert leak not in text, (leak, text)
    meta = parse_note(text).meta
    assert set(meta) <= set(SHARED_KEYS) and meta["tags"] == ["deploy", "ops"] and meta["name"] == "deploy"
    assert "~/work/app" in meta["description"] and "~/projects/app/logs" in text and "~/work/app/logs" in text
    assert 'session "deploy day" of 2026-11-30' in text  # links in code become the same plain text
    assert "git@github.com:org/app.git" in text and "deploy@build.example.com" in text  # addresses of hosts stay
    assert "Run `make ship` then wait." in text
    assert result.redactions >= 1 and result.emails == 2 and result.private_spans == 1  # bob@ went with its key
    assert set(result.dropped_keys) == {"owner_email", "sources", "source_resource", "project", "cwd"}


def test_share_reads_the_node_by_the_file_rule(ctx, ws, tmp_path):
    repo = git_init(tmp_path / "repo")
    (ws.root / "config.json").write_text('{"api_key": "x"}')
    ws.write_text("session/claude_code/s.jsonl", '{"type": "user"}\n')
    outside = tmp_path / "home" / ".netrc"
    outside.parent.mkdir()
    outside.write_text(f"machine h login a password {NETRC}\n")
    (ws.root / "digest" / "procedure" / "settings.md").symlink_to("../../config.json")
    (ws.root / "digest" / "procedure" / "talk.md").symlink_to("../../session/claude_code/s.jsonl")
    os.link(outside, ws.root / "digest" / "procedure" / "netrc.md")
    for node in ("settings.md", "talk.md", "netrc.md"):
        with pytest.raises(ReMeError, match="symlink|hard link"):
            share(ctx, f"digest/procedure/{node}", repo)
    assert not list((repo / ".reme").rglob("*.md")) if (repo / ".reme").exists() else True
    # a link's target is read for its name by the same rule: a symlinked card lends the link no name
    (ws.root / "daily" / "2026-11-30").mkdir(parents=True)
    (tmp_path / "outside.md").write_text("---\nname: OUTSIDE-NAME\n---\nx\n")
    (ws.root / "daily" / "2026-11-30" / "y.md").symlink_to(tmp_path / "outside.md")
    ws.write_text("digest/procedure/ok.md", "ok\n\n## Sources\n\n- [[daily/2026-11-30/y.md]]\n")
    share(ctx, "digest/procedure/ok.md", repo)
    assert "OUTSIDE-NAME" not in (repo / ".reme" / "digest" / "procedure" / "ok.md").read_text()


def reme(*args: str, cwd: Path, stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reme_cc", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        timeout=120,
    )


def test_the_command_shows_what_it_will_write_and_asks(ws, tmp_path):
    repo = git_init(tmp_path / "repo")
    rel = personal_node(ws)
    dest = repo / ".reme" / rel
    shown = reme("share", rel, cwd=repo)  # not a terminal, no --yes: shown, nothing written
    assert shown.returncode == 3, shown
    assert "Run `make ship` then wait." in shown.stdout and "--yes" in shown.stdout + shown.stderr
    assert "dropped" in shown.stdout and "owner_email" in shown.stdout and not dest.exists()
    dry = reme("share", rel, "--dry-run", "--yes", cwd=repo)
    assert dry.returncode == 0 and "Run `make ship`" in dry.stdout and not dest.exists()
    as_json = reme("share", rel, "--json", cwd=repo)  # --json never asks: shown as JSON, nothing written
    planned = json.loads(as_json.stdout)
    assert as_json.returncode == 3 and planned["written"] is False and "owner_email" in planned["dropped_keys"]
    assert "Run `make ship` then wait." in planned["content"] and planned["dest"] == str(dest) and not dest.exists()
    # a terminal: asked, and "n" writes nothing
    for answer, written in (b"n\n", False), (b"y\n", True):
        leader, follower = pty.openpty()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "reme_cc", "share", rel],
                cwd=repo,
                stdin=follower,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                os.write(leader, answer)
                time.sleep(0.5)
            out, err = proc.communicate(timeout=60)
        finally:
            os.close(follower)
            os.close(leader)
        assert proc.returncode == (0 if written else 3), (out, err)
        assert dest.exists() == written, (out, err)
    assert "bank PIN" not in dest.read_text()
    again = reme("share", rel, "--yes", cwd=repo)
    assert again.returncode == 1 and "already exists" in again.stderr
