"""Auto-resource: cards for files in resource/ — add, modify, delete — with the real CLI via the SDK
against the fake API for the text files, and code-written cards for binary ones."""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
import sys

import pytest

from support.claude_cli import sdk_env
from support.fake_api import FakeAPI, system_contains, text

from reme_cc.memory import resource
from reme_cc.notes.frontmatter import parse_note


def card_reply(name: str, gist: str):
    return text(f"---\nname: {name}\ndescription: {gist}\n---\n# {name}\n\n{gist}\n\n## Key points\n- {gist}\n")


def test_dating_filenames_and_binary_detection(ctx):
    ws = ctx.workspace
    ws.write_text("resource/notes.txt", "hello")
    ws.write_text("resource/2026-06-18/report.md", "# Report")
    ws.write_bytes("resource/2026-06-18/photo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    ws.write_bytes("resource/2026-06-18/fake.txt", b"abc\x00def")
    ws.write_text("resource/.hidden.md", "skip me")
    found = {r.path: r for r in resource.discover(ctx, "2026-06-20")}
    assert set(found) == {
        "resource/notes.txt",
        "resource/2026-06-18/report.md",
        "resource/2026-06-18/photo.png",
        "resource/2026-06-18/fake.txt",
    }
    assert (
        found["resource/notes.txt"].date == "2026-06-20" and found["resource/2026-06-18/report.md"].date == "2026-06-18"
    )
    assert [found[p].kind for p in sorted(found)] == ["binary", "image", "text", "text"]
    assert found["resource/2026-06-18/photo.png"].why == "an image file that could not be decoded"
    assert resource.card_filename("Q1 report: 光伏/硅料 [draft]?") == "Q1-report-光伏-硅料-draft.md"
    assert resource.card_filename("...") == "resource.md"


def test_binary_resources_are_listed_without_a_model(ctx, monkeypatch):
    from reme_cc.surfaces import agent

    async def boom(*a, **k):
        raise AssertionError("a binary resource must never reach a model")

    monkeypatch.setattr(agent, "run_agent", boom)
    ctx.workspace.write_bytes("resource/2026-06-18/scan.pdf", b"%PDF-1.4\x00\x01binary")
    report = asyncio.run(resource.sync_resources(ctx, today="2026-06-20"))
    assert list(report.listed) == ["resource/2026-06-18/scan.pdf"] and len(report.created) == 1
    assert "damaged" in report.listed["resource/2026-06-18/scan.pdf"]
    note = parse_note(ctx.workspace.read_bytes(report.created[0]).decode())
    assert (
        note.meta["source_resource"] == "[[resource/2026-06-18/scan.pdf]]"
        and "not interpreted" in note.meta["description"]
    )
    index = ctx.workspace.read_bytes("daily/2026-06-18.md").decode()
    assert f"[[{report.created[0]}|scan.pdf]]" in index


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_resource_add_modify_delete_round_trip(ctx, monkeypatch, tmp_path):
    ws = ctx.workspace
    today = dt.date.today().isoformat()
    with FakeAPI() as api:
        for k, v in sdk_env(api, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_RETRIES", "0")
        api.rule(
            system_contains("daily resource card"),
            [
                card_reply("Solar supply chain", "Polysilicon to modules, v1"),
                card_reply("Solar supply chain (revised)", "Polysilicon to modules, v2 with prices"),
            ],
        )
        ws.write_text("resource/solar.md", "# Solar\nPolysilicon → wafers → cells → modules.\n")

        added = asyncio.run(resource.sync_resources(ctx))
        assert added.created == [f"daily/{today}/Solar-supply-chain.md"] and not added.failed
        card = added.created[0]
        meta = parse_note(ws.read_bytes(card).decode()).meta
        assert meta["name"] == "Solar supply chain" and meta["source_resource"] == "[[resource/solar.md]]"
        assert "Polysilicon → wafers" in api.messages_requests()[0].last_user_text  # the agent saw the text
        assert f"[[{card}|Solar supply chain]]" in ws.read_bytes(f"daily/{today}.md").decode()
        assert card in [h.path for h in ctx.index.search("polysilicon modules", 5).results]

        n = len(api.messages_requests())
        assert asyncio.run(resource.sync_resources(ctx)).unchanged == 1  # unchanged: no agent call
        assert len(api.messages_requests()) == n

        ws.write_text("resource/solar.md", "# Solar\nNow with prices: polysilicon 60 CNY/kg.\n")
        modified = asyncio.run(resource.sync_resources(ctx))
        assert modified.updated == [card] and not modified.created  # updated in place
        assert "v2 with prices" in ws.read_bytes(card).decode()

        ws.resolve("resource/solar.md").unlink()
        removed = asyncio.run(resource.sync_resources(ctx))
        assert removed.removed == [card] and not ws.resolve(card).exists()
        assert card not in ws.read_bytes(f"daily/{today}.md").decode()
        assert card not in [h.path for h in ctx.index.search("polysilicon modules", 5).results]


def test_resource_cli_reports_cards(ws):
    ws.write_bytes("resource/2026-06-18/blob.bin", b"\x00\x01\x02")
    proc = subprocess.run(
        [sys.executable, "-m", "reme_cc", "--workspace", str(ws.root), "resource"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "1 created" in proc.stdout and "daily/2026-06-18/blob.bin.md" in proc.stdout


def _same_stat_rewrite(ws, rel: str, data: bytes) -> None:
    """Replace a file's bytes keeping its size and mtime: only a sync that reads every file notices."""
    p = ws.resolve(rel)
    st = p.stat()
    assert len(data) == st.st_size
    p.write_bytes(data)
    import os

    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_resource_sync_stats_first_and_hashes_only_what_changed(ctx):
    """Issue 11 item 6: an unchanged (mtime, size) is not read or hashed again; a touched file is
    hashed, and only a changed hash reaches the agent."""
    ws = ctx.workspace
    calls: list[str] = []

    async def fake(ctx_, res, text):
        calls.append(res.path)
        return f"---\nname: Note {len(calls)}\n---\n# Note\n\n{text[:40]}\n", 1

    ws.write_text("resource/2026-06-18/a.md", "# A\nalpha alpha\n")
    ws.write_bytes("resource/2026-06-18/blob.bin", b"\x00" * 4096)
    first = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert len(first.created) == 2 and calls == ["resource/2026-06-18/a.md"]
    # same size and mtime, other bytes: a stat-first sync does not open the files at all
    _same_stat_rewrite(ws, "resource/2026-06-18/a.md", b"# A\nbravo bravo\n")
    _same_stat_rewrite(ws, "resource/2026-06-18/blob.bin", b"\x01" * 4096)
    second = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert second.unchanged == 2 and not second.changed_paths and calls == ["resource/2026-06-18/a.md"]
    # a touch (new mtime) makes it hash the file: the hash changed, so the card is rewritten once
    import os

    os.utime(ws.resolve("resource/2026-06-18/a.md"))
    third = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert len(third.updated) == 1 and len(calls) == 2
    # a touch with the same content: hashed, found equal, no agent call, stat remembered
    os.utime(ws.resolve("resource/2026-06-18/a.md"), ns=(1, 1_700_000_000_000_000_000))
    fourth = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert fourth.unchanged == 2 and len(calls) == 2
    _same_stat_rewrite(ws, "resource/2026-06-18/a.md", b"# A\ncharl charl\n")
    assert asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake)).unchanged == 2


def test_the_recorder_run_also_updates_resource_cards(ws):
    """A file dropped into resource/ gets its card after the next recorded session, not only at the
    next dream; nothing is done while another process holds the resource lock."""
    from reme_cc.memory import daily

    ws.write_text("session/claude_code/s1.jsonl", "")
    ws.write_bytes("resource/2026-06-18/blob.bin", b"\x00\x01\x02")
    argv = [sys.executable, "-m", "reme_cc", "--workspace", str(ws.root), "auto-memory", "--session-id", "s1"]
    with ws.lock("resource", timeout=5):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "nothing new" in proc.stdout, proc.stdout + proc.stderr
        assert daily.list_cards(ws, "2026-06-18") == []
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cards = daily.list_cards(ws, "2026-06-18")
    assert len(cards) == 1 and cards[0].meta["source_resource"] == "[[resource/2026-06-18/blob.bin]]"
