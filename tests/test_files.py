"""File tools with real files: read, write, edit, move, delete, list, stat, frontmatter, read_image."""

from __future__ import annotations

import base64
import os
import time

import pytest

from reme_cc.base.errors import ConflictError, EvidenceError, InvalidInputError, NotFoundError, PathError, ReMeError
from reme_cc.notes.frontmatter import parse_note
from reme_cc.tools import all_tools
from support.files_helpers import DIGEST, put, run

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 20


@pytest.fixture
def changed(ctx, monkeypatch):
    """Record ctx.changed calls (still calling the real index)."""
    calls: list[str] = []
    real = ctx.changed

    def record(*paths):
        calls.extend(paths)
        real(*paths)

    monkeypatch.setattr(ctx, "changed", record)
    return calls


def test_registry_annotations():
    tools = all_tools()
    for name in (
        "read",
        "write",
        "edit",
        "move",
        "delete",
        "list",
        "stat",
        "frontmatter_read",
        "frontmatter_update",
        "frontmatter_delete",
        "read_image",
    ):
        assert name in tools
    assert tools["read"].read_only and tools["list"].read_only and tools["stat"].read_only
    assert not tools["write"].read_only and tools["delete"].destructive and tools["move"].destructive
    assert tools["move"].positional == ("src", "dst")
    for t in tools.values():  # ToolSearch finds tools by their descriptions: every field explained
        for name, field in t.params.model_fields.items():
            assert field.description, f"{t.name}.{name} has no description"


# ---- read ---------------------------------------------------------------------------------------------
def test_read_with_line_numbers_and_range(ctx, ws):
    put(ws, "daily/2026-06-20/a.md", "".join(f"line {i}\n" for i in range(1, 21)))
    res = run(ctx, "read", path="daily/2026-06-20/a.md", start_line=3, end_line=5)
    assert res.content == "line 3\nline 4\nline 5"
    assert (res.start_line, res.end_line, res.total_lines) == (3, 5, 20)
    assert res.text().splitlines() == ["3\tline 3", "4\tline 4", "5\tline 5"]
    full = run(ctx, "read", path="daily/2026-06-20/a.md")
    assert full.end_line == 20 and full.content.count("\n") == 19


def test_read_range_errors_and_clamp(ctx, ws):
    put(ws, "daily/x.md", "a\nb\nc")
    with pytest.raises(InvalidInputError, match="past the end"):
        run(ctx, "read", path="daily/x.md", start_line=9)
    with pytest.raises(InvalidInputError, match="before start_line"):
        run(ctx, "read", path="daily/x.md", start_line=3, end_line=2)
    with pytest.raises(InvalidInputError, match="start_line"):
        run(ctx, "read", path="daily/x.md", start_line=0)
    res = run(ctx, "read", path="daily/x.md", start_line=2, end_line=99)
    assert res.content == "b\nc" and "has 3 lines" in res.text()


def test_read_empty_file(ctx, ws):
    put(ws, "daily/empty.md", "")
    res = run(ctx, "read", path="daily/empty.md")
    assert res.content == "" and res.total_lines == 0 and "empty" in res.text()


def test_read_crlf(ctx, ws):
    put(ws, "daily/crlf.md", b"one\r\ntwo\r\n")
    assert run(ctx, "read", path="daily/crlf.md").content == "one\ntwo"


def test_read_binary_refused(ctx, ws):
    put(ws, "resource/blob.bin", b"abc\x00def" * 100)
    with pytest.raises(InvalidInputError, match="binary"):
        run(ctx, "read", path="resource/blob.bin")
    put(ws, "resource/pic.png", PNG)
    with pytest.raises(InvalidInputError, match="read_image"):
        run(ctx, "read", path="resource/pic.png")


def test_read_invalid_utf8_replaced_with_note(ctx, ws):
    put(ws, "daily/bad.md", b"ok line\n" + b"caf\xe9 au lait\n")
    res = run(ctx, "read", path="daily/bad.md")
    assert "caf\ufffd au lait" in res.content
    assert any("not valid UTF-8" in n for n in res.notes)


def test_read_malformed_frontmatter_is_best_effort(ctx, ws):
    put(ws, "daily/broken.md", "---\nname: [unclosed\n---\nbody\n")
    res = run(ctx, "read", path="daily/broken.md")
    assert "body" in res.content and any("not valid YAML" in n for n in res.notes)


def test_read_huge_file_is_paged(ctx, ws):
    line = "x" * 99 + "\n"
    path = ws.root / "resource" / "big.txt"
    with open(path, "w") as fh:  # 50 MB
        for _ in range(50):
            fh.write(line * 10_000)
    assert path.stat().st_size >= 50_000_000
    res = run(ctx, "read", path="resource/big.txt")
    assert res.truncated and res.total_lines == 500_000
    assert len(res.content) <= 300_000
    assert f"start_line={res.end_line + 1}" in res.text()
    nxt = run(ctx, "read", path="resource/big.txt", start_line=res.end_line + 1, end_line=res.end_line + 2)
    assert nxt.content == "x" * 99 + "\n" + "x" * 99


def test_read_very_long_line_cut(ctx, ws):
    put(ws, "resource/min.json", "{" + "a" * 200_000 + "}\nsecond\n")
    res = run(ctx, "read", path="resource/min.json")
    assert res.content.endswith("second") and "[line cut]" in res.content


def test_read_missing_and_folder(ctx):
    with pytest.raises(NotFoundError):
        run(ctx, "read", path="daily/nope.md")
    with pytest.raises(InvalidInputError, match="folder"):
        run(ctx, "read", path="daily")


# ---- write --------------------------------------------------------------------------------------------
def test_write_creates_with_frontmatter(ctx, ws, changed):
    res = run(
        ctx,
        "write",
        path="daily/2026-06-20/a.md",
        content="# Title\n\nBody.\n",
        name="A",
        description="about a",
        metadata={"tags": ["x", "y"], "session_id": "s1"},
    )
    assert res.created and changed == ["daily/2026-06-20/a.md"]
    note = parse_note((ws.root / "daily/2026-06-20/a.md").read_text())
    assert note.meta == {"tags": ["x", "y"], "session_id": "s1", "name": "A", "description": "about a"}
    assert note.body == "# Title\n\nBody.\n"


def test_write_overwrite_keeps_extra_keys_verbatim(ctx, ws):
    put(ws, "daily/a.md", "---\nname: Old\nsession_id: 'abc'   # keep me\ncustom: [1, 2]\n---\nold body\n")
    res = run(ctx, "write", path="daily/a.md", content="new body\n", name="New")
    assert not res.created
    text = (ws.root / "daily/a.md").read_text()
    assert "session_id: 'abc'   # keep me\n" in text and "custom: [1, 2]\n" in text
    note = parse_note(text)
    assert note.name == "New" and note.body == "new body\n" and list(note.meta) == ["name", "session_id", "custom"]


def test_write_content_with_own_frontmatter(ctx, ws):
    run(ctx, "write", path="daily/b.md", content="---\nname: FromContent\nk: v\n---\nbody\n", description="d")
    note = parse_note((ws.root / "daily/b.md").read_text())
    assert note.meta == {"name": "FromContent", "k": "v", "description": "d"} and note.body == "body\n"


def test_write_plain_without_meta(ctx, ws):
    run(ctx, "write", path="daily/plain.md", content="just text\n")
    assert (ws.root / "daily/plain.md").read_text() == "just text\n"


def test_write_refusals(ctx, ws):
    with pytest.raises(InvalidInputError, match=".md"):
        run(ctx, "write", path="daily/a.txt", content="x")
    with pytest.raises(PathError):
        run(ctx, "write", path="../a.md", content="x")
    with pytest.raises(PathError, match="metadata"):
        run(ctx, "write", path="metadata/x.md", content="x")
    with pytest.raises(InvalidInputError, match="not valid YAML"):
        run(ctx, "write", path="daily/c.md", content="---\nname: [x\n---\nbody")
    put(ws, "daily/broken.md", "---\nname: [x\nsecret: keep\n---\nbody\n")
    with pytest.raises(InvalidInputError, match="broken frontmatter"):
        run(ctx, "write", path="daily/broken.md", content="new")
    assert (ws.root / "daily/broken.md").read_text() == "---\nname: [x\nsecret: keep\n---\nbody\n"
    assert not (ws.root / "daily/a.txt").exists() and not (ws.root / "daily/c.md").exists()
    with pytest.raises(InvalidInputError, match="metadata"):
        run(ctx, "write", path="daily/d.md", content="x", metadata="not a dict")


# ---- edit ---------------------------------------------------------------------------------------------
def test_edit_once_missing_many(ctx, ws, changed):
    put(ws, "daily/e.md", "alpha beta\nbeta gamma\n")
    with pytest.raises(ConflictError, match="2 times.*lines 1, 2"):
        run(ctx, "edit", path="daily/e.md", old_text="beta", new_text="B")
    with pytest.raises(InvalidInputError, match="not found"):
        run(ctx, "edit", path="daily/e.md", old_text="delta", new_text="D")
    assert changed == []
    assert run(ctx, "edit", path="daily/e.md", old_text="alpha", new_text="A").replacements == 1
    assert run(ctx, "edit", path="daily/e.md", old_text="beta", new_text="B", replace_all=True).replacements == 2
    assert (ws.root / "daily/e.md").read_text() == "A B\nB gamma\n"
    assert changed == ["daily/e.md", "daily/e.md"]


def test_edit_crlf_file_with_lf_text(ctx, ws):
    put(ws, "daily/c.md", b"one\r\ntwo\r\nthree\r\n")
    run(ctx, "edit", path="daily/c.md", old_text="one\ntwo", new_text="1\n2")
    assert (ws.root / "daily/c.md").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_refuses_invalid_utf8_and_binary(ctx, ws):
    put(ws, "daily/bad.md", b"caf\xe9\n")
    with pytest.raises(InvalidInputError, match="UTF-8"):
        run(ctx, "edit", path="daily/bad.md", old_text="caf", new_text="x")
    assert (ws.root / "daily/bad.md").read_bytes() == b"caf\xe9\n"
    put(ws, "resource/b.bin", b"\x00\x01")
    with pytest.raises(InvalidInputError, match="binary"):
        run(ctx, "edit", path="resource/b.bin", old_text="a", new_text="b")
    with pytest.raises(InvalidInputError, match="empty"):
        run(ctx, "edit", path="daily/bad.md", old_text="", new_text="b")


# ---- evidence protection ------------------------------------------------------------------------------
def test_digest_write_needs_sources(ctx, ws):
    with pytest.raises(EvidenceError, match="Sources"):
        run(ctx, "write", path="digest/wiki/x.md", content="no sources here [[digest/wiki/y.md]]\n")
    with pytest.raises(EvidenceError, match="Sources"):  # Sources that only link digest nodes do not count
        run(ctx, "write", path="digest/wiki/x.md", content="## Sources\n- [[digest/wiki/y.md]]\n")
    with pytest.raises(EvidenceError):  # a link inside a code fence is not a link
        run(ctx, "write", path="digest/wiki/x.md", content="## Sources\n```\n[[daily/2026-06-20/a.md]]\n```\n")
    assert not (ws.root / "digest/wiki/x.md").exists()
    run(ctx, "write", path="digest/wiki/x.md", content="## Sources\n- [[resource/2026-06-20/r.pdf]]\n")


def test_digest_update_cannot_drop_links(ctx, ws):
    put(ws, "digest/personal/style.md", DIGEST)
    with pytest.raises(EvidenceError, match=r"\[\[daily/2026-06-20/style.md\]\]"):
        run(ctx, "edit", path="digest/personal/style.md", old_text="- [[daily/2026-06-20/style.md#L3]]\n", new_text="")
    with pytest.raises(EvidenceError, match="write-docs"):
        run(
            ctx,
            "write",
            path="digest/personal/style.md",
            content="Rewritten.\n\n## Sources\n- [[daily/2026-06-20/style.md]]\n",
        )
    assert (ws.root / "digest/personal/style.md").read_text() == DIGEST
    # adding evidence, or changing an anchor, is fine
    run(
        ctx,
        "edit",
        path="digest/personal/style.md",
        old_text="style.md#L3]]",
        new_text="style.md#L3-L5]]\n- [[daily/2026-06-21/more.md]]",
    )
    run(
        ctx,
        "write",
        path="digest/personal/style.md",
        content="New wording, see [[digest/procedure/write-docs.md]].\n\n## Sources\n"
        "- [[daily/2026-06-20/style.md]]\n- [[daily/2026-06-21/more.md]]\n",
    )


def test_digest_frontmatter_link_protected(ctx, ws):
    put(
        ws,
        "digest/wiki/n.md",
        '---\nsource_conversation: "[[session/dialog/abc.jsonl]]"\n---\n## Sources\n- [[daily/2026-06-20/a.md]]\n',
    )
    with pytest.raises(EvidenceError, match="session/dialog/abc.jsonl"):
        run(ctx, "frontmatter_delete", path="digest/wiki/n.md", keys=["source_conversation"])
    run(ctx, "frontmatter_update", path="digest/wiki/n.md", updates={"confidence": "high"})


def test_evidence_rule_is_callable():
    from reme_cc.notes.evidence import check_digest_evidence

    check_digest_evidence("daily/x.md", "[[a.md]]", "", full_write=True)  # not digest: unchecked
    with pytest.raises(EvidenceError):
        check_digest_evidence("digest/wiki/x.md", "[[digest/wiki/y.md]]", "gone", full_write=False)


# ---- move ---------------------------------------------------------------------------------------------
def _linking_notes(ws):
    put(ws, "digest/wiki/pv.md", "---\nname: PV\n---\n## Sources\n- [[daily/2026-06-20/pv.md]]\n")
    put(ws, "daily/2026-06-20/pv.md", "card\n")
    put(
        ws,
        "digest/wiki/deep/nested/other.md",
        "See [[digest/wiki/pv.md#Heading|光伏]] and ![[digest/wiki/pv.md]].\n"
        "- related:: [[digest/wiki/pv.md#L9-L10,L15-L20]]\n[rel:: [[digest/wiki/pv.md]]]\n"
        "`[[digest/wiki/pv.md]]` stays (code)\n[[digest/wiki/pv.mdx]] is another file\n",
    )
    put(ws, "daily/2026-06-21.md", "index [[digest/wiki/pv.md]]\n")


def test_move_file_rewrites_inbound_links(ctx, ws, changed):
    _linking_notes(ws)
    res = run(ctx, "move", src="digest/wiki/pv.md", dst="digest/wiki/energy/光伏.md")
    assert not (ws.root / "digest/wiki/pv.md").exists() and (ws.root / "digest/wiki/energy/光伏.md").exists()
    assert res.changed_files == ["daily/2026-06-21.md", "digest/wiki/deep/nested/other.md"]
    assert res.links_rewritten == 5
    other = (ws.root / "digest/wiki/deep/nested/other.md").read_text()
    assert other == (
        "See [[digest/wiki/energy/光伏.md#Heading|光伏]] and ![[digest/wiki/energy/光伏.md]].\n"
        "- related:: [[digest/wiki/energy/光伏.md#L9-L10,L15-L20]]\n[rel:: [[digest/wiki/energy/光伏.md]]]\n"
        "`[[digest/wiki/pv.md]]` stays (code)\n[[digest/wiki/pv.mdx]] is another file\n"
    )
    assert set(changed) >= {"digest/wiki/pv.md", "digest/wiki/energy/光伏.md", "daily/2026-06-21.md"}


def test_move_folder_rewrites_links_into_it(ctx, ws):
    put(ws, "digest/wiki/energy/a.md", "to b: [[digest/wiki/energy/sub/b.md]]\n")
    put(ws, "digest/wiki/energy/sub/b.md", "to a: [[digest/wiki/energy/a.md#L1|A]]\n")
    put(ws, "daily/2026-06-20/c.md", "[[digest/wiki/energy/sub/b.md]] [[digest/wiki/energyx.md]]\n")
    res = run(ctx, "move", src="digest/wiki/energy", dst="digest/wiki/renewables")
    assert res.moved_files == 2
    assert (ws.root / "digest/wiki/renewables/a.md").read_text() == "to b: [[digest/wiki/renewables/sub/b.md]]\n"
    assert (ws.root / "digest/wiki/renewables/sub/b.md").read_text() == "to a: [[digest/wiki/renewables/a.md#L1|A]]\n"
    assert (
        ws.root / "daily/2026-06-20/c.md"
    ).read_text() == "[[digest/wiki/renewables/sub/b.md]] [[digest/wiki/energyx.md]]\n"


def test_move_short_form_link(ctx, ws):
    put(ws, "digest/wiki/光伏产业链.md", "x\n")
    put(ws, "daily/2026-06-20/a.md", "see [[光伏产业链]]\n")
    run(ctx, "move", src="digest/wiki/光伏产业链.md", dst="digest/wiki/pv-chain.md")
    assert (ws.root / "daily/2026-06-20/a.md").read_text() == "see [[digest/wiki/pv-chain.md]]\n"


def test_move_without_rewrite_and_conflicts(ctx, ws):
    _linking_notes(ws)
    with pytest.raises(ConflictError, match="overwrite"):
        run(ctx, "move", src="digest/wiki/pv.md", dst="daily/2026-06-20/pv.md")
    with pytest.raises(NotFoundError):
        run(ctx, "move", src="digest/wiki/none.md", dst="digest/wiki/n2.md")
    with pytest.raises(InvalidInputError, match="into itself"):
        run(ctx, "move", src="digest/wiki/deep", dst="digest/wiki/deep/more")
    with pytest.raises(PathError, match="layer"):
        run(ctx, "move", src="daily", dst="days")
    with pytest.raises(PathError):
        run(ctx, "move", src="digest/wiki/pv.md", dst="../pv.md")
    res = run(ctx, "move", src="digest/wiki/pv.md", dst="digest/wiki/pv2.md", rewrite_links=False)
    assert res.changed_files == [] and "[[digest/wiki/pv.md]]" in (ws.root / "daily/2026-06-21.md").read_text()
    put(ws, "digest/wiki/tmp.md", "tmp\n")
    run(ctx, "move", src="digest/wiki/tmp.md", dst="digest/wiki/pv2.md", overwrite=True)
    assert (ws.root / "digest/wiki/pv2.md").read_text() == "tmp\n"


def test_move_keeps_invalid_utf8_bytes(ctx, ws):
    put(ws, "digest/wiki/t.md", "x")
    put(ws, "daily/bad.md", b"caf\xe9 [[digest/wiki/t.md]]\n")
    run(ctx, "move", src="digest/wiki/t.md", dst="digest/wiki/u.md")
    assert (ws.root / "daily/bad.md").read_bytes() == b"caf\xe9 [[digest/wiki/u.md]]\n"


# ---- delete -------------------------------------------------------------------------------------------
def test_delete_file_reports_inbound(ctx, ws, changed):
    _linking_notes(ws)
    res = run(ctx, "delete", path="digest/wiki/pv.md")
    assert not (ws.root / "digest/wiki/pv.md").exists()
    sources = sorted({(link.source, link.line) for link in res.inbound_links})
    assert sources == [
        ("daily/2026-06-21.md", 1),
        ("digest/wiki/deep/nested/other.md", 1),
        ("digest/wiki/deep/nested/other.md", 2),
        ("digest/wiki/deep/nested/other.md", 3),
    ]
    assert "dangling" in res.text() and "digest/wiki/pv.md" in changed


def test_delete_folder(ctx, ws):
    put(ws, "digest/wiki/energy/a.md", "[[digest/wiki/energy/b.md]]")
    put(ws, "digest/wiki/energy/b.md", "b")
    put(ws, "daily/2026-06-20/c.md", "[[digest/wiki/energy/b.md#L1]]\n")
    with pytest.raises(ConflictError, match="recursive"):
        run(ctx, "delete", path="digest/wiki/energy")
    res = run(ctx, "delete", path="digest/wiki/energy", recursive=True)
    assert not (ws.root / "digest/wiki/energy").exists() and len(res.deleted_files) == 2
    assert [(x.source, x.target) for x in res.inbound_links] == [("daily/2026-06-20/c.md", "digest/wiki/energy/b.md")]
    with pytest.raises(NotFoundError):
        run(ctx, "delete", path="digest/wiki/energy")
    with pytest.raises(PathError, match="layer"):
        run(ctx, "delete", path="digest/wiki", recursive=True)
    (ws.root / "digest/wiki/empty").mkdir()
    run(ctx, "delete", path="digest/wiki/empty")


# ---- list / stat --------------------------------------------------------------------------------------
def test_list_options(ctx, ws):
    put(ws, "daily/2026-06-20/b.md", "---\nname: B\ndescription: bee\n---\nx")
    put(ws, "daily/2026-06-20/a.md", "a")
    put(ws, "daily/2026-06-20/interests.yaml", "x: 1")
    put(ws, "daily/2026-06-20/.hidden.md", "h")
    old = time.time() - 100
    os.utime(ws.root / "daily/2026-06-20/b.md", (old, old))
    res = run(ctx, "list", path="daily/2026-06-20")
    assert [e.path for e in res.entries] == [
        "daily/2026-06-20/a.md",
        "daily/2026-06-20/b.md",
        "daily/2026-06-20/interests.yaml",
    ]
    assert res.entries[1].name == "B" and res.entries[1].description == "bee" and "B: bee" in res.text()
    assert [e.path for e in run(ctx, "list", path="daily/2026-06-20", sort="mtime").entries][
        -1
    ] == "daily/2026-06-20/b.md"
    assert [e.path for e in run(ctx, "list", path="daily", recursive=True, ext=["yaml"]).entries] == [
        "daily/2026-06-20/interests.yaml"
    ]
    lim = run(ctx, "list", path="daily", recursive=True, limit=2)
    assert len(lim.entries) == 2 and lim.total == 4 and "more" in lim.text()
    root = run(ctx, "list", recursive=True, ext=["md"])
    assert all(not e.path.startswith("metadata/") for e in root.entries)
    with pytest.raises(NotFoundError):
        run(ctx, "list", path="daily/none")
    with pytest.raises(InvalidInputError, match="sort"):
        run(ctx, "list", sort="size")


def test_stat(ctx, ws):
    put(ws, "daily/s.md", "---\nname: S\ndescription: ess\n---\nl1\nl2\n")
    st = run(ctx, "stat", path="daily/s.md")
    assert (st.type, st.lines, st.name, st.description, st.binary) == ("file", 6, "S", "ess", False)
    assert st.mime_type == "text/markdown"
    put(ws, "resource/p.png", PNG)
    assert run(ctx, "stat", path="resource/p.png").mime_type == "image/png"
    assert run(ctx, "stat", path="daily").type == "dir"
    put(ws, "daily/broken.md", "---\na: [\n---\n")
    assert run(ctx, "stat", path="daily/broken.md").frontmatter_error


# ---- frontmatter --------------------------------------------------------------------------------------
def test_frontmatter_read_update_delete(ctx, ws):
    put(ws, "daily/f.md", "---\n# comment\nname: F\ndate: 2026-06-20\ntags: [a]\n---\nbody\n")
    fm = run(ctx, "frontmatter_read", path="daily/f.md")
    assert fm.meta == {"name": "F", "date": "2026-06-20", "tags": ["a"]} and fm.name == "F"
    run(ctx, "frontmatter_update", path="daily/f.md", updates={"description": "new", "tags": ["a", "b"]})
    text = (ws.root / "daily/f.md").read_text()
    assert text.startswith("---\n# comment\nname: F\ndate: 2026-06-20\n") and text.endswith("---\nbody\n")
    assert parse_note(text).meta["tags"] == ["a", "b"] and parse_note(text).description == "new"
    res = run(ctx, "frontmatter_delete", path="daily/f.md", keys=["tags", "missing"])
    assert "tags" not in res.meta and "name" in res.meta


def test_frontmatter_broken(ctx, ws):
    raw = "---\nname: [oops\n---\nbody\n"
    put(ws, "daily/b.md", raw)
    fm = run(ctx, "frontmatter_read", path="daily/b.md")
    assert fm.error and fm.meta == {} and "[oops" in fm.text()
    with pytest.raises(InvalidInputError):
        run(ctx, "frontmatter_update", path="daily/b.md", updates={"a": 1})
    assert (ws.root / "daily/b.md").read_text() == raw
    with pytest.raises(InvalidInputError, match="empty"):
        run(ctx, "frontmatter_update", path="daily/b.md", updates={})
    with pytest.raises(InvalidInputError, match="empty"):
        run(ctx, "frontmatter_delete", path="daily/b.md", keys=[])


def test_frontmatter_added_when_missing(ctx, ws):
    put(ws, "daily/n.md", "no fm\n")
    run(ctx, "frontmatter_update", path="daily/n.md", updates={"name": "N"})
    note = parse_note((ws.root / "daily/n.md").read_text())
    assert note.meta == {"name": "N"} and note.body == "no fm\n"


# ---- read_image ---------------------------------------------------------------------------------------
def test_read_image(ctx, ws):
    put(ws, "resource/p.png", PNG)
    res = run(ctx, "read_image", path="resource/p.png")
    assert res.mime_type == "image/png" and base64.b64decode(res.data) == PNG
    put(ws, "resource/fake.png", "not an image")
    with pytest.raises(InvalidInputError, match="not a PNG"):
        run(ctx, "read_image", path="resource/fake.png")
    with pytest.raises(InvalidInputError, match="limit"):
        run(ctx, "read_image", path="resource/p.png", max_bytes=10)


def _linked_pair(ws, ctx):
    run(
        ctx,
        "write",
        path="digest/wiki/a.md",
        name="a",
        content="see [[digest/wiki/b.md#L2|bee]]\n\n## Sources\n- [[daily/2026-06-20/x.md]]\n",
    )
    run(ctx, "write", path="digest/wiki/b.md", name="b", content="b\n\n## Sources\n- [[daily/2026-06-20/x.md]]\n")


def test_failed_rename_restores_the_links(ws, ctx, monkeypatch):
    _linked_pair(ws, ctx)
    before = (ws.root / "digest/wiki/a.md").read_text()

    def refuse(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("reme_cc.notes.store.os.replace", refuse)
    with pytest.raises(ReMeError, match="nothing was changed"):
        run(ctx, "move", src="digest/wiki/b.md", dst="digest/wiki/c.md")
    assert (ws.root / "digest/wiki/a.md").read_text() == before
    assert (ws.root / "digest/wiki/b.md").exists() and not (ws.root / "digest/wiki/c.md").exists()


def test_move_killed_before_the_rename_completes_when_run_again(ws, ctx, monkeypatch):
    _linked_pair(ws, ctx)
    real_replace = os.replace

    def killed(*_a, **_k):
        raise SystemExit("killed")  # not an OSError: nothing is rolled back, as after kill -9

    monkeypatch.setattr("reme_cc.notes.store.os.replace", killed)
    with pytest.raises(SystemExit):
        run(ctx, "move", src="digest/wiki/b.md", dst="digest/wiki/c.md")
    monkeypatch.setattr("reme_cc.notes.store.os.replace", real_replace)
    run(ctx, "move", src="digest/wiki/b.md", dst="digest/wiki/c.md")  # the retry
    assert "[[digest/wiki/c.md#L2|bee]]" in (ws.root / "digest/wiki/a.md").read_text()
    assert (ws.root / "digest/wiki/c.md").exists() and not (ws.root / "digest/wiki/b.md").exists()
