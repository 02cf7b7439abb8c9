"""Fusion is a function of one Recall: each rule on hand-made recalls, no index, no database."""

from __future__ import annotations

import pytest

from reme_cc.index.records import Recall
from reme_cc.index.search import FUSIONS, RRF_K, Fusion, fuse

K = RRF_K


def ranked(fused: dict) -> list[int]:
    return [cid for cid, _ in sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[0]))]


def test_keyword_only_recall_is_the_keyword_ranking():
    rec = Recall(keyword=[(3, 9.0), (1, 5.0), (2, 1.0)], keyword_searched=True)
    fused = fuse(rec, FUSIONS["rrf"])
    assert ranked(fused) == [3, 1, 2]
    assert fused[3] == pytest.approx((1 / (K + 1), 0.0, 1 / (K + 1)))  # one ranking alone: weight 1


def test_both_halves_searched_keep_their_weights_even_when_one_found_nothing():
    rec = Recall(keyword=[(7, 2.0)], keyword_searched=True, coverage=1.0)
    assert fuse(rec, FUSIONS["rrf"])[7][0] == pytest.approx(0.5 / (K + 1))


def test_rrf_rule_sums_both_rankings():
    rec = Recall(keyword=[(1, 3.0), (2, 2.0)], vector=[(2, 0.9), (3, 0.8)], keyword_searched=True, coverage=1.0)
    fused = fuse(rec, FUSIONS["rrf"])
    assert fused[2] == pytest.approx((0.5 / (K + 1) + 0.5 / (K + 2), 0.5 / (K + 1), 0.5 / (K + 2)))
    assert ranked(fused)[0] == 2


def test_coverage_aware_reads_vector_ranks_among_the_embedded_and_stands_in_for_the_rest():
    # a tenth of the chunks embedded: chunk 5's vector rank 1 reads as rank 10; chunk 1 has no vector,
    # so its keyword rank stands in for its vector rank
    rec = Recall(
        keyword=[(1, 3.0)], vector=[(5, 0.9)], keyword_searched=True, coverage=0.1, embedded=lambda cid: cid == 5
    )
    fused = fuse(rec, FUSIONS["rrf"])
    assert fused[5][1] == pytest.approx(0.5 / (K + 10))
    assert fused[1] == pytest.approx((0.5 / (K + 1) * 2, 0.5 / (K + 1), 0.5 / (K + 1)))
    # the seed's rule is not coverage-aware: the raw vector rank
    assert fuse(rec, FUSIONS["rrf-0.7"])[5][1] == pytest.approx(0.7 / (K + 1))


def test_while_vectors_are_partial_an_embedded_keyword_hit_is_not_ranked_below_the_unembedded():
    # half the chunks embedded; BM25 ranks 1, 2, 3. Chunk 1 has a vector but the vector half ranks it
    # 4th (read as 8th): it keeps its keyword rank as its vector rank, as the unembedded chunk 2 does,
    # so it stays above it (it fell below before); chunk 3's real vector rank (1st, read as 2nd) beats
    # its guess (3rd) and counts
    rec = Recall(
        keyword=[(1, 9.0), (2, 8.0), (3, 7.0)],
        vector=[(3, 0.9), (8, 0.8), (9, 0.7), (1, 0.6)],
        keyword_searched=True,
        coverage=0.5,
        embedded=lambda cid: cid != 2,
    )
    fused = fuse(rec, FUSIONS["rrf"])
    assert fused[1] == pytest.approx((0.5 / (K + 1) * 2, 0.5 / (K + 1), 0.5 / (K + 1)))
    assert fused[3][1] == pytest.approx(0.5 / (K + 2))
    assert ranked(fused)[:2] == [1, 2]
    # with every chunk embedded no rank is a guess: the vector half's 4th is read as such
    full = fuse(Recall(keyword=rec.keyword, vector=rec.vector, keyword_searched=True, coverage=1.0), FUSIONS["rrf"])
    assert full[1][1] == pytest.approx(0.5 / (K + 4))


def test_normalized_rule_scales_raw_scores():
    rec = Recall(keyword=[(1, 10.0), (2, 4.0)], vector=[(2, 0.9), (3, 0.5)], keyword_searched=True, coverage=1.0)
    fused = fuse(rec, FUSIONS["normalized"])
    assert fused[2][0] == pytest.approx(0.7 + 0.0) and fused[1][0] == pytest.approx(0.3)


def test_rare_term_among_the_keyword_top_is_worth_a_first_vector_rank():
    rec = Recall(
        keyword=[(9, 4.0), (8, 3.0)],
        vector=[(1, 0.9), (2, 0.8), (8, 0.1)],
        keyword_searched=True,
        coverage=1.0,
        rare_terms=[frozenset({9}), frozenset({8, 30, 31, 32})],
    )
    rule = Fusion(rare=3)
    fused = fuse(rec, rule)
    assert fused[9][0] == pytest.approx(0.5 / (K + 1) + 0.5 / (K + 1))  # its keyword rank + a first vector rank
    assert fused[9][2] == pytest.approx(fused[9][0])  # the bonus shows in the keyword part
    assert fused[8][0] == pytest.approx(0.5 / (K + 3) + 0.5 / (K + 2))  # its term is in 4 chunks: not rare
    assert ranked(fused)[0] == 9
    assert fuse(rec, Fusion(rare=0))[9][0] == pytest.approx(0.5 / (K + 1))  # off


def test_note_term_lifts_every_chunk_of_the_note_the_question_is_about():
    # note a.md matches in two chunks (whole-note BM25 ranks it first), b.md in one, better ranked chunk
    rec = Recall(
        keyword=[(3, 5.0), (1, 4.0), (2, 3.0)],
        vector=[(3, 0.9), (1, 0.8)],
        keyword_searched=True,
        coverage=1.0,
        notes=[("a.md", 9.0), ("b.md", 5.0)],
        paths={1: "a.md", 2: "a.md", 3: "b.md"},
        chunks=100,
    )
    plain = fuse(rec, FUSIONS["rrf"])
    with_notes = fuse(rec, Fusion(note=1.0))
    assert ranked(plain)[0] == 3
    assert with_notes[2][0] - plain[2][0] == pytest.approx(with_notes[1][0] - plain[1][0])  # the same note term
    note_a = 0.5 / (K + 2) + 0.5 / (K + 1)  # a.md: second by its best chunk's vector rank, first by BM25
    assert with_notes[1][0] == pytest.approx(plain[1][0] + note_a)


def test_a_rare_term_counts_for_the_note_only_when_rare_in_the_whole_workspace():
    rec = Recall(
        keyword=[(9, 4.0), (1, 3.0)],
        vector=[(1, 0.9), (9, 0.1)],
        keyword_searched=True,
        coverage=1.0,
        notes=[("b.md", 3.0), ("a.md", 2.0)],
        paths={9: "a.md", 1: "b.md"},
        rare_terms=[frozenset({9, 40})],
    )  # in 2 chunks
    rule = Fusion(note=1.0, rare=3)
    small = fuse(Recall(**{**rec.__dict__, "chunks": 100}), rule)  # 1 % of 100 = 1 chunk: not rare for the note
    large = fuse(Recall(**{**rec.__dict__, "chunks": 1000}), rule)  # 1 % of 1000 >= 3: rare for the note too
    assert large[9][0] > small[9][0]
    assert small[9][0] == pytest.approx(fuse(Recall(**{**rec.__dict__, "chunks": 0}), rule)[9][0])


# ---- another script than the question's (issue 25, 4) ----------------------------------------------
def _english_question_chinese_notes(**changes) -> Recall:
    # BM25 found the English notes 1 and 2 (the question's words); the vector half ranks them first
    # too (a multilingual model scores its own language higher), then the Chinese chunks 7 and 8,
    # which BM25 cannot match on an English question's words
    base = dict(
        keyword=[(1, 5.0), (2, 4.0)],
        vector=[(1, 0.9), (2, 0.85), (7, 0.8), (8, 0.7)],
        keyword_searched=True,
        coverage=1.0,
        foreign=frozenset({7, 8}),
    )
    return Recall(**{**base, **changes})


def test_a_foreign_vector_hit_takes_its_rank_among_the_foreign_hits_as_its_keyword_rank():
    rec = _english_question_chinese_notes()
    fused = fuse(rec, Fusion(foreign=True))
    assert fused[7] == pytest.approx((0.5 / (K + 3) + 0.5 / (K + 1), 0.5 / (K + 3), 0.5 / (K + 1)))
    assert fused[8][0] == pytest.approx(0.5 / (K + 4) + 0.5 / (K + 2))
    assert fused[1][0] == pytest.approx(1 / (K + 1))  # the question's own script: as before
    assert ranked(fused)[:2] == [1, 7]  # above the second English hit (rank 2 in both halves)
    assert fuse(rec, Fusion())[7][0] == pytest.approx(0.5 / (K + 3))  # off: its vector rank alone
    assert FUSIONS["scripts"].foreign and not FUSIONS["notes"].foreign


def test_a_foreign_hit_bm25_ranked_keeps_its_own_keyword_rank():
    # chunk 7 is Chinese but names the question's command: BM25 ranks it third
    rec = _english_question_chinese_notes(keyword=[(1, 5.0), (2, 4.0), (7, 1.0)])
    fused = fuse(rec, Fusion(foreign=True))
    assert fused[7][0] == pytest.approx(0.5 / (K + 3) + 0.5 / (K + 3))
    assert fused[8][0] == pytest.approx(0.5 / (K + 4) + 0.5 / (K + 2))  # still second among the foreign


def test_no_stand_in_when_bm25s_top_holds_a_rare_term():
    # an identifier is asked for: a foreign stand-in must not tie with the exact match
    rec = _english_question_chinese_notes(rare_terms=[frozenset({2})])
    fused = fuse(rec, Fusion(foreign=True, rare=3))
    assert fused[7][0] == pytest.approx(0.5 / (K + 3))
    assert ranked(fused)[:3] == [1, 2, 7]


def test_while_vectors_are_partial_the_stand_in_rank_is_read_among_the_embedded():
    rec = _english_question_chinese_notes(coverage=0.5, embedded=lambda cid: True)
    fused = fuse(rec, Fusion(foreign=True))
    assert fused[7][2] == pytest.approx(0.5 / (K + 1 / 0.5))


def test_a_foreign_note_takes_its_rank_among_the_foreign_notes_in_the_note_term():
    rec = _english_question_chinese_notes(
        notes=[("en1.md", 5.0), ("en2.md", 4.0)],
        paths={1: "en1.md", 2: "en2.md", 7: "zh7.md", 8: "zh8.md"},
        chunks=100,
    )
    on, off = fuse(rec, Fusion(note=1.0, foreign=True)), fuse(rec, Fusion(note=1.0))
    note_term = 0.5 / (K + 3) + 0.5 / (K + 1)  # zh7.md: third note by vector, first foreign note
    chunk_stand_in = 0.5 / (K + 1)
    assert on[7][0] == pytest.approx(off[7][0] + chunk_stand_in + (note_term - 0.5 / (K + 3)))


def test_dominant_script_counts_cjk_characters_against_latin_words():
    from reme_cc.index.recall import dominant_script

    assert dominant_script("which database do we use locally") == "latin"
    assert dominant_script("特殊设备文件") == "cjk"
    # a Chinese section quoting a command is Chinese prose; an English note naming 宁德时代 is English
    assert dominant_script("执行 sudo tune2fs -l /dev/hda1 可以显示文件系统超级块内容") == "cjk"
    assert dominant_script("CATL (宁德时代) is the largest maker of batteries for electric cars") == "latin"
    assert dominant_script("12345 ---") == "latin"


def test_recall_marks_the_vector_hits_in_another_script(tmp_path):
    from reme_cc.base.config import Config
    from reme_cc.base.workspace import Workspace
    from reme_cc.index import Index
    from reme_cc.index.recall import foreign_hits

    ws = Workspace(tmp_path)
    ws.write_text("digest/zh.md", "# 特殊设备文件\n\n还有一些特殊的设备文件，例如 /dev/null 和 /dev/zero。\n")
    ws.write_text("digest/en.md", "# Special device files\n\nThere are some special device files.\n")
    idx = Index(ws, Config.load(ws.root).replace(embedding="none"), background_embedding=False)
    try:
        idx.sync()
        ids = idx.read(lambda conn: dict(conn.execute("SELECT path, id FROM chunks")))
        both = [ids["digest/zh.md"], ids["digest/en.md"]]
        assert idx.read(lambda conn: foreign_hits(conn, "special device files", both)) == {ids["digest/zh.md"]}
        assert idx.read(lambda conn: foreign_hits(conn, "特殊设备", both)) == {ids["digest/en.md"]}
    finally:
        idx.close()


def test_a_foreign_keyword_hit_the_vector_half_left_out_takes_its_rank_among_the_foreign_keyword_hits():
    # a Chinese question naming Debian: BM25 finds the Chinese chunk 3 and, through "Debian", the
    # English chunk 5; the vector half ranks only Chinese chunks (its own language first)
    rec = Recall(
        keyword=[(3, 6.0), (5, 4.0)],
        vector=[(3, 0.9), (4, 0.85)],
        keyword_searched=True,
        coverage=1.0,
        embedded=lambda cid: True,
        foreign=frozenset({5}),
    )
    fused = fuse(rec, Fusion(foreign=True))
    assert fused[5] == pytest.approx((0.5 / (K + 2) + 0.5 / (K + 1), 0.5 / (K + 1), 0.5 / (K + 2)))
    assert ranked(fused)[:2] == [3, 5]  # above the Chinese chunk only the vector half found
    assert fuse(rec, Fusion())[5][0] == pytest.approx(0.5 / (K + 2))


def test_a_foreign_keyword_hit_without_a_vector_keeps_the_better_of_its_two_stand_ins():
    # chunk 5 has no vector yet: the coverage-aware rule already reads its keyword rank (2) as its
    # vector rank; the foreign stand-in (first foreign keyword hit) raises that part, it does not add
    rec = Recall(
        keyword=[(3, 6.0), (5, 4.0)],
        vector=[(3, 0.9)],
        keyword_searched=True,
        coverage=0.5,
        embedded=lambda cid: cid != 5,
        foreign=frozenset({5}),
    )
    fused = fuse(rec, Fusion(foreign=True))
    assert fused[5][1] == pytest.approx(0.5 / (K + 1))
    assert fuse(rec, Fusion())[5][1] == pytest.approx(0.5 / (K + 2))
