"""The in-memory numpy BM25 index (reme_cc/index/bm25.py) against FTS5's bm25(): same chunks, same
scores to the last bit, same tie order; date filter; freshness after another process's writes;
snapshot load / corrupt snapshot / stale snapshot with deltas; fallbacks to FTS5."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from reme_cc.base.config import Config
from reme_cc.index import translate, Index, bm25, catalog, keyword, tiers

EN = (
    "battery supply chain lithium cathode pricing margin factory capacity contract supplier risk "
    "forecast quarterly revenue inventory logistics shipping customs tariff warehouse demand export "
    "python sqlite index search memory vector embedding latency cache thread process lock"
).split()
ZH = (
    "宁德时代 产能 电池 供应链 风险 价格 利润 工厂 合同 供应商 预测 季度 收入 库存 物流 关税 仓库 需求 "
    "出口 决策 会议 客户 项目 成本"
).split()
# words FTS5's unicode61 treats differently from a naive split: final sigma, accents, combining
# marks, kana with a middle dot, full-width digits, underscores, emoji
ODD = [
    "ΟΔΟΣ",
    "οδοσ",
    "Straße",
    "café",
    "naïve",
    "x\u0301y",
    "ガ\u3099ー・テスト",
    "ア・イ",
    "ｆｕｌｌ１２",
    "snake_case_word",
    "🙂",
    "ǅemal",
    "İstanbul",
    "CO₂",
    "Ⅻ",
]


def _para(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(4, 40)):
        r = rng.random()
        words.append(rng.choice(ZH) if r < 0.35 else rng.choice(ODD) if r < 0.42 else rng.choice(EN))
    sep = "" if rng.random() < 0.3 else " "
    return sep.join(words) if all(w in ZH for w in words[:2]) else " ".join(words)


def _corpus(ws, n_files: int = 60, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    paths = []
    for i in range(n_files):
        if i % 2:
            path = f"daily/2026-0{1 + i % 6}-{10 + i % 18:02d}/note-{i}.md"
        else:
            path = f"digest/wiki/topic-{i}.md"
        body = [f"---\nname: topic {i}\ndescription: {_para(rng)}\n---\n", f"# {rng.choice(EN)} {i}\n"]
        for s in range(rng.randint(1, 4)):
            body.append(f"\n## {rng.choice(ZH)} {s}\n")
            body += ["\n" + _para(rng) + "\n" for _ in range(rng.randint(1, 5))]
        if i % 7 == 0:  # identical text in several files: equal scores, ordered by path then line
            body.append("\nidentical paragraph about tariff warehouse 关税\n")
        ws.write_text(path, "".join(body))
        paths.append(path)
    return paths


def _queries(seed: int = 2, n: int = 60) -> list[str]:
    rng = random.Random(seed)
    qs = [
        "tariff",
        "关税",
        "宁德时代 的风险",
        "how does battery affect cost",
        "ΟΔΟΣ",
        "οδοσ",
        "café naïve",
        "İstanbul",
        "snake_case_word",
        "ｆｕｌｌ１２",
        "identical paragraph",
        "the of and",
        "zzzz unknownword",
        "库存 产能 decision",
        "x\u0301y",
        "CO₂ Ⅻ",
    ]
    for _ in range(n):
        k = rng.randint(1, 5)
        qs.append(" ".join(rng.choice(EN + ZH + ODD) for _ in range(k)))
    return qs


def _idx(ws) -> Index:
    return Index(ws, Config.load(ws.root).replace(embedding="none"))


def _both(idx: Index, q: str, k: int, sd: str | None = None, ed: str | None = None):
    bm = idx.keywords.bm25
    return idx.read(lambda c: (keyword.search_chunks(c, q, k, sd, ed), bm.search(c, q, k, sd, ed)))


def _both_notes(idx: Index, q: str, k: int, sd: str | None = None, ed: str | None = None):
    """Whole-note BM25 from FTS5 and from memory (the index must be loaded: it answers itself)."""
    bm = idx.keywords.bm25
    assert bm.ready
    return idx.read(lambda c: (bm25.search_notes_fts(c, q, k, sd, ed), bm.search_notes(c, q, k, sd, ed)))


@pytest.fixture
def corpus_idx(ws):
    _corpus(ws)
    idx = _idx(ws)
    idx.sync()
    assert idx.keywords.bm25.wait_ready(60)
    yield idx
    idx.close()


def test_tokenizer_is_the_chunks_fts_tokenizer():
    assert f"chunks_fts USING fts5(tokens, tokenize='{bm25.TOKENIZE}')" in catalog.SCHEMA


def test_scores_and_ranking_identical_to_fts5(corpus_idx):
    idx = corpus_idx
    n_chunks = idx.read(lambda c: c.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    assert n_chunks > 80
    answered = 0
    for q in _queries():
        for k in (1, 5, 25, 200):
            fts, mine = _both(idx, q, k)
            if mine is None:  # a phrase FTS5 must answer (several FTS5 tokens); the Index falls back
                assert any(len(bm25.Splitter().split([w])[0]) != 1 for w in keyword.query_terms(q)), q
                continue
            answered += 1
            assert mine == fts, (q, k)  # ids, order and float scores bit for bit
    assert answered > 200
    # equal scores exist and are ordered by path, then line (identical paragraph in several files)
    fts, mine = _both(idx, "identical paragraph tariff warehouse 关税", 200)
    scores = [s for _, s in mine]
    assert len(scores) != len(set(scores))
    assert mine == fts


def test_whole_note_scores_identical_to_fts5(corpus_idx, monkeypatch):
    """The note-level keyword ranking (each note one BM25 document) gives the same notes, order and
    floats from memory as from FTS5, with and without a date range, multi-token words included."""
    idx = corpus_idx
    calls = []
    monkeypatch.setattr(bm25, "search_notes_fts", lambda *a, **kw: calls.append(a) or [])  # memory must answer
    mine = idx.read(lambda c: idx.keywords.bm25.search_notes(c, "tariff 关税", 10))
    monkeypatch.undo()
    assert not calls and mine
    answered = in_folder = 0
    for q in _queries() + ["ア・イ tariff", "a・b"]:
        for k in (1, 5, 200):
            fts, mine = _both_notes(idx, q, k)
            assert mine == fts, (q, k)
            answered += bool(mine)
        for sd, ed in (("2026-02-01", "2026-03-31"), (None, "2026-02-15"), ("2027-01-01", None)):
            fts, mine = _both_notes(idx, q, 25, sd, ed)
            assert mine == fts, (q, sd, ed)
        for folder in ("digest", "DIGEST/wiki/", "daily/2026-03-1", "no_such"):  # the integrator's recall over digest/
            fts = idx.read(lambda c: bm25.search_notes_fts(c, q, 25, path_like=keyword.like_prefix(folder)))
            mine = idx.read(lambda c: idx.keywords.bm25.search_notes(c, q, 25, folder=folder))
            assert mine == fts, (q, folder)
            assert all(p.lower().startswith(folder.lower().rstrip("/") + "/") for p, _ in mine)
            in_folder += bool(mine)
    assert answered > 150 and in_folder > 80
    # a note's score is its chunks' counts summed: a file split over several chunks is one document
    multi = idx.read(
        lambda c: c.execute("SELECT path FROM chunks GROUP BY path HAVING COUNT(*) > 2 LIMIT 1").fetchone()
    )
    assert multi is not None


def test_cached_term_weights_give_the_same_answers_when_evicted_and_after_changes(ws, monkeypatch):
    """The whole-note BM25 keeps each term's note weights and the chunk BM25 each term's idf between
    queries. With a cache too small for one query (every query evicts), after edits, removals and a
    delta segment, answers stay FTS5's to the last bit; the cache stays within its budget."""
    monkeypatch.setattr(bm25, "NOTE_CACHE_POSTINGS", 40)
    _corpus(ws, n_files=80, seed=3)
    idx = _idx(ws)
    try:
        idx.sync()
        assert idx.keywords.bm25.wait_ready(60)
        st = idx.keywords.bm25.state
        qs = _queries(seed=11, n=40)
        for _ in range(2):  # the second round answers from the caches
            for q in qs:
                fts, mine = _both_notes(idx, q, 25)
                assert mine == fts, q
                fts, mine = _both(idx, q, 25)
                assert mine is None or mine == fts, q
        cache = st._note_weights
        assert cache.items and cache.size <= cache.budget + max(len(hit) for (hit, _w), _n in cache.items.values())
        assert cache.size == sum(n for _v, n in cache.items.values())
        filled = cache.version
        for i in range(3):  # edits and a removal: new statistics, so nothing cached may be reused
            ws.write_text(f"digest/wiki/topic-{2 * i}.md", f"# T\ntariff tariff 关税 warehouse {i}\n")
            idx.update_paths([f"digest/wiki/topic-{2 * i}.md"])
            (ws.root / f"daily/2026-0{2 + i}-{11 + i:02d}/note-{2 * i + 1}.md").unlink(missing_ok=True)
            idx.update_paths([f"daily/2026-0{2 + i}-{11 + i:02d}/note-{2 * i + 1}.md"])
            for q in qs[:20] + ["tariff 关税 warehouse"]:
                fts, mine = _both_notes(idx, q, 25)
                assert mine == fts, (i, q)
                fts, mine = _both(idx, q, 25)
                assert mine is None or mine == fts, (i, q)
        assert st is idx.keywords.bm25.state and len(st.segments) > 1 and cache.version != filled
    finally:
        idx.close()


def test_a_search_tokenises_its_query_once(corpus_idx, monkeypatch):
    calls = []
    real = keyword.tokens
    monkeypatch.setattr(keyword, "tokens", lambda text: calls.append(text) or real(text))
    q = "tariff 宁德时代 的风险 once-only-query-7f3a"
    res = corpus_idx.search(q, limit=5)
    # the query once for every BM25 it feeds (chunks, whole notes, rare terms); in a memory of both
    # languages its words in the other one once more (index/translate.py)
    assert res.results and calls == [q, translate.other_language(q)]


def test_chunk_paths_from_memory_equal_the_database(ws, corpus_idx):
    """A chunk's path comes from the in-memory index for the live chunks it holds, from the database
    for the rest (added since it was loaded, removed, unknown): the same map as the database's."""
    idx = corpus_idx
    st = idx.keywords.bm25.state
    before = idx.read(lambda c: [r[0] for r in c.execute("SELECT id FROM chunks")])
    ws.write_text("digest/wiki/fresh.md", "# Fresh\nquokka\n")
    (ws.root / "digest/wiki/topic-4.md").unlink()
    idx.update_paths(["digest/wiki/fresh.md", "digest/wiki/topic-4.md"])  # the state is not refreshed yet
    now = idx.read(lambda c: [r[0] for r in c.execute("SELECT id FROM chunks")])
    ids = sorted(set(before) | set(now)) + [10**9, -1]
    assert st.paths_of(ids) and set(now) - set(before)
    want = idx.read(lambda c: tiers.chunk_paths(c, ids))
    got = idx.chunk_paths(ids)
    missing = set(before) - set(now)
    assert missing and not missing & set(want)
    assert {c: p for c, p in got.items() if c not in missing} == want  # removed: still known to the old state
    assert idx.search("quokka").results  # refreshed: the removed chunks are no longer live in memory
    assert idx.chunk_paths(ids) == want
    # a re-created database restarts chunk ids at 1: the old state's paths are not used for them
    st = idx.keywords.bm25.state
    idx.db.rebuild("test")
    ws.write_text("digest/wiki/other.md", "# Other\nwombat\n")
    idx.sync(force=True)
    new_ids = idx.read(lambda c: [r[0] for r in c.execute("SELECT id FROM chunks")])
    now_paths = idx.read(lambda c: tiers.chunk_paths(c, new_ids))
    stale = st.paths_of(new_ids)
    assert any(stale[c] != now_paths[c] for c in stale)  # the old state knows other chunks by those ids
    idx.keywords.bm25._state = st  # as if no search had refreshed it since
    assert idx.chunk_paths(new_ids) == now_paths


def test_note_matching_the_question_in_several_chunks_ranks_first(ws):
    """Among notes of a similar length (sessions), the one whose chunks hold every word of the question
    between them is the first note of the note-level keyword ranking, above short notes that each
    repeat one of the words; the chunk-level BM25 ranks those short notes' chunks first."""
    filler = lambda tag: " ".join(f"{tag}{i} paddle lake shore camp" for i in range(60))  # noqa: E731
    ws.write_text(
        "daily/2026-05-01/trip.md",
        f"# Trip\n\n## Monday\n{filler('m')} we loaded the kayak.\n\n"
        f"## Tuesday\n{filler('t')} a long portage.\n\n## Wednesday\n{filler('w')} a moose at dawn.\n",
    )
    for i, word in enumerate(("kayak", "portage", "moose")):
        ws.write_text(f"daily/2026-05-0{2 + i}/short-{word}.md", f"# {word}\n{word} {word} for sale\n")
    for i in range(12):
        ws.write_text(
            f"daily/2026-04-{10 + i}/other-{i}.md", "".join(f"\n## Part {j}\n{filler('o')}\n" for j in range(3))
        )
    idx = _idx(ws)
    try:
        idx.sync()
        n = idx.read(
            lambda c: c.execute("SELECT COUNT(*) FROM chunks WHERE path = 'daily/2026-05-01/trip.md'").fetchone()[0]
        )
        assert n >= 3
        q = "kayak portage moose"
        chunks = idx.read(lambda c: keyword.search_chunks(c, q, 3))
        top_chunk_notes = set(idx.chunk_paths([cid for cid, _ in chunks]).values())
        assert "daily/2026-05-01/trip.md" not in top_chunk_notes  # chunk by chunk, the short notes win
        assert idx.keywords.bm25.wait_ready(60)
        for fts, mine in [_both_notes(idx, q, 5)]:
            assert fts == mine
            assert mine[0][0] == "daily/2026-05-01/trip.md"
    finally:
        idx.close()


def test_search_is_the_same_while_the_keyword_index_loads(ws, corpus_idx, monkeypatch):
    """Until the in-memory index is in, FTS5 answers both the chunk and the note rankings: a search
    gives the same results (paths, lines, scores) before and after it loads."""
    loaded = corpus_idx
    qs = _queries(seed=7, n=20) + ["ア・イ tariff"]
    after = [loaded.search(q, limit=5).results for q in qs]
    monkeypatch.setattr(bm25.BM25Index, "start", lambda self: None)  # keep this process's index unloaded
    loading = _idx(ws)
    try:
        assert not loading.keywords.bm25.ready
        before = [loading.search(q, limit=5).results for q in qs]
        assert not loading.keywords.bm25.ready
    finally:
        loading.close()
    assert before == after


def test_unicode_words_are_counted_like_fts5(corpus_idx):
    """Document lengths and term counts equal FTS5's (its own totals record) and the word splitter
    agrees with unicode61 on the tricky cases."""
    idx = corpus_idx
    st = idx.keywords.bm25.state
    assert idx.read(bm25.fts_totals) == (st.n_live, st.tokens_live)
    sp = bm25.Splitter()
    assert sp.split(["οδος", "οδοσ"]) == [["οδοσ"], ["οδοσ"]]  # final sigma folded like FTS5
    assert sp.split(["a・b", "", "x\u0301y"]) == [["a", "b"], [], ["x\u0301y"]]
    # both sigma spellings find the same chunks, exactly as FTS5
    for q in ("οδος", "οδοσ", "ΟΔΟΣ"):
        fts, mine = _both(idx, q, 50)
        assert mine == fts and mine


def test_multi_token_phrase_falls_back_to_fts5(corpus_idx):
    idx = corpus_idx
    st = idx.keywords.bm25.state
    assert st.query_terms(idx.keywords.bm25.splitter, ["a・b"]) is None
    q = "ア・イ tariff"
    got = idx.read(lambda c: idx.keywords.chunks(c, q, 10))
    assert got == idx.read(lambda c: keyword.search_chunks(c, q, 10))


def test_date_filter(corpus_idx):
    idx = corpus_idx
    for q in ("tariff", "关税 库存", "battery risk"):
        for sd, ed in (("2026-02-01", "2026-03-31"), ("2026-01-10", None), (None, "2026-02-15"), ("2027-01-01", None)):
            fts, mine = _both(idx, q, 25, sd, ed)
            assert mine == fts, (q, sd, ed)
    hits = idx.read(lambda c: idx.keywords.bm25.search(c, "tariff", 50, "2026-02-01", "2026-03-31"))
    assert hits
    paths = idx.read(
        lambda c: [c.execute("SELECT path FROM chunks WHERE id=?", (cid,)).fetchone()[0] for cid, _ in hits]
    )
    for p in paths:
        assert p.startswith("daily/") and "2026-02-01" <= p.split("/")[1] <= "2026-03-31", p
    assert idx.read(lambda c: idx.keywords.bm25.search(c, "tariff", 50, "2027-01-01", None)) == []


WRITER = textwrap.dedent("""
    import sys
    from reme_cc.base.config import Config
    from reme_cc.index import Index
    from reme_cc.base.workspace import Workspace
    ws = Workspace(sys.argv[1])
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"))
    changed = []
    for op in sys.argv[2:]:
        kind, path, _, text = op.partition(":")[0], *op.partition(":")[2].partition("=")
        if kind == "write":
            ws.write_text(path, text)
        else:
            (ws.root / path).unlink()
        changed.append(path)
    idx.update_paths(changed)
    idx.close()
""")


def _other_process(ws, *ops: str) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(ws.root), *ops], check=True, timeout=120)


def test_other_process_add_modify_delete_visible_to_next_search(ws, corpus_idx, monkeypatch):
    idx = corpus_idx
    assert idx.search("tariff", limit=3).results  # loads the state at the current generation

    def no_fts(*a, **k):
        raise AssertionError("FTS5 answered: the in-memory index should have")

    monkeypatch.setattr(keyword, "search_chunks", no_fts)
    _other_process(
        ws,
        "write:digest/wiki/new.md=# New\nquokka marsupial 袋鼠\n",
        "write:digest/wiki/topic-0.md=# Zero\nwombat burrow\n",
        "delete:digest/wiki/topic-2.md",
    )
    idx.writer.last_sync = 1e18  # no freshness walk in this process: only the other process's commit counts
    assert [h.path for h in idx.search("quokka", limit=5).results] == ["digest/wiki/new.md"]
    assert [h.path for h in idx.search("袋鼠", limit=5).results] == ["digest/wiki/new.md"]
    assert [h.path for h in idx.search("wombat", limit=5).results] == ["digest/wiki/topic-0.md"]
    st = idx.keywords.bm25.state
    assert len(st.segments) == 2 and st.segments[0].dead > 0
    paths = {h.path for q in EN + ZH for h in idx.search(q, limit=50).results}
    assert "digest/wiki/topic-2.md" not in paths
    monkeypatch.undo()
    for q in _queries(seed=5, n=30) + ["quokka wombat tariff"]:
        fts, mine = _both(idx, q, 25)
        assert mine is None or mine == fts, q
        fts, mine = _both_notes(idx, q, 25)  # removed chunks and the delta segment, note by note
        assert mine == fts, q


def test_many_small_changes_merge_deltas(ws, corpus_idx):
    idx = corpus_idx
    for i in range(bm25.MAX_DELTA_SEGMENTS + 4):
        ws.write_text(f"digest/wiki/extra-{i}.md", f"# Extra {i}\nokapi {i} tariff 关税\n")
        ws.write_text("digest/wiki/topic-4.md", f"# Four\nrewritten {i} okapi\n")
        idx.update_paths([f"digest/wiki/extra-{i}.md", "digest/wiki/topic-4.md"])
        fts, mine = _both(idx, "okapi tariff 关税", 30)
        assert mine == fts
        assert (
            _both_notes(idx, "okapi tariff 关税 rewritten", 30)[1]
            == _both_notes(idx, "okapi tariff 关税 rewritten", 30)[0]
        )
        assert len(idx.keywords.bm25.state.segments) <= 1 + bm25.MAX_DELTA_SEGMENTS
    assert len(idx.keywords.bm25.state.segments) < 1 + i  # merged at least once


def test_a_word_in_every_note_ties_them_and_the_ties_go_by_path(ws, corpus_idx):
    """Hundreds of notes alike (one folder of exported items): the k-th score ties them all; the top k
    are the first by path (chunks: path, line, id), as FTS5 orders them, in every segment."""
    idx = corpus_idx
    names = [f"resource/items/item-{i:04d}.md" for i in range(400)]
    for n in reversed(names):  # written in reverse: chunk ids do not follow path order
        ws.write_text(n, "# item\nshared archive entry\n")
    idx.sync()
    assert idx.keywords.bm25.wait_ready(60)
    for q in ("archive", "shared archive", "archive okapi"):
        for k in (1, 5, 37):
            fts, mine = _both(idx, q, k)
            assert mine == fts, (q, k)
            fts, mine = _both_notes(idx, q, k)
            assert mine == fts, (q, k)
    assert [p for p, _ in _both_notes(idx, "archive", 5)[1]] == names[:5]
    for n in names[:3]:  # a delta segment on top of the base: the same order across segments
        ws.write_text(n.replace("item-", "item-b"), "# item\nshared archive entry\n")
        idx.update_paths([n.replace("item-", "item-b")])
    for k in (1, 5, 37):
        assert _both(idx, "archive", k)[1] == _both(idx, "archive", k)[0]
        assert _both_notes(idx, "archive", k)[1] == _both_notes(idx, "archive", k)[0]


def test_a_query_never_merges_a_big_delta_itself(ws, corpus_idx, monkeypatch):
    """During a bulk import the deltas outgrow a small base: a query indexes only what arrived since
    the last one (at most INLINE_DELTA_MAX chunks), never all the deltas at once (that merge cost a query
    seconds at 100k files); the answers stay FTS5's."""
    idx = corpus_idx
    _both(idx, "okapi", 5)  # the index is in
    monkeypatch.setattr(bm25, "INLINE_DELTA_MAX", 3)
    sizes: list[int] = []
    real = bm25.build_segment

    def counted(state, splitter, rows, *a, **k):
        rows = list(rows)
        sizes.append(len(rows))
        return real(state, splitter, rows, *a, **k)

    monkeypatch.setattr(bm25, "build_segment", counted)
    for i in range(bm25.MAX_DELTA_SEGMENTS + 4):
        ws.write_text(f"digest/wiki/bulk-{i}.md", f"# Bulk {i}\nokapi {i} tariff\n")
        ws.write_text(f"digest/wiki/bulk-{i}-b.md", f"# Bulk {i} b\nokapi {i} levy\n")
        idx.update_paths([f"digest/wiki/bulk-{i}.md", f"digest/wiki/bulk-{i}-b.md"])
        fts, mine = _both(idx, "okapi tariff levy", 40)
        assert mine == fts
        assert _both_notes(idx, "okapi tariff", 40)[1] == _both_notes(idx, "okapi tariff", 40)[0]
    assert sizes and max(sizes) <= 3, sizes
    assert len(idx.keywords.bm25.state.segments) > 1 + bm25.MAX_DELTA_SEGMENTS  # left to the compaction


def test_a_whole_note_query_does_not_wait_for_a_rebuild(ws, corpus_idx, monkeypatch):
    """It waits for the first load (fast, and FTS5 is slower), never for a rebuild after a bulk
    import (seconds at 100k files, and every query of the import would wait): FTS5 answers at once."""
    import threading

    idx, bm = corpus_idx, corpus_idx.keywords.bm25
    monkeypatch.setattr(bm25, "LOAD_WAIT_S", 600.0)
    held = threading.Event()
    real = bm.build
    monkeypatch.setattr(bm, "build", lambda *a, **k: (held.wait(60), real(*a, **k))[1])
    with bm._lock:
        bm._state = None  # as _refresh leaves it when the index fell too far behind
        bm._kick_rebuild()
    got: list = []
    q = threading.Thread(target=lambda: got.append(idx.read(lambda c: bm.search_notes(c, "okapi tariff", 10))))
    q.start()
    q.join(30)
    try:
        assert got and got[0] == idx.read(lambda c: bm25.search_notes_fts(c, "okapi tariff", 10))
    finally:
        held.set()
        q.join()
    assert bm.wait_ready(60)


def test_large_change_answers_from_fts5_and_rebuilds(ws, corpus_idx, monkeypatch):
    idx = corpus_idx
    monkeypatch.setattr(bm25, "INLINE_DELTA_MAX", 3)
    n = bm25.INLINE_DELTA_MAX + 5
    for i in range(n):
        ws.write_text(f"daily/2026-05-01/bulk-{i}.md", f"# Bulk {i}\ncapybara {i}\n")
    idx.sync()
    assert idx.read(lambda c: idx.keywords.bm25.search(c, "capybara", 10)) is None  # too much to do inline
    assert idx.keywords.bm25.wait_ready(60)
    assert idx.keywords.bm25.last_build["how"] == "built"
    fts, mine = _both(idx, "capybara", 10)
    assert mine == fts and len(mine) == n


def test_snapshot_loaded_by_next_process(ws, corpus_idx):
    idx = corpus_idx
    assert idx.keywords.bm25.last_build["saved"]
    snap = bm25.snapshot_path(ws.metadata)
    assert snap.exists()
    other = _idx(ws)
    try:
        assert other.keywords.bm25.wait_ready(30)
        assert other.keywords.bm25.last_build["how"] == "snapshot"
        for q in _queries(n=20):
            fts, mine = _both(other, q, 25)
            assert mine is None or mine == fts, q
    finally:
        other.close()


def test_snapshot_from_older_generation_gets_deltas(ws, corpus_idx):
    idx = corpus_idx
    gen0 = idx.keywords.bm25.state.generation
    _other_process(
        ws,
        "write:digest/wiki/late.md=# Late\nnarwhal tusk\n",
        "write:digest/wiki/topic-6.md=# Six\nbeluga\n",
        "delete:digest/wiki/topic-8.md",
    )
    other = _idx(ws)
    try:
        assert other.keywords.bm25.wait_ready(30)
        assert other.keywords.bm25.last_build["how"] == "snapshot"
        st = other.keywords.bm25.state
        assert st.generation > gen0
        assert len(st.segments) == 2 and st.segments[0].dead > 0
        assert other.read(bm25.fts_totals) == (st.n_live, st.tokens_live)
        for q in ["narwhal", "beluga", "tariff 关税"] + _queries(n=20):
            fts, mine = _both(other, q, 25)
            assert mine is None or mine == fts, q
        assert [h.path for h in other.search("narwhal", limit=3).results] == ["digest/wiki/late.md"]
    finally:
        other.close()


def test_snapshot_far_behind_a_bulk_import_gets_one_delta_not_a_rebuild(ws, corpus_idx, monkeypatch):
    """More new chunks than a query would index itself, but fewer than the snapshot holds: the next
    process's load adds them as one delta (a rebuild cost seconds at 100k files, FTS5 answering
    meanwhile), and answers as FTS5 does."""
    idx = corpus_idx
    monkeypatch.setattr(bm25, "INLINE_DELTA_MAX", 5)
    n_before = idx.keywords.bm25.state.n_live
    _other_process(ws, *[f"write:digest/wiki/bulk-{i}.md=# Bulk {i}\nnarwhal {i} tusk\n" for i in range(12)])
    other = _idx(ws)
    try:
        assert other.keywords.bm25.wait_ready(30)
        assert other.keywords.bm25.last_build["how"] == "snapshot"
        st = other.keywords.bm25.state
        assert len(st.segments) == 2 and st.segments[1].n == 12 and st.n_live == n_before + 12
        for q in ["narwhal tusk", "tariff 关税"] + _queries(n=10):
            fts, mine = _both(other, q, 25)
            assert mine == fts, q
    finally:
        other.close()


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "foreign_db"])
def test_corrupt_or_foreign_snapshot_is_rebuilt_with_log(ws, corpus_idx, damage):
    snap = bm25.snapshot_path(ws.metadata)
    data = snap.read_bytes()
    if damage == "truncate":
        snap.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        snap.write_bytes(b"not a zip file at all" * 10)
    elif damage == "flip":  # one byte inside the postings: zip CRC or the consistency checks catch it
        b = bytearray(data)
        b[len(b) // 2] ^= 0xFF
        snap.write_bytes(bytes(b))
    else:
        corpus_idx.db.run(lambda c: catalog.set_meta(c, "db_id", "another-database"))
    other = _idx(ws)
    try:
        assert other.keywords.bm25.wait_ready(30)
        assert other.keywords.bm25.last_build["how"] == "built"
        assert other.keywords.bm25.last_build["saved"]
        log = (ws.metadata / "logs" / "index.log").read_text(encoding="utf-8")
        assert "bm25 snapshot bm25-" in log and "unusable" in log
        for q in _queries(n=10):
            fts, mine = _both(other, q, 25)
            assert mine is None or mine == fts, q
        assert bm25.load_snapshot(ws.metadata, bm25.db_id(other.db.conn)) is not None  # rewritten, valid
    finally:
        other.close()


def test_replaced_database_is_never_mixed_with_old_chunk_ids(ws, corpus_idx):
    """A re-created database restarts chunk ids at 1: the state and the snapshot of the old one must go."""
    idx = corpus_idx
    old_id = bm25.db_id(idx.db.conn)
    idx.db.rebuild("test")
    idx.sync(force=True)
    assert bm25.db_id(idx.db.conn) not in ("", old_id)
    for q in ("tariff", "关税", "battery risk"):
        assert idx.read(lambda c: idx.keywords.chunks(c, q, 10)) == idx.read(lambda c: keyword.search_chunks(c, q, 10))
    assert idx.keywords.bm25.wait_ready(30)
    assert bm25.db_id(idx.db.conn) == idx.keywords.bm25.state.db_id
    fts, mine = _both(idx, "tariff 关税", 25)
    assert mine == fts


def test_totals_mismatch_falls_back_to_fts5_and_rebuilds(ws, corpus_idx):
    idx = corpus_idx
    st = idx.keywords.bm25.state
    st.tokens_live += 1  # simulate an in-memory index that no longer matches FTS5
    ws.write_text("digest/wiki/extra.md", "# E\nibis\n")
    idx.update_paths(["digest/wiki/extra.md"])
    assert idx.read(lambda c: idx.keywords.bm25.search(c, "ibis", 5)) is None
    assert [h.path for h in idx.search("ibis", limit=5).results] == ["digest/wiki/extra.md"]  # FTS5
    assert idx.keywords.bm25.wait_ready(30)
    assert "totals" in (ws.metadata / "logs" / "index.log").read_text(encoding="utf-8")
    fts, mine = _both(idx, "ibis tariff", 10)
    assert mine == fts


def test_reindex_builds_and_saves_snapshot(ws):
    _corpus(ws, n_files=10)
    idx = _idx(ws)
    try:
        idx.reindex()
        assert idx.keywords.bm25.ready and idx.keywords.bm25.last_build["saved"]
        snap = bm25.snapshot_path(ws.metadata)
        assert bm25.load_snapshot(ws.metadata, bm25.db_id(idx.db.conn)).n_live == idx.keywords.bm25.state.n_live
        fts, mine = _both(idx, "tariff 关税", 10)
        assert mine == fts
        assert snap.exists()
    finally:
        idx.close()


def test_hybrid_search_results_same_with_and_without_numpy(corpus_idx):
    idx = corpus_idx
    qs = _queries(n=15)
    with_np = [idx.search(q, limit=5, start_date=None).results for q in qs]
    with idx.keywords.fts5_only():
        with_fts = [idx.search(q, limit=5).results for q in qs]
    assert with_np == with_fts


def test_build_segment_handles_odd_stored_text():
    """Stored token strings that a naive split would miscount: empty rows, double spaces, tabs."""
    sp = bm25.Splitter()
    st = bm25.State("x")
    rows = [
        (1, "a.md", 1, None, ""),
        (2, "a.md", 5, "2026-01-01", "alpha  beta"),
        (3, "b.md", 1, None, "\tgamma\u3000alpha "),
        (4, "c.md", 2, "2026-01-02", "a・b ΟΔΟΣ"),
    ]
    seg = bm25.build_segment(st, sp, rows)
    st.add_segment(seg)
    assert seg.doclen.tolist() == [0, 2, 2, 3]
    a = st.vocab["alpha"]
    d, f = seg.postings(a)
    assert d.tolist() == [1, 2] and f.tolist() == [1, 1]
    assert st.tokens_live == 7 and st.n_live == 4
    assert "οδοσ" in st.vocab
    assert [cid for cid, _ in st.search([a], 5, None, None)] == [2, 3]  # equal lengths: by path
    assert [cid for cid, _ in st.search([a], 5, "2026-01-01", "2026-01-01")] == [2]
    assert np.all(np.diff(seg.indptr) >= 0)


def test_workspace_path_with_uri_characters(tmp_path):
    """The builder opens its own read-only connection by URI: '?', '#', '%' and spaces in the path."""
    from reme_cc.base.workspace import Workspace

    ws = Workspace(tmp_path / "my notes #1?x=%20")
    ws.write_text("digest/wiki/a.md", "# A\nplatypus venom\n")
    ws.write_text("digest/wiki/b.md", "# B\nplatypus bill echidna\n")
    idx = _idx(ws)
    try:
        idx.sync()
        assert idx.keywords.bm25.wait_ready(30), idx.keywords.bm25.disabled
        fts, mine = _both(idx, "platypus echidna", 5)
        assert mine == fts and len(mine) == 2
    finally:
        idx.close()


def test_recreated_database_at_the_same_generation_is_noticed(ws, corpus_idx):
    """Generations restart at 0 in a re-created database: equal numbers must not hide the swap."""
    idx = corpus_idx
    st = idx.keywords.bm25.state
    idx.db.rebuild("test")
    ws.write_text("digest/wiki/only.md", "# Only\nplatypus\n")
    idx.sync(force=True)
    st.generation = bm25.catalog.generation(idx.db.conn)  # the old state claims the new generation
    got = idx.read(lambda c: idx.keywords.chunks(c, "platypus tariff", 10))
    assert got == idx.read(lambda c: keyword.search_chunks(c, "platypus tariff", 10))


def test_vector_file_of_a_recreated_database_is_not_reused(tmp_path):
    """Same db_id rule for the shared vector file: chunk id 1 of a re-created database is another chunk."""
    from reme_cc.index.vectors import VectorStore

    meta = tmp_path / "metadata"
    meta.mkdir()

    def fill(conn, vec):
        conn.execute(
            "INSERT INTO chunks(path, start_line, end_line, text, hash) VALUES ('a.md', 1, 1, 't', ?)",
            (vec.tobytes().hex(),),
        )
        conn.execute("INSERT INTO embeddings VALUES ('m', ?, ?)", (vec.tobytes().hex(), vec.tobytes()))
        catalog.bump_generation(conn)

    a = np.array([1, 0, 0, 0], np.float32)
    b = np.array([0, 1, 0, 0], np.float32)
    conn, _ = catalog.connect(meta)
    fill(conn, a)
    store = VectorStore(meta, "m", None)
    store.refresh(conn, catalog.generation(conn))
    store.save(catalog.generation(conn))
    conn.close()
    catalog.remove_db_files(meta)  # e.g. damaged: deleted and re-created; chunk ids restart at 1
    conn, _ = catalog.connect(meta)
    fill(conn, b)
    store = VectorStore(meta, "m", None)
    store.refresh(conn, catalog.generation(conn))
    assert store.search(b, 1) == [(1, pytest.approx(1.0))]
    conn.close()
