"""Search expands its hits from the link graph in memory (or, while that is being built, from the
database in one batch of queries), with the same neighbors as one hit at a time, and loads all its
hits' rows in one query."""

from __future__ import annotations

import json
import time

import pytest

from reme_cc.base.config import Config
from reme_cc.index import Hit, Index, Neighbor
from reme_cc.index import catalog
from reme_cc.index.graph import EXPANSION_CAP, Adjacency, LinkGraph, neighbors
from reme_cc.tools.system import StatusResult


@pytest.fixture
def idx(ws):
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    yield index
    index.close()


def test_expansion_costs_the_same_queries_for_one_hit_or_ten(ws, idx):
    for i in range(10):
        ws.write_text(
            f"digest/wiki/n{i}.md", f"# N{i}\nmarmot {i}\n\nrel:: [[digest/wiki/n{(i + 1) % 10}.md]] [[missing-{i}]]\n"
        )
    idx.sync()
    statements: list[str] = []
    idx.db.conn.set_trace_callback(statements.append)
    try:
        one = neighbors(idx.db.conn, ["digest/wiki/n0.md"])
        n_one = len(statements)
        statements.clear()
        many = neighbors(idx.db.conn, [f"digest/wiki/n{i}.md" for i in range(10)])
        n_many = len(statements)
    finally:
        idx.db.conn.set_trace_callback(None)
    queries = [q for q in statements if q.startswith("SELECT")]
    assert n_one == n_many == 5 and len(queries) == 3  # outlinks, inlinks, the neighbors' names, in one snapshot
    assert many["digest/wiki/n0.md"] == one["digest/wiki/n0.md"]
    outs, n_out, ins, n_in = many["digest/wiki/n3.md"]
    assert [(n.path, n.predicate, n.exists) for n in outs] == [
        ("digest/wiki/n4.md", "rel", True),
        ("missing-3", "rel", False),
    ]
    assert n_out == 2 and [n.path for n in ins] == ["digest/wiki/n2.md"] and n_in == 1
    hits = idx.search("marmot", limit=10).results
    assert len(hits) == 10 and all(h.inlinks and h.outlinks for h in hits)


def _neighbors_one_by_one(conn, path):
    """The expansion of one path the plain way: its link rows, then each shown neighbor's name."""
    outs: dict = {}
    for target, resolved, predicate in conn.execute(
        "SELECT target, resolved_path, predicate FROM links WHERE source = ? ORDER BY line, rowid", (path,)
    ):
        key = resolved or target
        if key not in outs or (outs[key][0] is None and predicate):
            outs[key] = (predicate, resolved is not None)
    ins: dict = {}
    for source, predicate in conn.execute(
        "SELECT source, predicate FROM links WHERE resolved_path = ? "
        "AND source != resolved_path ORDER BY source, line, rowid",
        (path,),
    ):
        if source not in ins or (ins[source] is None and predicate):
            ins[source] = predicate

    def name(p):
        row = conn.execute("SELECT name, description FROM files WHERE path = ?", (p,)).fetchone()
        return row if row else (None, None)

    out_list = [Neighbor(k, *name(k), pred, res) for k, (pred, res) in list(outs.items())[:EXPANSION_CAP]]
    in_list = [Neighbor(k, *name(k), pred, True) for k, pred in list(ins.items())[:EXPANSION_CAP]]
    return out_list, len(outs), in_list, len(ins)


def test_batched_expansion_and_rows_equal_one_hit_at_a_time(ws, idx):
    """Every hit's neighbors (names, predicates, order, totals, dangling targets, self-links, links
    repeated with and without a predicate, more than the cap) and its row and project are what the
    plain per-hit queries give."""
    note = lambda name, body, project=None: (  # noqa: E731
        f"---\nname: {name}\ndescription: about {name}\n"
        + (f"project: {json.dumps(project)}\n" if project else "")
        + f"---\n# {name}\nwalrus {name}\n\n{body}\n"
    )
    hub_links = " ".join(f"[[digest/wiki/leaf{i}.md]]" for i in range(EXPANSION_CAP + 3))
    ws.write_text(
        "digest/wiki/hub.md",
        note(
            "hub",
            f"[[digest/wiki/leaf0.md]] rel:: [[digest/wiki/leaf0.md]]\n"
            f"{hub_links} [[digest/wiki/hub.md]] [[nowhere]] [[digest/wiki/gone.md]]",
            "app",
        ),
    )
    for i in range(EXPANSION_CAP + 3):
        ws.write_text(
            f"digest/wiki/leaf{i}.md",
            note(
                f"leaf{i}",
                "[[digest/wiki/hub.md]]" + (" [[nowhere]]" if i % 3 else ""),
                ["app", "web"] if i % 2 else None,
            ),
        )
    for i in range(4):
        ws.write_text(f"daily/2026-06-2{i}/card.md", note(f"card{i}", f"cites:: [[digest/wiki/leaf{i}.md]] [[hub]]"))
    idx.sync()
    paths = [r[0] for r in idx.db.conn.execute("SELECT path FROM files ORDER BY path")]
    assert len(paths) > 15
    batch = neighbors(idx.db.conn, paths + paths[:3])
    graph = Adjacency.of(idx.db.conn)  # every link, as the in-memory graph holds them
    assert set(batch) == set(paths)
    for p in paths:
        assert batch[p] == graph.expansion(p) == _neighbors_one_by_one(idx.db.conn, p), p
    hub = batch["digest/wiki/hub.md"]
    assert hub[1] > EXPANSION_CAP and hub[3] > EXPANSION_CAP and len(hub[0]) == len(hub[2]) == EXPANSION_CAP
    assert ("nowhere", None, None, False) in [
        (n.path, n.name, n.description, n.exists) for n in batch["digest/wiki/leaf1.md"][0]
    ]
    assert [(n.path, n.name) for n in batch["digest/wiki/leaf1.md"][2]][:1] == [("daily/2026-06-21/card.md", "card1")]

    ids = [r[0] for r in idx.db.conn.execute("SELECT id FROM chunks ORDER BY path DESC, id")]
    ranked = [(cid, (1.0 / (i + 1), 0.25 / (i + 1), 0.75 / (i + 1))) for i, cid in enumerate(ids + [10**9])]
    idx.warm_links()
    assert idx.links.wait_ready(30)
    statements: list[str] = []
    idx.db.conn.set_trace_callback(statements.append)
    try:
        hits = idx.load_hits(ranked)
    finally:
        idx.db.conn.set_trace_callback(None)
    assert len(statements) == 2  # rows (with projects), and the database's version the link graph holds for
    want = []
    for cid, (score, v, w) in ranked:
        row = idx.db.conn.execute("SELECT path, start_line, end_line, text FROM chunks WHERE id = ?", (cid,)).fetchone()
        if row is None:  # removed meanwhile: skipped
            continue
        extra = idx.db.conn.execute("SELECT extra FROM files WHERE path = ?", (row[0],)).fetchone()[0]
        h = Hit(
            row[0],
            row[1],
            row[2],
            round(score, 6),
            round(v, 6),
            round(w, 6),
            row[3],
            project=json.loads(extra or "{}").get("project"),
        )
        h.outlinks, h.outlinks_total, h.inlinks, h.inlinks_total = _neighbors_one_by_one(idx.db.conn, row[0])
        want.append(h)
    assert hits == want and len(hits) == len(ids)
    assert {json.dumps(h.project) for h in hits} == {'"app"', '["app", "web"]', "null"}


def _links_shown(idx, query):
    return {
        h.path: ([n.path for n in h.outlinks], [n.path for n in h.inlinks]) for h in idx.search(query, limit=10).results
    }


def test_the_link_graph_never_shows_a_stale_link(ws, idx, monkeypatch):
    """An edit (here, or in another process) moves the database on: until the graph is rebuilt in the
    background the expansion comes from the database, so the next search shows the new link."""
    ws.write_text("digest/wiki/a.md", "# A\nwombat a\n\n[[digest/wiki/b.md]]\n")
    ws.write_text("digest/wiki/b.md", "# B\nwombat b\n")
    ws.write_text("digest/wiki/c.md", "# C\nwombat c\n")
    idx.sync()
    idx.warm_links()
    assert idx.links.wait_ready(30)
    built = idx.links.version
    assert _links_shown(idx, "wombat")["digest/wiki/b.md"] == ([], ["digest/wiki/a.md"])

    other = Index(ws, Config.load(ws.root), background_embedding=False)  # another window writes
    try:
        ws.write_text("digest/wiki/c.md", "# C\nwombat c\n\nsee:: [[digest/wiki/b.md]]\n")
        other.sync()
    finally:
        other.close()
    idx.writer.last_sync = time.monotonic()  # no walk of this process: the change is another's
    shown = _links_shown(idx, "wombat")  # the first search to see the change: no rebuild before it settles
    assert shown["digest/wiki/b.md"] == ([], ["digest/wiki/a.md", "digest/wiki/c.md"])
    assert shown["digest/wiki/c.md"] == (["digest/wiki/b.md"], [])
    idx.links.wait_ready(30)
    assert idx.links.version == built  # still the old graph, never used

    monkeypatch.setattr(LinkGraph, "SETTLE_S", 0.0)
    idx.links.may_rebuild_now()
    idx.search("wombat")  # stale and settled: starts the rebuild
    assert idx.links.wait_ready(30) and idx.links.version == idx.read(catalog.version)
    assert _links_shown(idx, "wombat") == shown


def test_the_graph_waits_for_a_bulk_import_to_settle(ws, idx, monkeypatch):
    """While the database keeps moving (a `git checkout` indexed batch by batch) no graph is built:
    each would be stale before it is in; once it holds still for SETTLE_S, the next search builds it."""
    ws.write_text("digest/wiki/a.md", "# A\nmarten a\n\n[[digest/wiki/b.md]]\n")
    ws.write_text("digest/wiki/b.md", "# B\nmarten b\n")
    idx.sync()
    idx.warm_links()
    assert idx.links.wait_ready(30)
    builds = []
    monkeypatch.setattr(LinkGraph, "_build", lambda self: builds.append(1))
    idx.links.may_rebuild_now()
    for i in range(3):  # a write between every two searches
        ws.write_text(f"digest/wiki/c{i}.md", f"# C{i}\nmarten c{i}\n\n[[digest/wiki/b.md]]\n")
        idx.sync()
        assert f"digest/wiki/c{i}.md" in _links_shown(idx, "marten")["digest/wiki/b.md"][1]
    assert builds == []
    idx.links.may_rebuild_now(settled=True)  # a second without a write
    idx.search("marten")
    idx.links.wait_ready(30)
    assert builds == [1]


def test_a_graph_past_its_size_limit_is_not_kept(ws, idx, monkeypatch):
    for i in range(6):
        ws.write_text(f"digest/wiki/n{i}.md", f"# N{i}\nferret {i}\n\n[[digest/wiki/n{(i + 1) % 6}.md]]\n")
    idx.sync()
    monkeypatch.setattr(LinkGraph, "MAX_LINKS", 5)
    idx.warm_links()
    idx.links.wait_ready(30)
    build = idx.links.last_build
    assert not idx.links.ready and build["links"] == 6
    assert "links from the database (6 links: too many to keep)" in StatusResult(status=idx.status()).text()
    idx.links.may_rebuild_now()
    shown = _links_shown(idx, "ferret")
    assert shown["digest/wiki/n0.md"] == (["digest/wiki/n1.md"], ["digest/wiki/n5.md"])
    idx.links.wait_ready(30)
    assert idx.links.last_build is build  # the database's version has not moved: no rebuild per search


def test_an_idle_window_lets_go_of_the_graph(ws, idx):
    ws.write_text("digest/wiki/a.md", "# A\nbadger\n\n[[digest/wiki/b.md]]\n")
    ws.write_text("digest/wiki/b.md", "# B\nbadger b\n")
    idx.sync()
    idx.warm_links()
    assert idx.links.wait_ready(30)
    assert idx.status()["link_graph"]["ready"]
    assert "link graph in memory (1 link)" in StatusResult(status=idx.status()).text()  # what `status` says
    assert idx.release_idle(idle=0.0)
    assert not idx.links.ready
    assert "links from the database (graph not built)" in StatusResult(status=idx.status()).text()
    assert _links_shown(idx, "badger")["digest/wiki/b.md"] == ([], ["digest/wiki/a.md"])  # the database answers


def test_a_one_shot_process_asks_the_database(ws, idx):
    """Only a long-lived process (the server's warm-up) keeps a graph: a CLI search expands from the
    database and starts no build its exit would wait for."""
    ws.write_text("digest/wiki/a.md", "# A\nstoat\n\n[[digest/wiki/b.md]]\n")
    ws.write_text("digest/wiki/b.md", "# B\nstoat b\n")
    idx.sync()
    assert _links_shown(idx, "stoat")["digest/wiki/b.md"] == ([], ["digest/wiki/a.md"])
    assert not idx.links.started and not idx.links.ready


def test_the_database_expansion_reads_one_snapshot(ws, idx):
    """A file removed by another process between the expansion's queries (links, then names) changes
    nothing in that answer: the queries read one snapshot (else a rowid would have lost its path)."""
    import sqlite3

    ws.write_text("digest/wiki/a.md", "# A\nshrew\n\n[[digest/wiki/b.md]]\n")
    ws.write_text("digest/wiki/b.md", "# B\nshrew b\n")
    idx.sync()
    other = sqlite3.connect(ws.metadata / catalog.DB_NAME, isolation_level=None)
    removed: list[str] = []

    def remove_b_before_the_names(sql: str) -> None:
        if sql.startswith("SELECT rowid, path, name") and not removed:
            removed.append(sql)
            other.execute("DELETE FROM files WHERE path = 'digest/wiki/b.md'")

    idx.db.conn.set_trace_callback(remove_b_before_the_names)
    try:
        got = neighbors(idx.db.conn, ["digest/wiki/a.md", "digest/wiki/b.md"])
    finally:
        idx.db.conn.set_trace_callback(None)
        other.close()
    assert removed
    assert [n.path for n in got["digest/wiki/a.md"][0]] == ["digest/wiki/b.md"]
    assert [n.path for n in got["digest/wiki/b.md"][2]] == ["digest/wiki/a.md"]
