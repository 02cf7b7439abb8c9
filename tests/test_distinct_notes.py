"""Distinct notes first (issue 25, 1): a result list spends its slots on different notes, the best chunk
of each with the note's other matching chunks folded in as line ranges, unless chunks are asked for
(the search tool's ``chunks``, the CLI's ``--chunks``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reme_cc.index.search import distinct_notes
from reme_cc.tools import Context
from support.files_helpers import run

REME = str(Path(sys.executable).with_name("reme-cc"))


def long_session(ws) -> list[tuple[int, int]]:
    """One long note that matches "marmot burrow" in four sections, and four short notes that match it
    once each, less strongly. Returns the line ranges of the long note's sections."""
    sections, ranges, line = [], [], 2
    for i in range(4):
        body = (
            f"## Part {i}\n"
            + "Marmot burrow survey, marmot burrow depth and marmot burrow entrances.\n" * 3
            + ("Field notes about the weather and the trail.\n" * 10)
        )
        sections.append(body)
        n = body.count("\n")
        ranges.append((line, line + n))
        line += n + 1
    ws.write_text("daily/2026-06-01/long.md", "# Survey\n\n" + "\n".join(sections))
    for i in range(4):
        ws.write_text(
            f"daily/2026-06-0{i + 2}/short{i}.md",
            f"# Day {i}\nSaw one marmot today {i}.\n" + "Walked the ridge trail in the rain.\n" * 10,
        )
    return ranges


def test_one_hit_per_note_with_the_others_folded(ws, idx):
    long_session(ws)
    idx.sync()
    chunked = idx.search("marmot burrow", limit=5, chunks=True).results
    assert [h.path for h in chunked[:4]] == ["daily/2026-06-01/long.md"] * 4  # before: four slots on one note
    hits = idx.search("marmot burrow", limit=5).results
    assert len({h.path for h in hits}) == 5
    first = hits[0]
    assert first.path == "daily/2026-06-01/long.md"
    assert (first.start_line, first.end_line) == (chunked[0].start_line, chunked[0].end_line)  # its best chunk
    folded = sorted((h.start_line, h.end_line) for h in chunked[1:4])
    assert first.also == folded  # the note's other matching chunks, in line order
    assert all(h.also == [] for h in hits[1:])
    assert all(h.also == [] for h in chunked)


def test_fewer_notes_than_the_limit_gives_fewer_hits(ws, idx):
    long_session(ws)
    idx.sync()
    hits = idx.search("marmot burrow", limit=20).results
    assert [h.path for h in hits].count("daily/2026-06-01/long.md") == 1 and len(hits) == 5


def test_distinct_notes_arithmetic():
    ranked = [(1, (0.9, 0, 0)), (2, (0.8, 0, 0)), (3, (0.7, 0, 0)), (4, (0.6, 0, 0)), (5, (0.5, 0, 0))]
    paths = {1: "a.md", 2: "a.md", 3: "b.md", 4: "a.md"}  # 5: removed meanwhile, stands alone
    out, folded = distinct_notes(ranked, paths)
    assert [cid for cid, _ in out] == [1, 3, 5]
    assert folded == {1: [2, 4]}


def test_tool_text_and_cli_flag(ws, idx):
    long_session(ws)
    idx.sync()
    ctx = Context(ws, idx.config, idx)
    res = run(ctx, "search", query="marmot burrow", limit=3)
    text = res.text()
    assert text.count("daily/2026-06-01/long.md:") == 1 and "also matches lines: " in text
    assert len({h.path for h in res.results}) == 3
    res = run(ctx, "search", query="marmot burrow", limit=3, chunks=True)
    assert [h.path for h in res.results] == ["daily/2026-06-01/long.md"] * 3
    env = {**os.environ, "REME_EMBEDDING": "none", "REME_WORKSPACE": str(ws.root)}
    cmd = [REME, "search", "marmot burrow", "--limit", "3", "--json"]
    got = []
    for c in (cmd, [*cmd, "--chunks"]):
        out = subprocess.run(c, capture_output=True, text=True, env=env, timeout=120)
        got.append([h["path"] for h in json.loads(out.stdout)["results"]])
    assert len(set(got[0])) == 3
    assert got[1] == ["daily/2026-06-01/long.md"] * 3
