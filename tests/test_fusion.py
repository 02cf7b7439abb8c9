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
