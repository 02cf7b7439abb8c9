"""Index: catalog, incremental sync, links and their resolution, multi-process safety, self-repair."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from reme_cc.base.config import Config
from reme_cc.base.errors import InvalidInputError, NotFoundError
from reme_cc.index import Index
from reme_cc.index import catalog
from support.files_helpers import note

PY = sys.executable


def counts(index: Index) -> dict:
    return index.read(
        lambda c: {
            "files": c.execute("SELECT COUNT(*) FROM files").fetchone()[0],
            "chunks": c.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
            "fts": c.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0],
            "orphans": c.execute("SELECT COUNT(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)").fetchone()[
                0
            ],
        }
    )


def test_sync_add_modify_delete_rename(ws, idx):
    ws.write_text("digest/wiki/a.md", note("Alpha", "first", "# A\nalpha content about zebras"))
    ws.write_text("daily/2026-06-20/b.md", note("Beta", "second", "beta content [[digest/wiki/a.md]]"))
    (ws.root / "resource" / "r.zip").write_bytes(b"PK\x03\x04 binary")
    r = idx.sync()
    assert sorted(r.added) == ["daily/2026-06-20/b.md", "digest/wiki/a.md", "resource/r.zip"]
    assert idx.file_info("digest/wiki/a.md").name == "Alpha"
    assert idx.file_info("daily/2026-06-20/b.md").date == "2026-06-20"
    assert idx.file_info("resource/r.zip").indexed is False  # catalogued (links resolve), no chunks
    assert idx.sync().touched is False  # nothing changed: nothing written

    # modify
    time.sleep(0.01)
    ws.write_text("digest/wiki/a.md", note("Alpha2", "first", "# A\nalpha content about giraffes"))
    r = idx.sync()
    assert r.changed == ["digest/wiki/a.md"]
    assert idx.search("giraffes").results[0].path == "digest/wiki/a.md"
    assert idx.search("zebras").results == []
    # touched but same content: hash says unchanged
    os.utime(ws.root / "digest/wiki/a.md", None)
    os.utime(ws.root / "digest/wiki/a.md", ns=(time.time_ns(), time.time_ns() + 10_000_000))
    r = idx.sync()
    assert r.changed == [] and r.unchanged == 1
    # rename by hand: old path gone, new path present, the link from b now dangles
    os.rename(ws.root / "digest/wiki/a.md", ws.root / "digest/wiki/c.md")
    r = idx.sync()
    assert r.removed == ["digest/wiki/a.md"] and r.added == ["digest/wiki/c.md"]
    assert idx.search("giraffes").results[0].path == "digest/wiki/c.md"
    out = idx.outbound_links("daily/2026-06-20/b.md")
    assert out[0].resolved_path is None and out[0].how == "missing"
    assert idx.status()["dangling_links"] == 1
    # delete
    (ws.root / "daily/2026-06-20/b.md").unlink()
    r = idx.sync()
    assert r.removed == ["daily/2026-06-20/b.md"]
    c = counts(idx)
    assert c["chunks"] == c["fts"] and c["orphans"] == 0
    assert idx.status()["links"] == 0


def test_update_paths_is_immediate_and_handles_folders(ws, idx):
    idx.sync()
    ws.write_text("digest/wiki/x/one.md", "# One\nkumquat")
    ws.write_text("digest/wiki/x/two.md", "# Two\nkumquat two")
    idx.update_paths(["digest/wiki/x/one.md", "digest/wiki/x/two.md"])
    idx.writer.last_sync = time.monotonic() + 100  # prove no walk is needed
    assert {h.path for h in idx.search("kumquat").results} == {"digest/wiki/x/one.md", "digest/wiki/x/two.md"}
    os.rename(ws.root / "digest/wiki/x", ws.root / "digest/wiki/y")
    idx.update_paths(["digest/wiki/x", "digest/wiki/y"])
    assert {h.path for h in idx.search("kumquat").results} == {"digest/wiki/y/one.md", "digest/wiki/y/two.md"}
    (ws.root / "digest/wiki/y/one.md").unlink()
    idx.update_paths(["digest/wiki/y/one.md"])
    assert [h.path for h in idx.search("kumquat").results] == ["digest/wiki/y/two.md"]


def test_a_symlink_in_a_moved_folder_is_never_indexed(ws, idx, tmp_path):
    """A moved folder is listed by the same walk as the whole workspace: a symlink inside it (which may
    point anywhere on the disk) is not followed, as the walk does not follow it."""
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\nthe vault code is tamarillo\n")
    ws.write_text("digest/wiki/x/one.md", "# One\nkumquat")
    (ws.root / "digest/wiki/x/link.md").symlink_to(outside)
    idx.sync()
    assert idx.search("tamarillo").results == []
    os.rename(ws.root / "digest/wiki/x", ws.root / "digest/wiki/y")
    idx.update_paths(["digest/wiki/x", "digest/wiki/y"])
    assert idx.search("tamarillo").results == []
    assert [h.path for h in idx.search("kumquat").results] == ["digest/wiki/y/one.md"]
    assert not idx.sync().touched  # the walk and the folder update agree on what the folder holds
    (ws.root / "digest/wiki/z.md").symlink_to(outside)  # one path, as a watcher notifies it
    idx.update_paths(["digest/wiki/z.md"])
    assert idx.search("tamarillo").results == []


def test_a_layer_linked_elsewhere_is_not_indexed(ws, idx, tmp_path):
    """resource/ as a symlink to a folder elsewhere: the tools refuse its files (they resolve outside the
    workspace), so search must not show them either, by a walk or a notified path alike."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "paper.md").write_text("# Paper\nthe vault code is feijoa\n")
    shutil.rmtree(ws.root / "resource")
    (ws.root / "resource").symlink_to(elsewhere, target_is_directory=True)
    ws.write_text("daily/2026-06-20/a.md", "# A\nfeijoa season\n")
    idx.sync()
    assert [h.path for h in idx.search("feijoa").results] == ["daily/2026-06-20/a.md"]
    idx.update_paths(["resource/paper.md", "resource"])
    assert [h.path for h in idx.search("feijoa").results] == ["daily/2026-06-20/a.md"]
    assert not idx.sync().touched
    # nor does the resource pipeline card it; doctor says why and what to do
    from reme_cc.surfaces.doctor import _workspace
    from reme_cc.memory.resource import scan
    from reme_cc.tools import Context

    ctx = Context(ws, Config.load(ws.root))
    try:
        assert scan(ctx, "2026-06-20") == []
    finally:
        ctx.close()
    box = {"root": str(ws.root)}
    check = _workspace(box)
    box["ctx"].close()
    assert not check.ok and f"resource/ -> {elsewhere}" in check.detail and "move those files" in check.detail


def test_hand_edit_visible_within_two_seconds(ws, idx):
    ws.write_text("daily/2026-01-01.md", "# Day\nnothing")
    idx.search("nothing")
    (ws.root / "daily/2026-01-01.md").write_text("# Day\nplatypus sighting", encoding="utf-8")
    deadline = time.monotonic() + 2.0
    found = False
    while time.monotonic() < deadline and not found:
        found = bool(idx.search("platypus").results)
        time.sleep(0.1)
    assert found


def test_obsidian_short_links_resolve_and_reresolve(ws, idx):
    ws.write_text("digest/wiki/hub.md", note("Hub", "h", "see [[固态电池]] and [[wiki/lfp]] and [[nowhere.md]]"))
    idx.sync()
    by_target = {l.target: l for l in idx.outbound_links("digest/wiki/hub.md")}
    assert by_target["固态电池"].how == "missing"
    ws.write_text("digest/wiki/固态电池.md", note("固态电池技术路线", "全固态", "body"))
    ws.write_text("digest/wiki/lfp.md", note("LFP", "d", "body"))
    idx.update_paths(["digest/wiki/固态电池.md", "digest/wiki/lfp.md"])
    by_target = {l.target: l for l in idx.outbound_links("digest/wiki/hub.md")}
    assert by_target["固态电池"].resolved_path == "digest/wiki/固态电池.md" and by_target["固态电池"].how == "stem"
    assert by_target["wiki/lfp"].resolved_path == "digest/wiki/lfp.md"
    assert by_target["nowhere.md"].resolved_path is None
    assert [l.source for l in idx.inbound_links("digest/wiki/固态电池.md")] == ["digest/wiki/hub.md"]
    # a second file with the same stem makes the short form ambiguous
    ws.write_text("digest/personal/固态电池.md", "x")
    idx.update_paths(["digest/personal/固态电池.md"])
    by_target = {l.target: l for l in idx.outbound_links("digest/wiki/hub.md")}
    assert by_target["固态电池"].resolved_path is None and by_target["固态电池"].how == "ambiguous"
    # folder prefix query (used by move/delete of a folder)
    assert {l.target for l in idx.inbound_links("digest/wiki", prefix=True)} == {"wiki/lfp"}
    # a literal dangling link is still reported as inbound for its path
    assert [l.source for l in idx.inbound_links("nowhere.md")] == ["digest/wiki/hub.md"]


def test_a_file_gone_between_walk_and_read_leaves_no_link_resolved_to_it(ws, idx):
    """Found by the soak: a walk saw b.md, b.md was deleted before the sync read it; a.md, indexed in
    the same run, had its link resolved to b.md (exact) and nothing ever corrected it."""
    from reme_cc.index.sync import walk

    ws.write_text("daily/2020-01-01/a.md", note("A", "a", "see [[daily/2020-01-01/b.md]] and [[b]]"))
    ws.write_text("daily/2020-01-01/b.md", note("B", "b", "body"))
    stale = walk(ws.root)
    (ws.root / "daily/2020-01-01/b.md").unlink()
    idx.sync(disk=stale)
    idx.sync()
    links = {l.target: l for l in idx.outbound_links("daily/2020-01-01/a.md")}
    assert links["daily/2020-01-01/b.md"].resolved_path is None and links["daily/2020-01-01/b.md"].how == "missing"
    assert links["b"].resolved_path is None and links["b"].how == "missing"
    assert idx.file_info("daily/2020-01-01/b.md") is None


def test_a_walk_older_than_a_new_file_does_not_delete_it_from_the_index(ws, idx):
    """Found by the soak (a move left a link un-rewritten): a walk made before b.md existed, applied
    after another process had indexed b.md, deleted b.md's rows and links from the index."""
    from reme_cc.index.sync import walk

    ws.write_text("daily/2020-01-01/a.md", note("A", "a", "body"))
    stale = walk(ws.root)
    ws.write_text("daily/2020-01-01/b.md", note("B", "b", "see [[daily/2020-01-01/a.md]]"))
    idx.update_paths(["daily/2020-01-01/b.md"])
    idx.sync(disk=stale)
    assert idx.file_info("daily/2020-01-01/b.md") is not None
    assert [l.source for l in idx.inbound_links("daily/2020-01-01/a.md")] == ["daily/2020-01-01/b.md"]


def test_links_in_frontmatter_and_code(ws, idx):
    ws.write_text(
        "digest/wiki/s.md",
        '---\nname: S\nsource_conversation: "[[session/dialog/abc.jsonl]]"\n---\n'
        "text `[[not/a/link.md]]`\n\n```\n[[also/not.md]]\n```\nreal:: [[digest/wiki/t.md#L3-L4|T]]\n",
    )
    (ws.root / "session/dialog/abc.jsonl").write_text('{"role":"user","content":"hi"}\n')
    ws.write_text("digest/wiki/t.md", "t")
    idx.sync()
    links = idx.outbound_links("digest/wiki/s.md")
    assert [(l.target, l.resolved_path) for l in links] == [
        ("session/dialog/abc.jsonl", "session/dialog/abc.jsonl"),
        ("digest/wiki/t.md", "digest/wiki/t.md"),
    ]
    assert links[1].anchor == "L3-L4" and links[1].alias == "T" and links[1].predicate == "real"
    # sessions are catalogued (links resolve) but not chunked unless index_sessions
    assert idx.file_info("session/dialog/abc.jsonl").indexed is False


def test_sessions_indexed_when_configured(ws):
    (ws.root / "session/claude_code/s1.jsonl").write_text('{"type":"user","message":{"content":"wombat facts"}}\n')
    index = Index(ws, Config.load(ws.root).replace(index_sessions=True))
    try:
        index.sync()
        assert index.file_info("session/claude_code/s1.jsonl").indexed
        assert index.search("wombat").results
    finally:
        index.close()


def test_traverse_depth_direction_and_missing_seed(ws, idx):
    ws.write_text("digest/wiki/a.md", note("A", "a", "rel:: [[digest/wiki/b.md]]"))
    ws.write_text("digest/wiki/b.md", note("B", "b", "[[digest/wiki/c.md#L1]] [[digest/wiki/ghost.md]]"))
    ws.write_text("digest/wiki/c.md", note("C", "c", "end"))
    ws.write_text("daily/2026-06-20/d.md", note("D", "d", "[[digest/wiki/a.md]]"))
    idx.sync()
    g = idx.traverse(["digest/wiki/a.md"], depth=1, direction="out")
    assert {n.path for n in g.nodes} == {"digest/wiki/a.md", "digest/wiki/b.md"}
    assert g.edges[0].predicate == "rel"
    g = idx.traverse(["digest/wiki/a.md"], depth=2, direction="out")
    nodes = {n.path: n for n in g.nodes}
    assert set(nodes) == {"digest/wiki/a.md", "digest/wiki/b.md", "digest/wiki/c.md", "digest/wiki/ghost.md"}
    assert nodes["digest/wiki/c.md"].depth == 2 and nodes["digest/wiki/c.md"].name == "C"
    assert nodes["digest/wiki/ghost.md"].exists is False
    assert any(e.anchor == "L1" for e in g.edges)
    g = idx.traverse(["a"], depth=1, direction="in")  # Obsidian short form seed
    assert {n.path for n in g.nodes} == {"digest/wiki/a.md", "daily/2026-06-20/d.md"}
    with pytest.raises(NotFoundError, match="not in the workspace"):
        idx.traverse(["digest/wiki/nope.md"])
    with pytest.raises(InvalidInputError):
        idx.traverse(["digest/wiki/a.md"], direction="sideways")
    with pytest.raises(InvalidInputError):
        idx.traverse(["digest/wiki/a.md"], depth=0)


def test_node_search_digest_only(ws, idx):
    ws.write_text("digest/wiki/cat.md", note("宁德时代", "动力电池龙头企业", "body about batteries"))
    ws.write_text("digest/procedure/review.md", note("Code review checklist", "how we review PRs", "..."))
    ws.write_text("daily/2026-06-20/cat.md", note("宁德时代调研", "daily card", "..."))
    idx.sync()
    hits = idx.node_search("宁德时代")
    assert [h.path for h in hits] == ["digest/wiki/cat.md"] and hits[0].description == "动力电池龙头企业"
    assert [h.path for h in idx.node_search("review checklist")] == ["digest/procedure/review.md"]
    assert idx.node_search("batteries") == []  # body text is not node-level
    with pytest.raises(InvalidInputError):
        idx.node_search("  ")


def test_damaged_database_is_rebuilt_with_log(ws):
    ws.write_text("digest/wiki/a.md", "# A\nquokka")
    index = Index(ws, Config.load(ws.root))
    index.sync()
    index.close()
    for suffix in ("-wal", "-shm"):
        (ws.metadata / ("index.sqlite" + suffix)).unlink(missing_ok=True)
    (ws.metadata / "index.sqlite").write_bytes(b"this is not a database" * 100)
    index = Index(ws, Config.load(ws.root))
    try:
        assert index.search("quokka").results[0].path == "digest/wiki/a.md"
        assert "damaged" in (ws.logs / "index.log").read_text()
    finally:
        index.close()


def test_old_schema_is_rebuilt_with_log(ws):
    ws.write_text("digest/wiki/a.md", "# A\nquokka")
    index = Index(ws, Config.load(ws.root))
    index.sync()
    index.db.run(lambda c: c.execute("UPDATE meta SET value='1' WHERE key='schema_version'"))
    index.close()
    index = Index(ws, Config.load(ws.root))
    try:
        assert index.search("quokka").results
        assert "schema 1" in (ws.logs / "index.log").read_text()
    finally:
        index.close()


def test_unwritable_index_falls_back_to_memory(ws):
    """metadata/index.sqlite that cannot be opened (here: a folder in its place) → private in-memory index."""
    ws.write_text("digest/wiki/a.md", "# A\nnarwhal")
    (ws.metadata / "index.sqlite").mkdir()
    index = Index(ws, Config.load(ws.root))
    try:
        assert index.mode == "memory"
        assert index.search("narwhal").results[0].path == "digest/wiki/a.md"
    finally:
        index.close()


def test_reindex_progress_and_status(ws, idx):
    for i in range(5):
        ws.write_text(f"daily/2026-06-2{i}/n{i}.md", note(f"N{i}", "d", f"# H\nbody {i} [[digest/wiki/missing.md]]"))
    idx.sync()
    seen = []
    r = idx.reindex(lambda done, total: seen.append((done, total)))
    assert len(r.added) == 5 and seen[-1] == (5, 5)
    st = idx.status()
    assert st["files"] == 5 and st["chunks"] >= 5 and st["links"] == 5 and st["dangling_links"] == 5
    assert st["rss_mb"] > 10 and st["index_bytes"] > 0 and st["last_sync"]


WRITER = textwrap.dedent("""
    import sys
    from reme_cc.base.workspace import Workspace
    from reme_cc.base.config import Config
    from reme_cc.index import Index
    ws = Workspace(sys.argv[1]); tag = sys.argv[2]; n = int(sys.argv[3])
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
    for i in range(n):
        rel = f"digest/wiki/{tag}-{i}.md"
        ws.write_text(rel, f"# {tag} {i}\\nshared word marmot {tag}{i} [[digest/wiki/{tag}-{max(i-1,0)}.md]]")
        idx.update_paths([rel])
        if i % 5 == 0:
            idx.sync()
    idx.close()
""")


def test_two_processes_write_concurrently(ws, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [subprocess.Popen([PY, str(script), str(ws.root), tag, "25"]) for tag in ("p", "q")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    index = Index(ws, Config.load(ws.root))
    try:
        index.writer.last_sync = time.monotonic() + 100  # what the writers committed, no fresh walk
        c = counts(index)
        assert c["files"] == 50 and c["chunks"] == c["fts"] == 50 and c["orphans"] == 0
        assert index.status()["links"] == 50 and index.status()["dangling_links"] == 0
        assert len(index.search("marmot", limit=100).results) == 50
    finally:
        index.close()


KILLER = textwrap.dedent("""
    import sys
    from reme_cc.base.workspace import Workspace
    from reme_cc.base.config import Config
    from reme_cc.index import Index
    if __name__ == "__main__":  # big syncs use a process pool, which re-imports the main module
        ws = Workspace(sys.argv[1])
        idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
        print("ready", flush=True)
        while True:
            idx.reindex()
""")


def test_kill_9_mid_write_then_recovery(ws, tmp_path):
    for i in range(400):
        ws.write_text(f"daily/2026-05-{1 + i % 28:02d}/k{i}.md", f"# K{i}\nbadger {i} " + "filler text " * 40)
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    p = subprocess.Popen([PY, str(script), str(ws.root)], stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    time.sleep(2.5)  # somewhere inside a reindex transaction
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    index = Index(ws, Config.load(ws.root))
    try:
        index.sync()
        c = counts(index)
        assert c["files"] == 400 and c["chunks"] == c["fts"] >= 400 and c["orphans"] == 0
        ok = index.read(lambda conn: conn.execute("PRAGMA integrity_check").fetchone()[0])
        assert ok == "ok"
        assert len(index.search("badger", limit=100).results) == 100
    finally:
        index.close()


def test_bad_config_embedding_is_clear(ws):
    with pytest.raises(InvalidInputError, match="embedding='bogus'"):
        Index(ws, Config.load(ws.root).replace(embedding="bogus"))


def test_schema_is_versioned(ws, idx):
    conn = sqlite3.connect(ws.metadata / "index.sqlite")
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        catalog.SCHEMA_VERSION
    )
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_table_a_newer_version_added_does_not_make_the_index_rebuild(ws, idx):
    """A newer reme adds plain tables to the same schema (as ``labels`` was added): an older process
    opening that database keeps it, embedding cache and chunk ids included; a view or a trigger reme
    never makes still has the database rebuilt (tests/test_team_untrusted.py)."""
    ws.write_text("daily/2026-06-20/kept.md", "# Kept\n\nThe quokka ledger balances at noon.\n")
    idx.sync()
    before = idx.read(lambda c: c.execute("SELECT id, path FROM chunks ORDER BY id").fetchall())
    db = ws.root / "metadata" / catalog.DB_NAME
    idx.close()
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE later_feature (path TEXT, value TEXT); CREATE INDEX later_feature_path ON later_feature(path);"
        "INSERT INTO embeddings VALUES ('m', 'h', x'00');"
    )
    conn.close()
    again = Index(ws, Config.load(ws.root))
    try:
        assert again.read(lambda c: c.execute("SELECT id, path FROM chunks ORDER BY id").fetchall()) == before
        assert again.read(lambda c: c.execute("SELECT COUNT(*) FROM embeddings WHERE model='m'").fetchone()[0]) == 1
        assert again.search("quokka ledger").results[0].path == "daily/2026-06-20/kept.md"
    finally:
        again.close()
    log = ws.root / "metadata" / "logs" / "index.log"
    assert "never makes" not in (log.read_text() if log.exists() else "")


NAMED = (
    "---\nname: Ledger close\ndescription: why the quokka ledger balances at noon\n---\n# Steps\n\nRun the close job.\n"
)


def test_a_notes_name_and_description_find_each_of_its_chunks(ws, idx):
    """No body line holds the frontmatter: every chunk of the note starts with its context line, so
    a question worded like the description finds it (both halves read the chunk text); the hit's line
    range is still the body's."""
    ws.write_text("digest/wiki/ledger.md", NAMED)
    ws.write_text("digest/wiki/other.md", "# Other\n\nThe close job runs nightly.\n")
    idx.sync()
    hit = idx.search("quokka balances").results[0]
    assert hit.path == "digest/wiki/ledger.md"
    assert hit.text.startswith("Ledger close — why the quokka ledger balances at noon\n# Steps")
    assert (hit.start_line, hit.end_line) == (5, 7)


def test_an_index_of_the_previous_chunker_chunks_its_named_notes_again(ws, idx):
    """An index whose chunks were made without context lines (meta chunker 1) has its notes with a
    name or description re-chunked on open by the next sync; a note without frontmatter keeps its
    chunks, ids and all."""
    ws.write_text("digest/wiki/ledger.md", NAMED)
    ws.write_text("digest/wiki/plain.md", "# Plain\n\nNo frontmatter here.\n")
    idx.sync()
    rows = "SELECT id, path, text FROM chunks ORDER BY path, id"
    db = ws.root / "metadata" / catalog.DB_NAME
    idx.close()
    conn = sqlite3.connect(db)  # what the previous version stored: the body only, and no chunker version
    conn.execute(
        "UPDATE chunks SET text = substr(text, instr(text, char(10)) + 1) WHERE path = 'digest/wiki/ledger.md'"
    )
    conn.execute("DELETE FROM meta WHERE key = 'chunker'")
    conn.commit()
    old = dict((p, (i, t)) for i, p, t in conn.execute(rows))
    conn.close()
    assert old["digest/wiki/ledger.md"][1].startswith("# Steps")
    again = Index(ws, Config.load(ws.root))
    try:
        again.sync()
        new = dict((p, (i, t)) for i, p, t in again.read(lambda c: c.execute(rows).fetchall()))
        assert new["digest/wiki/ledger.md"][1].startswith("Ledger close — why the quokka")
        assert new["digest/wiki/ledger.md"][0] != old["digest/wiki/ledger.md"][0]
        assert new["digest/wiki/plain.md"] == old["digest/wiki/plain.md"]
        assert again.read(lambda c: catalog.get_meta(c, "chunker")) == "2"
    finally:
        again.close()
    assert (
        "chunker 2: 1 notes with a name or description are chunked again"
        in (ws.root / "metadata" / "logs" / "index.log").read_text()
    )
