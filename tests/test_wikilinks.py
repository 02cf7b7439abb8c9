"""The one wikilink parser: every form, code exclusion, frontmatter links, rewrite, resolution."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reme_cc.notes.wikilinks import build_stems, parse_links, resolve_target, rewrite_links


def one(text):
    links = parse_links(text)
    assert len(links) == 1, links
    return links[0]


def test_plain_link():
    link = one("see [[daily/2026-06-20/session.md]] here")
    assert (link.target, link.anchor, link.alias, link.embed, link.predicate) == (
        "daily/2026-06-20/session.md",
        None,
        None,
        False,
        None,
    )
    assert link.line == 1
    assert "see [[daily/2026-06-20/session.md]] here"[link.start : link.end] == "[[daily/2026-06-20/session.md]]"


def test_line_anchors_kept_raw():
    for anchor in ("L9", "L9-L10", "L9-L10,L15-L20", "L0", "L10-L9", "L9,"):
        link = one(f"[[notes/example.md#{anchor}]]")
        assert link.target == "notes/example.md" and link.anchor == anchor


def test_heading_anchor_alias_embed():
    link = one("[[钴#应用]]")
    assert link.target == "钴" and link.anchor == "应用"
    link = one("[[宁德时代|宁德]]")
    assert link.target == "宁德时代" and link.alias == "宁德" and link.anchor is None
    link = one("x ![[钴]] y")
    assert link.embed and link.target == "钴" and "x ![[钴]] y"[link.start : link.end] == "![[钴]]"
    link = one("[[a.md#L1|see this]]")
    assert (link.target, link.anchor, link.alias) == ("a.md", "L1", "see this")
    link = one("| [[a.md\\|alias]] | b |")  # Obsidian's escaped pipe inside tables
    assert link.target == "a.md" and link.alias == "alias"


def test_literal_paths_no_md_added_and_whitespace_stripped():
    assert one("[[digest/wiki/光伏]]").target == "digest/wiki/光伏"
    assert one("[[ digest/x.md ]]").target == "digest/x.md"
    assert parse_links("[[#only heading]] [[]] [[ ]]") == []


def test_line_predicates():
    links = parse_links("所属行业:: [[新能源]]\n- related:: [[a.md]], [[b.md]]\n* [ ] todo:: [[c.md]]\n1. n:: [[d.md]]")
    assert [(l.target, l.predicate, l.line) for l in links] == [
        ("新能源", "所属行业", 1),
        ("a.md", "related", 2),
        ("b.md", "related", 2),
        ("c.md", "todo", 3),
        ("d.md", "n", 4),
    ]


def test_inline_predicates_and_plain_links_on_same_line():
    text = "宁德时代 [竞争对手:: [[比亚迪]]] 和 [[特斯拉]] 以及 (上游:: [[锂矿]], [[钴]])"
    links = parse_links(text)
    assert [(l.target, l.predicate) for l in links] == [
        ("比亚迪", "竞争对手"),
        ("特斯拉", None),
        ("锂矿", "上游"),
        ("钴", "上游"),
    ]


def test_link_before_field_marker_has_no_predicate():
    links = parse_links("[[a.md]] is not:: [[b.md]]")
    assert [(l.target, l.predicate) for l in links] == [("a.md", None), ("b.md", None)]


def test_fenced_and_inline_code_are_not_links():
    text = (
        "[[real1]]\n"
        "```md\n[[in fence]]\n```\n"
        "~~~\n[[in tilde]]\n~~~\n"
        "text `[[inline]]` and ``[[double `x` ]]`` and [[real2]]\n"
        "````\n```\n[[nested fence]]\n```\n````\n"
        "unmatched ` tick [[real3]]\n"
        "```\n[[unterminated fence to end]]\n"
    )
    assert [l.target for l in parse_links(text)] == ["real1", "real2", "real3"]
    assert [l.line for l in parse_links(text)] == [1, 8, 14]


def test_inline_code_span_does_not_cross_paragraphs():
    text = "a ` tick\n\nb [[x]] `y`"
    assert [l.target for l in parse_links(text)] == ["x"]


def test_frontmatter_links_carry_key_as_predicate():
    text = (
        '---\nname: n\nsource_conversation: "[[session/claude_code/x.jsonl]]"\n'
        'sources:\n  - "[[daily/a.md]]"\n  - "[[daily/b.md]]"\n---\nbody [[c.md]]\n'
        "```\n---\n```\n"
    )
    links = parse_links(text)
    assert [(l.target, l.predicate, l.line) for l in links] == [
        ("session/claude_code/x.jsonl", "source_conversation", 3),
        ("daily/a.md", "sources", 5),
        ("daily/b.md", "sources", 6),
        ("c.md", None, 8),
    ]


def test_rewrite_preserves_everything_but_target():
    text = (
        "a [[old.md]] b ![[old.md#L9-L10|alias]] c\nrel:: [[old.md]]\n[p:: [[ old.md ]]]\n"
        "`[[old.md]]`\n```\n[[old.md]]\n```\n[[other.md]]\n"
    )
    out, n = rewrite_links(text, lambda t: "new/x.md" if t == "old.md" else None)
    assert n == 4
    assert out == (
        "a [[new/x.md]] b ![[new/x.md#L9-L10|alias]] c\nrel:: [[new/x.md]]\n[p:: [[ new/x.md ]]]\n"
        "`[[old.md]]`\n```\n[[old.md]]\n```\n[[other.md]]\n"
    )
    links = parse_links(out)
    assert links[1].embed and links[1].anchor == "L9-L10" and links[1].alias == "alias"
    assert links[2].predicate == "rel" and links[3].predicate == "p"


def test_rewrite_frontmatter_link():
    text = '---\nsource_conversation: "[[session/a.jsonl]]"\n---\nx\n'
    out, n = rewrite_links(text, lambda t: "session/b.jsonl")
    assert n == 1 and out == '---\nsource_conversation: "[[session/b.jsonl]]"\n---\nx\n'


def test_resolve_exact_stem_ambiguous_missing():
    paths = [
        "digest/wiki/光伏产业链.md",
        "digest/wiki/钴.md",
        "daily/钴.md",
        "resource/r.pdf",
        "digest/wiki/宁德时代.md",
    ]
    stems = build_stems(paths)
    r = resolve_target("digest/wiki/钴.md", paths, stems)
    assert (r.path, r.how) == ("digest/wiki/钴.md", "exact")
    r = resolve_target("光伏产业链", paths, stems)
    assert (r.path, r.how) == ("digest/wiki/光伏产业链.md", "stem")
    r = resolve_target("光伏产业链.md", paths, stems)
    assert (r.path, r.how) == ("digest/wiki/光伏产业链.md", "stem")
    r = resolve_target("r.pdf", paths, stems)
    assert (r.path, r.how) == ("resource/r.pdf", "stem")
    r = resolve_target("钴", paths, stems)
    assert (r.path, r.how) == (None, "ambiguous")
    r = resolve_target("wiki/钴", paths, stems)  # a folder part narrows it down
    assert (r.path, r.how) == ("digest/wiki/钴.md", "stem")
    r = resolve_target("nope", paths, stems)
    assert (r.path, r.how) == (None, "missing")
    r = resolve_target("/digest/wiki/钴.md", paths, stems)
    assert (r.path, r.how) == ("digest/wiki/钴.md", "exact")
    r = resolve_target("其他/钴", paths, stems)
    assert (r.path, r.how) == (None, "missing")


def test_resolve_case_insensitive_stem():
    paths = ["digest/wiki/Cobalt.md"]
    r = resolve_target("cobalt", paths, build_stems(paths))
    assert (r.path, r.how) == ("digest/wiki/Cobalt.md", "stem")


_md_alphabet = st.sampled_from(list("ab[]]|#!`~:- \n中x.") + ["[[", "]]", "```", "::", "\n\n"])
_md_text = st.lists(_md_alphabet, max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), _md_text))
def test_parser_never_crashes_and_offsets_match(text):
    for link in parse_links(text):
        frag = text[link.start : link.end]
        assert frag.startswith("!" if link.embed else "[[") and frag.endswith("]]")
        assert link.target and link.target in frag
        assert link.line == text.count("\n", 0, link.start) + 1


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), _md_text))
def test_rewrite_identity_is_noop(text):
    assert rewrite_links(text, lambda t: t) == (text, 0)
    assert rewrite_links(text, lambda t: None) == (text, 0)


@settings(max_examples=200, deadline=None)
@given(_md_text)
def test_rewrite_round_trip(text):
    out, n = rewrite_links(
        text, lambda t: "zz/" + t.replace("[", "").replace("]", "").replace("|", "").replace("#", "") + "Q"
    )
    assert len(parse_links(out)) == len(parse_links(text))
    for old, new in zip(parse_links(text), parse_links(out)):
        assert (old.anchor, old.alias, old.embed, old.predicate, old.line) == (
            new.anchor,
            new.alias,
            new.embed,
            new.predicate,
            new.line,
        )
    assert n == len(parse_links(text))


def test_rewrite_refuses_bad_target():
    import pytest

    from reme_cc.base.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        rewrite_links("[[a.md]]", lambda t: "b]]c")


def test_resolve_tie_breaks():
    paths = ["a/x.md", "b/x.md.bak", "c/x.pdf", "d/y.md", "e/y.md"]
    stems = build_stems(paths)
    assert resolve_target("x.md", paths, stems).path == "a/x.md"  # full name beats stem of x.md.bak
    assert resolve_target("x", paths, stems).path == "a/x.md"  # the one Markdown note beats x.pdf
    assert resolve_target("x.pdf", paths, stems).path == "c/x.pdf"
    assert resolve_target("y", paths, stems).how == "ambiguous"
