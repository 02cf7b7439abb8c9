"""Chunker: one test per rule of document 000, plus skeleton, encodings, plain/JSONL, properties."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reme_cc.base.errors import InvalidInputError
from reme_cc.notes import chunker
from reme_cc.notes.chunker import chunk_file
from reme_cc.notes.text import note_context
from reme_cc.notes.wikilinks import link_spans


def chunks(text: str, max_chars: int = 1500, path: str = "n.md"):
    return chunk_file(path, text.encode("utf-8"), max_chars=max_chars)


def lines_of(text: str, c) -> list[str]:
    return text.split("\n")[c.start_line - 1 : c.end_line]


# ---- rule 1: frontmatter parsed first; body chunked alone; its lines still count -------------


def test_rule1_frontmatter_separate_lines_counted():
    text = "---\nname: n\ndescription: d\n---\n# Title\nbody line\n"
    (c,) = chunks(text)
    assert c.text == "# Title\nbody line"
    assert (c.start_line, c.end_line) == (5, 6)
    assert c.headings == ("# Title",)
    assert c.hash == hashlib.sha256(c.text.encode()).hexdigest()
    assert "name: n" not in c.text


def test_rule1_broken_frontmatter_body_still_chunked():
    (c,) = chunks("---\nname: [oops\n---\ntext\n")
    assert c.text == "text" and (c.start_line, c.end_line) == (4, 4)


# ---- rule 2 + 3: heading tree; a whole section is one chunk when it fits ---------------------

DOC = """# 光伏产业链
概述 [[digest/wiki/光伏.md]]
## 上游：硅料
### 多晶硅工艺
西门子法。
### 颗粒硅
流化床法。
## 中游：硅片
硅片切割。
## 下游：组件
组件封装。
"""


def test_rule3_whole_document_fits_in_one_chunk():
    (c,) = chunks(DOC)
    assert c.text == DOC.rstrip("\n")
    assert (c.start_line, c.end_line) == (1, 11)
    assert c.headings == ("# 光伏产业链",)


def test_rule2_heading_tree_and_skeleton():
    # budget small enough that "# 光伏产业链" does not fit but each H2 does
    got = [(c.start_line, c.end_line, c.headings, c.text) for c in chunks(DOC, max_chars=80)]
    assert got == [
        (
            1,
            2,
            ("# 光伏产业链",),
            "# 光伏产业链\n概述 [[digest/wiki/光伏.md]]\n## 上游：硅料\n## 中游：硅片\n## 下游：组件",
        ),
        (
            3,
            7,
            ("# 光伏产业链", "## 上游：硅料"),
            "# 光伏产业链\n## 上游：硅料\n### 多晶硅工艺\n西门子法。\n### 颗粒硅\n流化床法。\n## 中游：硅片\n## 下游：组件",
        ),
        (8, 9, ("# 光伏产业链", "## 中游：硅片"), "# 光伏产业链\n## 中游：硅片\n硅片切割。\n## 下游：组件"),
        (10, 11, ("# 光伏产业链", "## 下游：组件"), "# 光伏产业链\n## 下游：组件\n组件封装。"),
    ]


# ---- rule 4: long sections split recursively into sub-sections and blocks --------------------


def test_rule4_recursive_split_matches_seed_skeleton():
    long = "改良西门子法是主流工艺。" * 10  # 120 chars
    text = DOC.replace("西门子法。", long)
    got = [(c.start_line, c.end_line, c.text) for c in chunks(text, max_chars=165)]
    assert got[1] == (
        3,
        5,
        "# 光伏产业链\n## 上游：硅料\n### 多晶硅工艺\n" + long + "\n### 颗粒硅\n## 中游：硅片\n## 下游：组件",
    )
    assert got[2] == (6, 7, "# 光伏产业链\n## 上游：硅料\n### 颗粒硅\n流化床法。\n## 中游：硅片\n## 下游：组件")
    # heading line 3 (no intro of its own) is covered by the first sub-section chunk
    assert all(any(s <= ln <= e for s, e, _ in got) for ln in range(1, 12))


def test_rule4_intro_blocks_packed_before_subsections():
    paras = "\n\n".join(f"paragraph {i} " + "x" * 40 for i in range(1, 5))
    text = f"# A\n{paras}\n## B\nb text\n"
    got = [(c.start_line, c.end_line, c.text) for c in chunks(text, max_chars=130)]
    p = paras.split("\n\n")
    assert got == [
        (1, 4, f"# A\n{p[0]}\n\n{p[1]}\n## B"),
        (6, 8, f"# A\n{p[2]}\n\n{p[3]}\n## B"),
        (9, 10, "# A\n## B\nb text"),
    ]


# ---- rule 5: tables split with the header (and delimiter) row repeated ------------------------


def test_rule5_table_header_repeated():
    rows = [f"| r{i} | value number {i} |" for i in range(1, 9)]
    text = "# T\n\n| h1 | h2 |\n|----|----|\n" + "\n".join(rows) + "\n\nafter\n"
    got = [(c.start_line, c.end_line, c.text) for c in chunks(text, max_chars=150)]
    head = "| h1 | h2 |\n|----|----|"
    assert got == [
        (1, 8, "# T\n" + head + "\n" + "\n".join(rows[:4])),
        (9, 12, "# T\n" + head + "\n" + "\n".join(rows[4:])),
        (14, 14, "# T\nafter"),
    ]


# ---- rule 6: code blocks split with the fence repeated ----------------------------------------


def test_rule6_code_fence_repeated():
    code = [f"print('line {i}')" for i in range(1, 12)]
    text = "# C\n```python\n" + "\n".join(code) + "\n```\n"
    got = [(c.start_line, c.end_line, c.text) for c in chunks(text, max_chars=120)]
    assert got == [
        (1, 7, "# C\n```python\n" + "\n".join(code[:5]) + "\n```"),
        (8, 12, "# C\n```python\n" + "\n".join(code[5:10]) + "\n```"),
        (13, 14, "# C\n```python\n" + code[10] + "\n```"),
    ]


def test_rule6_unterminated_fence_runs_to_end():
    code = [f"x = {i} # some padding text" for i in range(1, 10)]
    text = "~~~\n" + "\n".join(code) + "\n"
    got = chunks(text, max_chars=100)
    assert all(c.text.startswith("~~~\n") and not c.text.endswith("~~~") for c in got)
    assert got[0].start_line == 1 and got[-1].end_line == 10


# ---- rule 7: lists packed by item -------------------------------------------------------------


def test_rule7_list_packed_by_item():
    items = [f"- item {i} with some words\n  continuation {i}" for i in range(1, 7)]
    text = "# L\n" + "\n".join(items) + "\n"
    got = [(c.start_line, c.end_line, c.text) for c in chunks(text, max_chars=130)]
    assert got == [
        (1, 5, "# L\n" + "\n".join(items[0:2])),
        (6, 9, "# L\n" + "\n".join(items[2:4])),
        (10, 13, "# L\n" + "\n".join(items[4:6])),
    ]


# ---- rule 8: line-greedy split last, marked [Part X/N] ----------------------------------------


def test_rule8_line_greedy_with_part_markers():
    lines = [f"line {i} " + "w" * 30 for i in range(1, 7)]
    text = "# P\n" + "\n".join(lines) + "\n"
    got = [(c.start_line, c.end_line, c.text) for c in chunks(text, max_chars=110)]
    assert got == [
        (1, 3, "# P\n[Part 1/3]\n" + "\n".join(lines[0:2])),
        (4, 5, "# P\n[Part 2/3]\n" + "\n".join(lines[2:4])),
        (6, 7, "# P\n[Part 3/3]\n" + "\n".join(lines[4:6])),
    ]


def test_chinese_long_paragraph_splits_at_sentence_ends():
    sentences = [f"第{i}句话讲的是光伏产业的某个环节。" for i in range(1, 30)]
    text = "# 中文\n" + "".join(sentences) + "\n"
    got = chunks(text, max_chars=120)
    assert len(got) > 2
    for k, c in enumerate(got):
        body = c.text.split("\n", 2)[2]  # drop heading + [Part] marker
        assert body.endswith("。")
        assert len(c.text) <= 120
        assert (c.start_line, c.end_line) == ((1 if k == 0 else 2), 2)  # the first piece covers the heading
    assert "".join(c.text.split("\n", 2)[2] for c in got) == "".join(sentences)


def test_boundaries_never_cut_wikilinks():
    link = "[[digest/wiki/一个很长的链接目标名字.md#L9-L10|别名]]"
    text = "# W\n" + ("前文" * 17 + link) * 12 + "\n"
    got = chunks(text, max_chars=100)
    assert len(got) > 3
    for c in got:
        body = c.text.split("\n", 2)[2]
        assert body.count("[[") == body.count("]]")
        assert all(body[a:b] == link for a, b in link_spans(body))


def test_setext_headings_and_heading_skeleton_normalized():
    text = "Title\n=====\nintro " + "i" * 60 + "\n\nSub\n---\nsub " + "s" * 50 + "\n"
    got = [(c.start_line, c.end_line, c.headings) for c in chunks(text, max_chars=90)]
    assert got == [(1, 3, ("# Title",)), (5, 7, ("# Title", "## Sub"))]
    # a paragraph line directly above `---` is a setext heading (CommonMark), not a rule
    got = chunks("intro\nSub\n---\nbody\n", max_chars=500)
    assert got[0].headings == ("## intro Sub",)


def test_crlf_normalized_and_line_numbers_exact():
    text = "---\r\nname: x\r\n---\r\n# H\r\nline\r\n"
    (c,) = chunk_file("n.md", text.encode(), max_chars=500)
    assert c.text == "# H\nline" and (c.start_line, c.end_line) == (4, 5)


def test_invalid_encoding_policies():
    data = b"# H\nbad \xff byte\n"
    (c,) = chunk_file("n.md", data)
    assert "bad \ufffd byte" in c.text
    with pytest.raises(InvalidInputError):
        chunk_file("n.md", data, invalid_encoding_policy="strict")
    with pytest.raises(InvalidInputError):
        chunk_file("n.md", data, invalid_encoding_policy="ignore")
    with pytest.raises(InvalidInputError):
        chunk_file("n.md", data, max_chars=10)


def test_empty_binary_and_blank_files():
    assert chunk_file("n.md", b"") == []
    assert chunk_file("n.md", b"\n\n  \n") == []
    assert chunk_file("n.md", b"---\nname: x\n---\n") == []
    assert chunk_file("r.pdf", b"%PDF\x00\x01\x02") == []


# ---- other files ------------------------------------------------------------------------------


def test_plain_text_chunks_with_overlap_and_exact_ranges():
    lines = [f"log line {i:03d} " + "z" * 20 for i in range(1, 41)]
    text = "\n".join(lines) + "\n"
    got = chunk_file("app.log", text.encode(), max_chars=300)
    assert got[0].start_line == 1 and got[-1].end_line == 40
    for c in got:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert len(c.text) <= 300
    for a, b in zip(got, got[1:]):
        assert b.start_line <= a.end_line  # small overlap
        assert b.start_line > a.start_line


def test_plain_text_long_line_never_splits_characters():
    text = "字" * 1000
    got = chunk_file("a.txt", text.encode(), max_chars=300)
    assert "".join(c.text for c in got) == text
    assert all((c.start_line, c.end_line) == (1, 1) for c in got)


def test_jsonl_records_grouped_with_exact_lines():
    recs = [json.dumps({"i": i, "text": "hello " * 5}) for i in range(20)]
    text = "\n".join(recs[:10]) + "\n\n" + "\n".join(recs[10:]) + "\n"
    got = chunk_file("session/dialog/a.jsonl", text.encode(), max_chars=300)
    file_lines = text.split("\n")
    seen = []
    for c in got:
        assert len(c.text) <= 300
        for rec in c.text.split("\n"):
            json.loads(rec)  # whole records only
            seen.append(rec)
        assert file_lines[c.start_line - 1] == c.text.split("\n")[0]
        assert file_lines[c.end_line - 1] == c.text.split("\n")[-1]
    assert seen == recs


def test_jsonl_huge_record_split_in_parts():
    rec = json.dumps({"text": "x " * 800})
    got = chunk_file("a.jsonl", (rec + "\n").encode(), max_chars=300)
    assert len(got) > 1 and got[0].text.startswith("[Part 1/")
    assert all((c.start_line, c.end_line) == (1, 1) for c in got)


# ---- large files --------------------------------------------------------------------------------


def test_large_markdown_uses_line_scanner(monkeypatch):
    monkeypatch.setattr(chunker, "_AST_LIMIT", 1000)
    sec = "## S{i}\ntext [[a.md]] " + "y" * 50 + "\n```\n# not a heading\n```\n"
    text = "".join(sec.format(i=i) for i in range(200))
    got = chunks(text, max_chars=400)
    assert all(not any(h.startswith("# not") for h in c.headings) for c in got)
    assert {c.headings[-1] for c in got} == {f"## S{i}" for i in range(200)}
    _check_invariants(text, got)


def test_five_megabyte_markdown_is_fast():
    sec = "## Section {i}\n\npara [[x.md]] 中文句子。第二句！\n\n- a\n- b\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    text = "".join(sec.format(i=i) for i in range(60_000))  # ~5 MB, above the AST limit
    t = time.perf_counter()
    got = chunks(text)
    assert time.perf_counter() - t < 30
    assert len(got) > 1000


# ---- properties ---------------------------------------------------------------------------------


def _check_invariants(text: str, got) -> None:
    norm = text.removeprefix("\ufeff").replace("\r\n", "\n")
    file_lines = norm.split("\n")
    n = len(file_lines)
    from reme_cc.notes.frontmatter import split_frontmatter

    raw, _, body_start, _ = split_frontmatter(norm)
    first_body = body_start if raw is not None else 1
    prev = (0, 0)
    for c in got:
        assert 1 <= c.start_line <= c.end_line <= n
        assert (c.start_line, c.end_line) >= prev  # ordered
        prev = (c.start_line, c.end_line)
        assert c.text.strip()
    for ln in range(first_body, n + 1):
        if file_lines[ln - 1].strip():
            assert any(c.start_line <= ln <= c.end_line for c in got), (ln, file_lines[ln - 1])


_md_piece = st.sampled_from(
    [
        "# H1\n",
        "## H2\n",
        "### H3\n",
        "Title\n===\n",
        "para text here\n",
        "中文句子。又一句！\n",
        "\n",
        "- item\n",
        "  cont\n",
        "1. one\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "```\ncode\n",
        "```\n",
        "~~~\n",
        "> quote\n",
        "[[link.md]] ",
        "---\n",
        "name: x\n",
        "x" * 90 + "\n",
        "字" * 120 + "\n",
        "\r\n",
        "    indented\n",
        "<div>\nhtml\n</div>\n",
        "***\n",
        "[ref]: http://x\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_md_piece, max_size=40).map("".join), st.sampled_from([80, 120, 300, 1500]))
def test_markdown_invariants(text, max_chars):
    got = chunk_file("n.md", text.encode(), max_chars=max_chars)
    _check_invariants(text, got)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=600), st.sampled_from(["n.md", "a.txt", "a.jsonl"]))
def test_any_text_never_crashes(text, path):
    got = chunk_file(path, text.encode("utf-8", "surrogatepass"), max_chars=100)
    if "\x00" not in text:
        _check_invariants(text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"), got)


def test_seed_example_note_and_link_reference_definitions():
    text = (
        "---\nname: 光伏产业链研究\ndescription: 从硅料到组件的全链条梳理\ntags: [新能源, 光伏]\n---\n"
        "# 结论\n光伏产业链可以拆成 [[digest/wiki/硅料.md]]、硅片、电池片和组件。\n"
        "主要生产商包括 [[digest/wiki/隆基绿能.md|隆基]]。\n"
    )
    (c,) = chunks(text)
    assert (c.start_line, c.end_line, c.headings) == (6, 8, ("# 结论",))
    assert c.text == "\n".join(text.split("\n")[5:8])
    (c,) = chunks("[ref]: http://example.com\n\ntext\n")  # kept out of mistletoe's children
    assert (c.start_line, c.end_line) == (1, 3)


def test_deep_heading_without_intro_covers_its_line():
    text = "# A\n## B\n### C\n" + "\n\n".join("para " + "p" * 50 for _ in range(4)) + "\n"
    got = chunks(text, max_chars=120)
    assert got[0].start_line == 1  # "# A" and "## B" have no text of their own
    assert got[0].headings == ("# A", "## B", "### C")
    _check_invariants(text, got)


def test_plain_text_no_redundant_tail_chunk():
    lines = [f"line {i} " + "q" * 40 for i in range(1, 8)]
    text = "\n".join(lines) + "\n\n\n"
    got = chunk_file("a.txt", text.encode(), max_chars=200)
    for a, b in zip(got, got[1:]):
        assert b.end_line > a.end_line  # every chunk brings new lines
    assert got[-1].end_line == 7
    _check_invariants(text, got)


def test_every_chunk_of_a_note_starts_with_its_context_line_within_the_budget():
    """The context line heads every chunk (the note's name and description are in no body line), counts
    against the budget, and moves no line range."""
    body = "# Title\n\n" + "\n\n".join(f"## Part {i}\n\n" + "word " * 60 for i in range(6)) + "\n"
    data = ("---\nname: Ledger close\ndescription: why it balances\n---\n" + body).encode()
    context = note_context("Ledger close", "why it balances")
    plain = chunk_file("n.md", data, max_chars=400)
    framed = chunk_file("n.md", data, max_chars=400, context=context)
    assert context == "Ledger close — why it balances"
    assert len(framed) >= len(plain) > 3
    assert all(c.text.startswith(context + "\n") for c in framed)
    assert {(c.start_line, c.end_line) for c in plain} >= {(c.start_line, c.end_line) for c in framed}
    for c in framed:  # the budget holds the context line too (the trailing skeleton of headings is extra)
        lines = c.text.split("\n")
        while lines[-1].startswith("#"):
            lines.pop()
        assert len("\n".join(lines)) <= 400


def test_a_context_line_is_one_capped_line_of_strings_only():
    assert note_context("Same", "Same") == "Same"
    assert note_context(None, ["a", "list"]) == ""
    assert note_context("a\nname", "  spaced \t out ") == "a name — spaced out"
    long = note_context("n", "word " * 200)
    assert "\n" not in long and len(long) <= 300 and long.endswith("…")
