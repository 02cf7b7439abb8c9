"""PDF and Word resources, end to end on real files made here: extraction (pypdfium2, python-docx)
in a bounded child process, the content-hash cache, page-aware chunks found by search, `read` of
pages, redaction, and every hostile file listed with its reason instead of hanging or crashing."""

from __future__ import annotations

import asyncio
import json

import pytest

from support import documents as make

from reme_cc.memory import resource
from reme_cc.notes import documents
from reme_cc.notes.frontmatter import parse_note
from reme_cc.tools import all_tools


def call(ctx, name, **params):
    t = all_tools()[name]
    return t.fn(ctx, t.params(**params))


def test_pdf_pages_chinese_and_tables_are_extracted_and_cached(ctx):
    ws = ctx.workspace
    pdf = make.report_pdf(ws.root / "resource/2026-06-20/catl-report.pdf", pages=4)
    data = pdf.read_bytes()
    ex = documents.extract(ws.metadata, "resource/2026-06-20/catl-report.pdf", data)
    assert ex.error is None and ex.pages == 4
    at = documents.page_lines(ex.text)
    assert sorted(at) == [1, 2, 3, 4]
    page2 = ex.text.split("\n")[at[2] - 1 : at[3] - 1]
    joined = "\n".join(page2)
    assert "第2章 钠离子电池量产进度 sodium-ion ramp" in joined  # Chinese and English, exact
    assert "出货量 GWh 321 402" in joined and "毛利率 margin 22.4% 24.1%" in joined  # the table's cells
    cached = list((ws.metadata / documents.CACHE_DIR).glob("*.json"))
    assert len(cached) == 1 and cached[0].stem == __import__("hashlib").sha256(data).hexdigest()

    def no_child(*a, **k):
        raise AssertionError("an unchanged file must never be extracted again")

    import reme_cc.notes.documents as mod

    orig, mod._run_child = mod._run_child, no_child
    try:
        assert documents.extract(ws.metadata, "resource/other-name.pdf", data).text == ex.text
    finally:
        mod._run_child = orig


def test_the_extraction_cache_follows_the_documents(ctx):
    """Each version of a document leaves an extraction in metadata/extract/; once the file changes or
    goes, its old entries are pruned (after a grace period for a process that just extracted)."""
    import os
    import time

    ws, cache = ctx.workspace, ctx.workspace.metadata / documents.CACHE_DIR
    pdf = make.report_pdf(ws.root / "resource/r.pdf", pages=1)
    ctx.index.sync()
    first = {p.stem for p in cache.glob("*.json")}
    make.report_pdf(pdf, pages=2)  # a new version
    ctx.index.sync()
    assert len(list(cache.glob("*.json"))) == 2  # the old one is too young to go
    aged = time.time() - 3600
    for p in cache.glob("*.json"):
        os.utime(p, (aged, aged))
    pdf.write_bytes(make.report_pdf(ws.root / "resource/tmp.pdf", pages=3).read_bytes())
    (ws.root / "resource/tmp.pdf").unlink()
    ctx.index.sync()
    left = {p.stem for p in cache.glob("*.json")}
    assert not left & first and len(left) == 1  # only the current version's
    assert "第" in call(ctx, "read", path="resource/r.pdf").content
    pdf.unlink()
    for p in cache.glob("*.json"):
        os.utime(p, (aged, aged))
    ctx.index.sync()
    assert not list(cache.glob("*.json"))


def test_search_finds_a_pdf_passage_with_its_page_and_read_follows_it(ctx):
    ws = ctx.workspace
    rel = "resource/2026-06-20/catl-report.pdf"
    make.report_pdf(ws.root / rel, pages=5)
    ctx.index.sync()
    hits = ctx.index.search("钠离子电池量产进度", limit=3).results
    top = hits[0]
    assert top.path == rel and top.text.startswith("## Page 2\n") and "sodium-ion ramp" in top.text
    # the hit's lines are lines of the text view that `read` shows
    shown = call(ctx, "read", path=rel, start_line=top.start_line, end_line=top.end_line)
    assert "钠离子电池量产进度" in shown.content and shown.start_line == top.start_line
    page = call(ctx, "read", path=rel, pages="2")
    assert page.content.startswith("## Page 2") and "第2章" in page.content and "第3章" not in page.content
    assert "(5 pages)" in page.text()
    both = call(ctx, "read", path=rel, pages="4-5").content
    assert "第4章" in both and "第5章" in both and "第3章" not in both
    with pytest.raises(Exception, match="has pages 1-5"):
        call(ctx, "read", path=rel, pages="9")


def test_docx_headings_lists_and_tables_become_markdown_chunks(ctx):
    ws = ctx.workspace
    rel = "resource/2026-06-20/solar.docx"
    make.report_docx(ws.root / rel)
    view = call(ctx, "read", path=rel).content
    assert view.startswith("# 光伏产业链研究 Solar supply chain\n")
    assert "## 硅料 Polysilicon" in view and "- TOPCon 组件效率 22.8%" in view
    assert "| 组件\\|Modules | 12% |" in view  # a | inside a cell cannot break the table
    assert "\\# not a heading" in view  # a paragraph's own '#' does not become a heading
    ctx.index.sync()
    top = ctx.index.search("多晶硅价格", limit=1).results[0]
    assert top.path == rel and "## 硅料 Polysilicon" in top.text and "60 元/公斤" in top.text


def test_secrets_in_a_pdf_never_reach_the_index_read_or_the_agent(ctx):
    ws = ctx.workspace
    rel = "resource/2026-06-20/keys.pdf"
    make.report_pdf(ws.root / rel, pages=2, secret_on=2)
    ctx.index.sync()
    rows = ctx.index.db.conn.execute("SELECT text FROM chunks WHERE path=?", (rel,)).fetchall()
    assert rows and not any(make.SECRET[:30] in r[0] for r in rows)
    assert any("[REDACTED" in r[0] for r in rows)
    assert make.SECRET[:30] not in call(ctx, "read", path=rel).content
    seen = []

    async def fake(ctx_, res, text):
        seen.append(resource.resource_prompt(ctx_, res, text))
        return "---\nname: Keys report\n---\n# Keys report\n\nA report.\n", 1

    asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert seen and make.SECRET[:30] not in seen[0] and "第2章" in seen[0]


@pytest.mark.parametrize(
    "maker,reason",
    [
        (lambda p: make.image_only_pdf(p.with_suffix(".pdf")), "no text layer"),
        (lambda p: make.report_pdf(p.with_suffix(".pdf"), pages=2, encrypt="secret"), "encrypted"),
        (
            lambda p: (
                p.with_suffix(".pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40),
                p.with_suffix(".pdf"),
            )[1],
            "damaged",
        ),
        (lambda p: make.fake_docx(p.with_suffix(".docx")), "not a Word .docx"),
        (
            lambda p: (p.with_suffix(".docx").write_bytes(b"PK\x03\x04 truncated"), p.with_suffix(".docx"))[1],
            "not a Word .docx",
        ),
    ],
)
def test_unreadable_documents_are_listed_with_the_reason_never_sent_to_a_model(ctx, maker, reason):
    ws = ctx.workspace
    (ws.root / "resource/2026-06-20").mkdir(parents=True, exist_ok=True)
    path = maker(ws.root / "resource/2026-06-20/doc")
    rel = ws.relpath(path)

    async def boom(*a, **k):
        raise AssertionError("a document without text must never reach a model")

    report = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=boom))
    assert list(report.listed) == [rel] and reason in report.listed[rel] and len(report.created) == 1
    card = parse_note(ws.read_bytes(report.created[0]).decode())
    assert card.meta["source_resource"] == f"[[{rel}]]" and reason in card.meta["description"]
    ctx.index.sync()  # catalogued, no chunks, no error
    assert ctx.index.db.conn.execute("SELECT count(*) FROM chunks WHERE path=?", (rel,)).fetchone()[0] == 0
    with pytest.raises(Exception, match=reason):
        call(ctx, "read", path=rel)
    assert f"= {rel}: " in report.text()


def test_a_decompression_bomb_is_stopped_by_the_memory_bound(ctx, monkeypatch):
    monkeypatch.setattr(documents, "MEMORY_BYTES", 256 * 1024 * 1024)
    pdf = make.bomb_pdf(ctx.workspace.root / "resource/bomb.pdf", megabytes=320)
    ex = documents.extract(ctx.workspace.metadata, "resource/bomb.pdf", pdf.read_bytes())
    assert ex.text == "" and "256 MB memory bound" in ex.error


def test_deep_nesting_and_a_slow_extraction_are_bounded(ctx, monkeypatch):
    nested = make.nested_pdf(ctx.workspace.root / "resource/nested.pdf")
    ex = documents.extract(ctx.workspace.metadata, "resource/nested.pdf", nested.read_bytes())
    assert ex.text == "" and ex.error  # parsed (PDFium caps nesting) or refused, never a crash
    monkeypatch.setattr(documents, "TIMEOUT_S", 0.001)  # no child can even start in 1 ms
    slow = make.report_pdf(ctx.workspace.root / "resource/slow.pdf", pages=1)
    ex = documents.extract(ctx.workspace.metadata, "resource/slow.pdf", slow.read_bytes())
    assert "longer than" in ex.error
    cache = json.loads(
        (
            ctx.workspace.metadata
            / documents.CACHE_DIR
            / f"{__import__('hashlib').sha256(slow.read_bytes()).hexdigest()}.json"
        ).read_text()
    )
    assert cache["error"] == ex.error  # a hostile file costs its bound once, not on every sync


def test_long_pdf_card_prompt_is_an_outline_within_budget_with_recent_cards(ctx):
    ws = ctx.workspace
    ws.write_text(
        "daily/2026-06-19/battery-pricing.md",
        "---\nname: 电池采购比价\ndescription: 用户在比较动力电池供应商的报价\n---\n# 比价\n",
    )
    rel = "resource/2026-06-20/long.pdf"
    make.report_pdf(ws.root / rel, pages=300)
    res = resource.classify(ctx, resource.scan(ctx, "2026-06-20")[0])
    assert res.kind == "document"
    text, why = resource.resource_text(ctx, res)
    assert why is None and len(text) > resource.PROMPT_CHARS
    prompt = resource.resource_prompt(ctx, res, text)
    body = prompt.split("<resource ", 1)[1].split("</resource>", 1)[0]
    assert len(body) <= resource.PROMPT_CHARS * 1.1 and 'outline="true"' in body
    assert "a PDF of 300 pages" in prompt
    assert "## Page 1\n" in body and "## Page 300" in body.replace("## Page 3000", "")
    assert "出货量 GWh" in body  # figures are kept
    assert "电池采购比价: 用户在比较动力电池供应商的报价" in prompt


def test_images_are_listed_with_format_and_dimensions(ctx):
    from PIL import Image

    ws = ctx.workspace
    (ws.root / "resource/2026-06-20").mkdir(parents=True)
    Image.new("RGB", (640, 480), "blue").save(ws.root / "resource/2026-06-20/chart.png")

    async def boom(*a, **k):
        raise AssertionError("an image is listed, not sent to a model")

    report = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=boom))
    why = report.listed["resource/2026-06-20/chart.png"]
    assert why == "a PNG image, 640×480 pixels"
    card = ws.read_bytes(report.created[0]).decode()
    assert "640×480" in card and "read_image" in card


def test_a_pdf_dropped_while_the_mcp_server_runs_is_found_by_search(tmp_path):
    """The index's freshness path (the walk before a query, or the file watcher) picks up a new,
    changed or removed PDF: no restart, no `reme-cc resource` needed for search."""
    from test_server import start

    import time

    def search_until(srv, present: bool) -> str:
        deadline = time.monotonic() + 60  # the promise: searchable within a minute
        while True:
            out = srv.text(srv.call_tool("search", {"query": "钠离子电池量产进度", "limit": 1}))
            if (rel in out) == present or time.monotonic() > deadline:
                return out
            time.sleep(0.5)

    root = tmp_path / "ws"
    rel = "resource/2026-06-20/catl.pdf"
    with start(root) as srv:
        srv.initialize()
        assert "no results" in srv.text(srv.call_tool("search", {"query": "钠离子电池量产进度"}))
        make.report_pdf(root / rel, pages=3)
        out = search_until(srv, True)
        assert f"{rel}:" in out and "## Page 2" in out
        page = srv.text(srv.call_tool("read", {"path": rel, "pages": "2"}))
        assert "第2章" in page
        (root / rel).unlink()
        assert rel not in search_until(srv, False)
        assert srv.stop() == 0


def test_a_pdf_still_being_copied_gets_its_real_card_once_complete(ctx):
    """A half-written PDF is listed as damaged (cached under its own hash); once the copy completes,
    its stat changes, the new bytes are extracted and the agent writes the card in place."""
    ws = ctx.workspace
    full = make.report_pdf(ws.root / "staging/report.pdf", pages=3).read_bytes()
    rel = "resource/2026-06-20/report.pdf"
    target = ws.root / rel
    target.parent.mkdir(parents=True)
    target.write_bytes(full[: len(full) // 2])
    calls = []

    async def fake(ctx_, res, text):
        calls.append(text)
        return "---\nname: CATL report\n---\n# CATL report\n\nThree pages on batteries.\n", 1

    first = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert "damaged" in first.listed[rel] and not calls
    target.write_bytes(full)
    second = asyncio.run(resource.sync_resources(ctx, today="2026-06-20", summarize=fake))
    assert second.updated == first.created and not second.listed
    assert len(calls) == 1 and "## Page 3" in calls[0]
    assert "Three pages on batteries." in ws.read_bytes(first.created[0]).decode()
