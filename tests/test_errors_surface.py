"""Errors are seen, not swallowed (issue 11 defect 5): a failing brief reaches the hook's log, a
Markdown parser failure is logged before the fallback, and a failed index transaction is rolled back
so the next operation works."""

from __future__ import annotations

import logging

import pytest

from reme_cc.surfaces import hooks
from reme_cc.base.errors import ReMeError
from reme_cc.memory import brief
from reme_cc.notes import chunker
from support.files_helpers import put


def test_a_failing_brief_is_logged_by_the_session_start_hook(ws, monkeypatch):
    monkeypatch.setenv("REME_WORKSPACE", str(ws.root))

    def broken(*_a, **_k):
        raise RuntimeError("brief exploded")

    monkeypatch.setattr(brief, "build_brief", broken)
    assert hooks.handle("SessionStart", {"session_id": "s1", "cwd": str(ws.root)}, ws) == ""  # the session goes on
    log = (ws.logs / "hooks.log").read_text()
    assert "brief skipped: RuntimeError: brief exploded" in log


def test_a_markdown_parser_failure_is_logged_and_falls_back(monkeypatch, caplog):
    def broken(self, body):
        raise RecursionError("mistletoe gave up")

    monkeypatch.setattr(chunker._MarkdownChunker, "_ast_blocks", broken)
    with caplog.at_level(logging.WARNING):
        chunks = chunker.chunk_file("daily/x.md", b"# Title\n\nSome text.\n")
    assert chunks and "Some text." in chunks[0].text  # the plain scan still chunks it
    assert any("mistletoe gave up" in r.getMessage() and "daily/x.md" in r.getMessage() for r in caplog.records)


def test_a_failed_index_transaction_is_rolled_back(ctx, ws, monkeypatch):
    from reme_cc.index import catalog

    put(ws, "daily/x/a.md", "# a\n\nalpha\n")
    index = ctx.index
    index.sync()
    real = catalog.bump_generation

    def fail_once(conn):
        monkeypatch.setattr(catalog, "bump_generation", real)
        raise OSError("disk went away")

    monkeypatch.setattr(catalog, "bump_generation", fail_once)
    with pytest.raises((OSError, ReMeError)):
        index.reindex()
    put(ws, "daily/x/b.md", "# b\n\nbravo\n")
    index.update_paths(["daily/x/b.md"])  # before: "cannot start a transaction within a transaction"
    assert index.file_info("daily/x/b.md") is not None
