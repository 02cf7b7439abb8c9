"""Search expands all its hits in one batch of queries, with the same neighbors as one hit at a time."""

from __future__ import annotations

import pytest

from reme_cc.config import Config
from reme_cc.index import Index
from reme_cc.index.graph import neighbors


@pytest.fixture
def idx(ws):
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    yield index
    index.close()


def test_expansion_costs_the_same_queries_for_one_hit_or_ten(ws, idx):
    for i in range(10):
        ws.write_text(f"digest/wiki/n{i}.md", f"# N{i}\nmarmot {i}\n\nrel:: [[digest/wiki/n{(i + 1) % 10}.md]] [[missing-{i}]]\n")
    idx.sync()
    statements: list[str] = []
    idx._conn.set_trace_callback(statements.append)
    try:
        one = neighbors(idx._conn, ["digest/wiki/n0.md"])
        n_one = len(statements)
        statements.clear()
        many = neighbors(idx._conn, [f"digest/wiki/n{i}.md" for i in range(10)])
        n_many = len(statements)
    finally:
        idx._conn.set_trace_callback(None)
    assert n_one == n_many == 3
    assert many["digest/wiki/n0.md"] == one["digest/wiki/n0.md"]
    outs, n_out, ins, n_in = many["digest/wiki/n3.md"]
    assert [(n.path, n.predicate, n.exists) for n in outs] == [("digest/wiki/n4.md", "rel", True), ("missing-3", "rel", False)]
    assert n_out == 2 and [n.path for n in ins] == ["digest/wiki/n2.md"] and n_in == 1
    hits = idx.search("marmot", limit=10).results
    assert len(hits) == 10 and all(h.inlinks and h.outlinks for h in hits)
