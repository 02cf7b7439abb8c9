"""Frontmatter: parse, line-level merge (verbatim preservation), broken YAML, rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reme_cc.base.errors import InvalidInputError
from reme_cc.notes.frontmatter import merge_frontmatter, parse_note, render_note

NOTE = """---
# leading comment kept
name: 光伏产业链研究
description: 从硅料到组件的全链条梳理
tags: [新能源, 光伏]   # trailing comment
source_conversation: "[[session/claude_code/x.jsonl]]"
date: 2026-06-20
multi: |
  line one
  line two
list:
- a
- b
quoted: 'single #not a comment'
---
# 结论
正文 [[digest/wiki/硅料.md]]
"""


def test_parse_recognises_name_description_and_keeps_everything():
    note = parse_note(NOTE)
    assert note.name == "光伏产业链研究"
    assert note.description == "从硅料到组件的全链条梳理"
    assert list(note.meta) == ["name", "description", "tags", "source_conversation", "date", "multi", "list", "quoted"]
    assert note.meta["tags"] == ["新能源", "光伏"]
    assert note.meta["source_conversation"] == "[[session/claude_code/x.jsonl]]"
    assert note.meta["date"] == "2026-06-20"  # dates stay strings
    assert note.meta["multi"] == "line one\nline two\n"
    assert note.error is None
    assert note.raw_frontmatter.startswith("# leading comment kept\nname:")
    assert note.body == "# 结论\n正文 [[digest/wiki/硅料.md]]\n"
    assert note.body_start_line == 16
    assert NOTE.split("\n")[note.body_start_line - 1] == "# 结论"


def test_no_frontmatter_and_unterminated_block():
    n = parse_note("# Title\ntext\n")
    assert n.meta == {} and n.raw_frontmatter is None and n.body_start_line == 1 and n.body == "# Title\ntext\n"
    n = parse_note("---\nname: x\nno closing fence\n")
    assert n.raw_frontmatter is None and n.body_start_line == 1 and n.body.startswith("---")
    n = parse_note("")
    assert n.meta == {} and n.body == "" and n.body_start_line == 1


def test_empty_block_and_dots_close_and_crlf():
    n = parse_note("---\n---\nbody\n")
    assert n.meta == {} and n.error is None and n.body == "body\n" and n.body_start_line == 3
    n = parse_note("---\nname: a\n...\nbody")
    assert n.name == "a" and n.body == "body" and n.body_start_line == 4
    n = parse_note("---\r\nname: a\r\n---\r\nbody\r\n")
    assert n.name == "a" and n.body == "body\r\n" and n.body_start_line == 4


def test_broken_yaml_still_readable_and_merge_refuses():
    text = "---\nname: [unclosed\ndescription: ok\n---\nbody line\n"
    n = parse_note(text)
    assert n.meta == {} and n.error and "invalid YAML" in n.error
    assert n.body == "body line\n" and n.body_start_line == 5
    with pytest.raises(InvalidInputError) as exc:
        merge_frontmatter(text, {"name": "fixed"})
    assert "\n" not in str(exc.value)


def test_non_mapping_frontmatter_is_an_error():
    n = parse_note("---\n- a\n- b\n---\nbody\n")
    assert n.meta == {} and "expected key: value" in n.error
    with pytest.raises(InvalidInputError):
        merge_frontmatter("---\n- a\n---\nbody\n", {"name": "x"})


def test_merge_keeps_untouched_lines_verbatim():
    out = merge_frontmatter(NOTE, {"description": "新的描述", "confidence": "observed"})
    before = NOTE.split("\n")
    after = out.split("\n")
    # every original line except the description line is still there, in order
    kept = [line for line in before if not line.startswith("description:")]
    it = iter(after)
    assert all(any(line == a for a in it) for line in kept)
    assert "description: 新的描述" in after
    assert after.index("description: 新的描述") == before.index("description: 从硅料到组件的全链条梳理")
    assert "confidence: observed" in after and after.index("confidence: observed") < after.index("---", 1)
    n = parse_note(out)
    assert list(n.meta)[-1] == "confidence"
    assert n.meta["source_conversation"] == "[[session/claude_code/x.jsonl]]"
    assert n.body == parse_note(NOTE).body


def test_merge_delete_and_replace_multiline_value():
    out = merge_frontmatter(NOTE, {"multi": "one line"}, delete=["list", "missing"])
    n = parse_note(out)
    assert n.meta["multi"] == "one line" and "list" not in n.meta
    assert "  line one" not in out and "- a" not in out
    assert "tags: [新能源, 光伏]   # trailing comment" in out
    assert "# leading comment kept" in out


def test_merge_wikilink_value_is_quoted_and_round_trips():
    out = merge_frontmatter(
        "---\nname: n\n---\nbody\n",
        {"source_resource": "[[resource/2026-06-20/r.pdf]]", "sources": ["[[a.md]]", "[[b.md]]"]},
    )
    n = parse_note(out)
    assert n.meta["source_resource"] == "[[resource/2026-06-20/r.pdf]]"
    assert n.meta["sources"] == ["[[a.md]]", "[[b.md]]"]
    assert "\nsource_resource: [[" not in out  # never a bare YAML flow sequence


def test_merge_adds_block_when_missing_and_noop_cases():
    assert merge_frontmatter("body\n", {}) == "body\n"
    out = merge_frontmatter("body\n", {"name": "x", "date": "2026-06-20"})
    assert out == "---\nname: x\ndate: 2026-06-20\n---\nbody\n"
    assert merge_frontmatter(NOTE, {}, delete=["absent"]) == NOTE
    same = merge_frontmatter(NOTE, {"name": "光伏产业链研究"})
    assert same == NOTE  # re-rendering an unchanged plain value gives the same line


def test_merge_unicode_special_strings_round_trip():
    values = {
        "a": "yes",
        "b": "123",
        "c": "null",
        "d": "a: b",
        "e": "#x",
        "f": "日本語・中文",
        "g": "- dash",
        "h": "multi\nline",
        "i": "",
        "j": "'q'",
        "k": 'say "hi"',
    }
    n = parse_note(merge_frontmatter(NOTE, values))
    for k, v in values.items():
        assert n.meta[k] == v


def test_render_note_order_and_empty():
    text = render_note({"name": "x", "description": "d", "z": 1, "a": [1, 2]}, "body\n")
    assert text == "---\nname: x\ndescription: d\nz: 1\na: [1, 2]\n---\nbody\n"
    assert render_note({}, "body") == "body"
    assert parse_note(text).meta == {"name": "x", "description": "d", "z": 1, "a": [1, 2]}


def test_quoted_keys_and_multiline_flow_values_are_preserved():
    text = '---\n"odd key": 1\nflow: [a,\n  b]\nname: x\n---\nbody\n'
    out = merge_frontmatter(text, {"name": "y"})
    assert out == '---\n"odd key": 1\nflow: [a,\n  b]\nname: y\n---\nbody\n'


_scalar = st.one_of(
    st.text(max_size=30), st.integers(), st.booleans(), st.none(), st.lists(st.text(max_size=10), max_size=3)
)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_parse_never_crashes(text):
    n = parse_note(text)
    assert n.body_start_line >= 1
    assert text.endswith(n.body)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12).filter(lambda k: k.strip() == k and k.isprintable()), _scalar, max_size=5
    )
)
def test_merge_property_values_round_trip(updates):
    out = merge_frontmatter(NOTE, updates)
    n = parse_note(out)
    assert n.error is None
    for k, v in updates.items():
        assert n.meta[k] == v
    for k, v in parse_note(NOTE).meta.items():
        if k not in updates:
            assert n.meta[k] == v
    assert n.body == parse_note(NOTE).body


def test_merge_keeps_crlf_files_crlf():
    text = "---\r\nname: a\r\nkeep: 'x'  # c\r\n---\r\nbody\r\n"
    out = merge_frontmatter(text, {"name": "b", "new": [1, 2]})
    assert out == "---\r\nname: b\r\nkeep: 'x'  # c\r\nnew: [1, 2]\r\n---\r\nbody\r\n"
    assert parse_note(out).meta == {"name": "b", "keep": "x", "new": [1, 2]}


def test_merge_unserialisable_value_is_a_clear_error():
    with pytest.raises(InvalidInputError):
        merge_frontmatter(NOTE, {"bad": object()})
    with pytest.raises(InvalidInputError):
        render_note({"bad": 1j}, "body")


def _nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


def test_a_block_the_loader_would_refuse_is_never_written(ctx, ws):
    """Issue 21 item 16: frontmatter_update wrote YAML 40 levels deep; the loader (32 levels) then read the
    note as having no name or description, and every later frontmatter change was refused."""
    from reme_cc.base.errors import ReMeError
    from reme_cc.notes.frontmatter import MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_NODES
    from reme_cc.tools import all_tools

    rel = "digest/wiki/deep.md"
    ws.write_text(rel, "---\nname: deep\ndescription: kept\n---\nbody\n\n## Sources\n\n- [[daily/2026-06-20/x.md]]\n")
    before = ws.read_bytes(rel)
    for bad in (_nested(40), _nested(MAX_FRONTMATTER_DEPTH), list(range(MAX_FRONTMATTER_NODES + 5))):
        with pytest.raises(ReMeError, match="frontmatter"):
            all_tools()["frontmatter_update"].run(ctx, {"path": rel, "updates": {"meta": bad}})
        with pytest.raises(ReMeError, match="frontmatter"):
            all_tools()["write"].run(
                ctx,
                {
                    "path": "digest/wiki/new-deep.md",
                    "content": "x\n\n## Sources\n\n- [[daily/2026-06-20/x.md]]\n",
                    "metadata": {"meta": bad},
                },
            )
        with pytest.raises(InvalidInputError):
            merge_frontmatter("no block yet\n", {"meta": bad})
    assert ws.read_bytes(rel) == before and not ws.exists("digest/wiki/new-deep.md")
    ok = all_tools()["frontmatter_update"].run(
        ctx, {"path": rel, "updates": {"meta": _nested(MAX_FRONTMATTER_DEPTH - 2)}}
    )
    assert ok.name == "deep" and ok.error is None and parse_note(ws.read_bytes(rel).decode()).description == "kept"
