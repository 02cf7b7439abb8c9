"""Pinned notes (`pinned: true`, `reme-cc pin`): always a brief candidate; a dream adds to them but
never drops a line of them, unpins, moves or deletes them -- through the note service the dream's
agents write by, and end to end with the real CLI's integrator against the scripted fake API."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from support.claude_cli import sdk_env
from support.dream_script import extractor_turn, final, node_md, script_dream, T
from support.fake_api import FakeAPI, tool_use

from reme_cc.base.config import Config
from reme_cc.base.errors import ConflictError
from reme_cc.memory import dream
from reme_cc.memory.brief import build_brief
from reme_cc.notes.frontmatter import parse_note
from reme_cc.notes.pinned import is_pinned

DATE = "2026-06-20"
CARD = "daily/2026-06-20/deploy-chat.md"
NODE = "digest/procedure/deploy.md"
LINE = "Deploy only from the release branch, after the smoke tests."
PINNED = (
    "---\nname: Deploy\ndescription: how we deploy\npinned: true\n---\n# Deploy\n\n"
    f"{LINE}\n\n## Sources\n- First noted in [[daily/2026-06-01/db.md]].\n"
)


def _cli(root, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, REME_WORKSPACE=str(root), REME_EMBEDDING="none")
    return subprocess.run(
        [sys.executable, "-m", "reme_cc", "--workspace", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_is_pinned_reads_yaml_truth_and_nothing_else():
    assert is_pinned({"pinned": True}) and is_pinned({"pinned": "yes"}) and is_pinned({"pinned": " True "})
    assert not any(is_pinned(m) for m in ({}, {"pinned": False}, {"pinned": "no"}, {"pinned": 1}, None))


def test_pin_and_unpin_commands(ws):
    ws.write_text(NODE, PINNED.replace("pinned: true\n", ""))
    done = _cli(ws.root, "pin", NODE)
    assert done.returncode == 0 and "pinned" in done.stdout, done.stderr
    text = ws.read_bytes(NODE).decode()
    assert is_pinned(parse_note(text).meta) and "description: how we deploy\n" in text  # other lines verbatim
    assert _cli(ws.root, "unpin", NODE).returncode == 0
    assert "pinned" not in ws.read_bytes(NODE).decode()


def test_pin_refuses_what_is_no_note(ws):
    from reme_cc.base.errors import InvalidInputError, NotFoundError, PathError
    from reme_cc.notes.pinned import set_pinned
    from reme_cc.notes.store import NoteStore

    notes = NoteStore(ws)
    ws.write_text(NODE, PINNED)
    assert not set_pinned(notes, NODE, True).changed  # already pinned: nothing written
    with pytest.raises(NotFoundError, match="does not exist"):
        set_pinned(notes, "digest/procedure/nope.md", True)
    with pytest.raises(PathError, match="refused"):
        set_pinned(notes, "config.json", True)
    ws.write_text("resource/data.csv", "a,b\n")
    with pytest.raises(InvalidInputError, match="only notes"):
        set_pinned(notes, "resource/data.csv", True)


def test_a_dream_adds_to_a_pinned_note_but_never_drops_its_text(ws):
    ws.write_text(NODE, PINNED)
    ctx = dream.DreamContext(ws, Config.load(ws.root))
    try:
        notes = ctx.notes
        with pytest.raises(ConflictError, match="pinned by the user"):
            notes.replace_text(NODE, LINE, "Deploy from any branch.")
        with pytest.raises(ConflictError, match="its pin"):
            notes.update_frontmatter(NODE, {}, delete=["pinned"])
        with pytest.raises(ConflictError, match="never deletes"):
            notes.delete(NODE)
        with pytest.raises(ConflictError, match="never moves"):
            notes.move(NODE, "digest/procedure/deploy-old.md")
        assert ws.read_bytes(NODE).decode() == PINNED
        notes.replace_text(NODE, LINE, LINE + "\nRoll back with `make rollback`.")  # adding is fine
        assert LINE in ws.read_bytes(NODE).decode() and "make rollback" in ws.read_bytes(NODE).decode()
        other = "digest/procedure/other.md"
        ws.write_text(other, PINNED.replace("pinned: true\n", ""))
        notes.replace_text(other, LINE, "Deploy from any branch.")  # an unpinned node changes as before
    finally:
        ctx.close()


def test_a_pinned_note_is_always_a_brief_candidate(ws, idx):
    ws.write_text(NODE, PINNED)
    ws.write_text("digest/wiki/unrelated.md", PINNED.replace("pinned: true\n", "").replace("Deploy", "Gardening"))
    idx.sync()
    brief = build_brief(ws, Config.load(ws.root), cwd=str(ws.root / "nowhere"), today=DATE)
    assert NODE in brief and "unrelated" not in brief


@pytest.fixture
def api(monkeypatch, tmp_path):
    with FakeAPI() as fake:
        for k, v in sdk_env(fake, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_RETRIES", "0")
        yield fake


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_a_dream_integrator_that_rewrites_a_pinned_node_is_refused(ctx, api):
    ws = ctx.workspace
    ws.write_text(CARD, "---\nname: deploy chat\ndescription: deploys\n---\nWe now deploy from any branch.\n")
    ws.write_text(NODE, PINNED)
    units = [{"name": "Deploy", "bucket": "procedure", "summary": "deploy from any branch", "paths": [CARD]}]
    rewrite = node_md("Deploy", "how we deploy", "# Deploy\n\nDeploy from any branch.", [CARD])
    rewrite = rewrite.replace("---\n#", "---\n#", 1).replace(
        "description: how we deploy\n", "description: how we deploy\npinned: true\n"
    )
    plans = {"Deploy": [tool_use(T + "write", {"path": NODE, "content": rewrite}), final("REFINE", NODE)]}
    script_dream(api, extractions=[extractor_turn(units)], plans=plans)

    summary = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date=DATE)))

    refusals = [r for r in api.tool_results(T + "write") if r.is_error]
    assert refusals and "pinned by the user" in refusals[0].text, api.tool_results(T + "write")
    assert ws.read_bytes(NODE).decode() == PINNED  # the pinned text is all there
    assert summary.failed == 1, summary.text()
