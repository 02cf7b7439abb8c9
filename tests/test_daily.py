"""Daily tools: day index page creation, card listing, regeneration of the generated block."""

from __future__ import annotations

import pytest

from reme_cc.base.errors import InvalidInputError
from reme_cc.memory import daily as day
from reme_cc.notes.wikilinks import parse_links
from support.files_helpers import put, run


def _cards(ws):
    put(
        ws,
        "daily/2026-06-20/b-card.md",
        "---\nname: Bee | card\ndescription: |\n  two\n  lines\nsession_id: s2\n---\nx",
    )
    put(ws, "daily/2026-06-20/a-card.md", "---\nname: Alpha\ndescription: first card\nsession_id: s1\n---\nx")
    put(ws, "daily/2026-06-20/sub/c.md", "no frontmatter\n")
    put(ws, "daily/2026-06-20/interests.yaml", "topics: []\n")
    put(ws, "daily/2026-06-21/other.md", "---\nname: Other\n---\n")


@pytest.mark.parametrize("bad", ["2026-13-40", "2026-02-30", "yesterday", "20260620", "2026-6-1", "../x"])
def test_dates_validated(ctx, bad):
    for tool in ("daily_create", "daily_list", "daily_reindex"):
        with pytest.raises(InvalidInputError, match="date"):
            run(ctx, tool, date=bad)


def test_default_date_is_today(ctx, ws):
    import datetime as dt

    res = run(ctx, "daily_create")
    assert res.date == dt.date.today().isoformat() and (ws.root / res.path).exists()


def test_daily_create_idempotent(ctx, ws):
    res = run(ctx, "daily_create", date="2026-06-20")
    assert res.created and res.path == "daily/2026-06-20.md"
    assert (ws.root / "daily/2026-06-20").is_dir()
    (ws.root / "daily/2026-06-20.md").write_text((ws.root / "daily/2026-06-20.md").read_text() + "my notes\n")
    before = (ws.root / "daily/2026-06-20.md").read_bytes()
    again = run(ctx, "daily_create", date="2026-06-20")
    assert not again.created and (ws.root / "daily/2026-06-20.md").read_bytes() == before


def test_daily_list(ctx, ws):
    _cards(ws)
    res = run(ctx, "daily_list", date="2026-06-20")
    assert [c.path for c in res.cards] == [
        "daily/2026-06-20/a-card.md",
        "daily/2026-06-20/b-card.md",
        "daily/2026-06-20/sub/c.md",
    ]
    assert [(c.name, c.description) for c in res.cards] == [
        ("Alpha", "first card"),
        ("Bee | card", "two lines"),
        ("c", ""),
    ]
    assert not res.index_exists and "Alpha: first card" in res.text()
    assert run(ctx, "daily_list", date="2026-01-01").cards == []


def test_daily_reindex_links_every_card_and_keeps_hand_text(ctx, ws):
    _cards(ws)
    res = run(ctx, "daily_reindex", date="2026-06-20")
    assert res.changed and res.cards == 3
    text = (ws.root / "daily/2026-06-20.md").read_text()
    targets = [link.target for link in parse_links(text)]
    assert targets == ["daily/2026-06-20/a-card.md", "daily/2026-06-20/b-card.md", "daily/2026-06-20/sub/c.md"]
    assert "- [[daily/2026-06-20/b-card.md|Bee card]] — two lines" in text
    # hand-written text around the block survives, and regeneration is idempotent
    text = "Morning notes.\n\n" + text.replace(day.BLOCK_END, day.BLOCK_END + "\n\nEvening notes.")
    (ws.root / "daily/2026-06-20.md").write_text(text)
    assert not run(ctx, "daily_reindex", date="2026-06-20").changed
    put(ws, "daily/2026-06-20/d.md", "---\nname: Delta\ndescription: new\n---\n")
    assert run(ctx, "daily_reindex", date="2026-06-20").changed
    new = (ws.root / "daily/2026-06-20.md").read_text()
    assert new.startswith("Morning notes.\n") and new.rstrip().endswith("Evening notes.")
    assert "[[daily/2026-06-20/d.md|Delta]] — new" in new and new.count(day.BLOCK_START) == 1


def test_reindex_appends_block_to_hand_written_page(ctx, ws):
    put(ws, "daily/2026-06-21.md", "# My day\nwritten by hand\n")
    put(ws, "daily/2026-06-21/x.md", "---\nname: X\n---\n")
    run(ctx, "daily_reindex", date="2026-06-21")
    text = (ws.root / "daily/2026-06-21.md").read_text()
    assert text.startswith("# My day\nwritten by hand\n\n" + day.BLOCK_START)
    assert "[[daily/2026-06-21/x.md|X]]" in text


def test_reindex_broken_markers_refused(ctx, ws):
    raw = "text\n" + day.BLOCK_START + "\n- old\n"
    put(ws, "daily/2026-06-22.md", raw)
    with pytest.raises(InvalidInputError, match="broken generated block"):
        run(ctx, "daily_reindex", date="2026-06-22")
    assert (ws.root / "daily/2026-06-22.md").read_text() == raw


def test_reindex_crlf_page(ctx, ws):
    put(ws, "daily/2026-06-23.md", b"hand\r\n")
    put(ws, "daily/2026-06-23/x.md", "x")
    run(ctx, "daily_reindex", date="2026-06-23")
    data = (ws.root / "daily/2026-06-23.md").read_bytes()
    assert data.startswith(b"hand\r\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert not run(ctx, "daily_reindex", date="2026-06-23").changed


def test_empty_day_page(ctx, ws):
    run(ctx, "daily_reindex", date="2026-06-24")
    assert "No cards" in (ws.root / "daily/2026-06-24.md").read_text()


def test_helpers(ws):
    _cards(ws)
    assert day.date_of("daily/2026-06-20/a.md") == "2026-06-20" and day.date_of("daily/2026-06-20.md") == "2026-06-20"
    assert day.date_of("digest/wiki/x.md") is None
    assert day.find_card_by_session(ws, "s2").path == "daily/2026-06-20/b-card.md"
    assert day.find_card_by_session(ws, "nope") is None
