"""Issue #7 item 1: many processes on one workspace at once, nothing lost, the index equal to a rebuild.

4 stdio MCP servers (write/edit/move/search), 2 Claude Code sessions whose Stop hook runs after every
turn (record on, recorders against the fake API), 1 dream loop (real Claude CLI, scripted fake API) and
1 editor process writing notes straight to disk, for REME_SOAK_SECONDS (CI: 10 s; by hand:
``bench/soak.py --seconds 60``). The machinery and every check are in tests/support/soak.py.
"""

from __future__ import annotations

import json
import os

import pytest

from support.soak import MIN_SERVER_OPS, Soak

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

SECONDS = float(os.environ.get("REME_SOAK_SECONDS", "10"))


def test_many_processes_one_workspace(tmp_path):
    soak = Soak(tmp_path, seconds=SECONDS)
    figures = soak.run()
    print("\nsoak figures:", json.dumps(figures, indent=2))
    assert not soak.problems, f"{len(soak.problems)} problem(s):\n" + "\n\n".join(soak.problems[:20])
    # the run really did concurrent work of every kind (a soak that did nothing proves nothing)
    ops = figures["server_ops"]  # each server works past its time until it has done every kind (MIN_SERVER_OPS)
    assert all(ops[op] >= k * figures["servers"] for op, k in MIN_SERVER_OPS.items()), ops
    assert figures["freshness_checks"] >= 1
    assert figures["editor_writes"] >= 10
    assert figures["dreams"] >= 1 and figures["dream_nodes"] >= 1
    assert figures["recordings_started"] >= 1 and figures["recorder_cards"] >= 1
    assert figures["writes_checked"] >= 50 and figures["index_rows_compared"] > 100


def test_the_soak_checks_catch_a_lost_write_a_stale_index_and_a_held_lock(tmp_path, monkeypatch):
    """The checks above must be able to fail: a stale index, a lost write and a held lock are reported."""
    from reme_cc.base.config import Config
    from reme_cc.index import Index
    from reme_cc.base.workspace import Workspace

    monkeypatch.setenv("REME_EMBEDDING", "none")
    soak = Soak(tmp_path, seconds=0)
    soak.seed_workspace()
    ws = Workspace(soak.root)
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    index.sync()
    index.close()
    soak.check_files()
    soak.check_locks()
    soak.check_index()
    assert soak.problems == []
    # an editor changes a note and nobody syncs; a "successful" write is not what is on disk; a lock is held
    (soak.root / "daily/2020-01-20/seed-card-1.md").write_text("---\nname: changed\n---\nNew text about hooks.\n")
    soak.expected["digest/wiki/soak-seed-2.md"] = "what a tool said it wrote\n"
    with ws.lock("held-by-someone", timeout=0):
        soak.check_files()
        soak.check_locks()
    (tmp_path / "ws-fresh").rename(tmp_path / "ws-fresh-1")
    soak.check_index()
    found = "\n".join(soak.problems)
    assert "digest/wiki/soak-seed-2.md: content differs" in found
    assert "daily/2020-01-20/seed-card-1.md: content differs" in found
    assert "held-by-someone.lock is still held" in found
    assert "index table files differs" in found and "index table chunks differs" in found


def test_a_link_indexed_while_another_process_deletes_its_target(ws):
    """Process B indexes a note linking X while process A deletes X and commits first. B must resolve the
    link against the catalog as it is under the writer lock, not as it was before B waited for the lock
    (else the link stays 'exact' to a file that is gone, forever: nothing re-resolves it)."""
    from reme_cc.base.config import Config
    from reme_cc.index import Index

    x, z = "digest/wiki/target.md", "daily/2020-01-01/linker.md"
    ws.write_text(x, "# Target\n")
    a, b = Index(ws, Config.load(ws.root)), Index(ws, Config.load(ws.root))
    try:
        a.sync()
        ws.write_text(z, f"See [[{x}]].\n")
        real = b.db.writer

        class DeleteFirst:  # A's whole delete happens while B waits for the writer lock
            def __enter__(self) -> None:
                (ws.root / x).unlink()
                a.update_paths([x])
                return real.__enter__()

            def __exit__(self, *exc: object) -> None:
                return real.__exit__(*exc)

        b.db.writer = DeleteFirst()
        b.update_paths([z])
        b.db.writer = real
        (link,) = b.outbound_links(z)
        assert (link.resolved_path, link.how) == (None, "missing")
    finally:
        a.close()
        b.close()


def test_a_sync_while_another_process_deletes_a_link_target(ws):
    """Same race through sync(): its stat walk saw X, another process deleted X (and committed) before
    this sync got the writer lock to index a new note linking X."""
    from reme_cc.base.config import Config
    from reme_cc.index import Index

    x, z = "digest/wiki/target.md", "daily/2020-01-01/linker.md"
    ws.write_text(x, "# Target\n")
    a, b = Index(ws, Config.load(ws.root)), Index(ws, Config.load(ws.root))
    try:
        a.sync()
        b.sync()
        ws.write_text(z, f"See [[{x}]].\n")
        real = b.db.writer

        class DeleteFirst:
            def __enter__(self) -> None:
                (ws.root / x).unlink()
                a.update_paths([x])
                return real.__enter__()

            def __exit__(self, *exc: object) -> None:
                return real.__exit__(*exc)

        b.db.writer = DeleteFirst()
        b.sync(force=True)
        b.db.writer = real
        (link,) = b.outbound_links(z)
        assert (link.resolved_path, link.how) == (None, "missing")
    finally:
        a.close()
        b.close()
