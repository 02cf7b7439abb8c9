"""Freshness without walking: a watching index learns about changed files from the OS, falls back to
the walk when notifications are unavailable or overflow, and says so (issue 15 item 1)."""

from __future__ import annotations


import pytest

from reme_cc.base.config import Config
from support.poll import until
from reme_cc.index import Index
from reme_cc.index import watch as watch_mod
from reme_cc.tools.system import StatusResult


def _paths(index: Index, query: str) -> list[str]:
    return [h.path for h in index.search(query, limit=10).results]


@pytest.fixture
def watched(ws):
    ws.write_text("digest/wiki/a.md", "# A\nalpha words\n")
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    index.sync()
    assert index.watch(wait=20)["mode"] == "notify"
    yield index
    index.close()


def test_hand_edits_reach_search_without_any_walk(ws, watched, monkeypatch):
    watched.search("alpha")  # consumes the watcher's own first walk

    from reme_cc.index.sync import WALK_LAYERS, walk

    def no_walk(root, folders=WALK_LAYERS):
        if tuple(folders) == WALK_LAYERS:  # a notified new folder is listed on its own, the workspace never
            raise AssertionError("a query walked the workspace although notifications are on")
        return walk(root, folders)

    monkeypatch.setattr("reme_cc.index.writer.walk", no_walk)
    (ws.root / "digest" / "wiki" / "b.md").write_text("# B\nzebrafish here\n", encoding="utf-8")
    assert until(lambda: _paths(watched, "zebrafish")) == ["digest/wiki/b.md"]
    (ws.root / "digest" / "wiki" / "b.md").write_text("# B\nnow about quokkas\n", encoding="utf-8")
    assert until(lambda: _paths(watched, "quokkas")) == ["digest/wiki/b.md"]
    assert _paths(watched, "zebrafish") == []
    (ws.root / "daily" / "2026-06-20").mkdir(parents=True)  # a new folder is watched too
    (ws.root / "daily" / "2026-06-20" / "c.md").write_text("# C\nplatypus\n", encoding="utf-8")
    assert until(lambda: _paths(watched, "platypus")) == ["daily/2026-06-20/c.md"]
    (ws.root / "digest" / "wiki" / "b.md").unlink()
    assert until(lambda: not _paths(watched, "quokkas"))
    status = watched.status()
    assert status["freshness"]["mode"] == "notify" and status["freshness"]["events"] > 0


def test_queries_do_not_walk_while_the_watcher_takes_its_first_walk(ws, monkeypatch):
    """A server's searches while its watcher starts (its first walk: ~0.5 s at 100k files) answer from
    the last sync instead of walking too, once there was one; an edit made meanwhile arrives with the
    watcher's walk."""
    import threading

    from reme_cc.index import sync as sync_mod

    ws.write_text("digest/wiki/a.md", "# A\nalpha words\n")
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    release, walks = threading.Event(), []

    def watcher_walk(root):  # the watcher's own first walk, held until the test lets it go
        release.wait(30)
        return sync_mod.walk(root)

    def query_walk(root):
        walks.append(threading.current_thread().name)
        return sync_mod.walk(root)

    try:
        monkeypatch.setattr("reme_cc.index.writer.walk", query_walk)
        index.writer.watcher = watch_mod.Watcher(ws.root, sync_mod.WALK_LAYERS, lambda m: None, watcher_walk)
        index.writer.watcher.start()
        # a query before this process ever synced (the server's first search may come before the
        # warm-up's sync step) walks: else it would search whatever the index held when it last ran
        assert _paths(index, "alpha") == ["digest/wiki/a.md"] and walks == ["MainThread"]
        walks.clear()
        index.writer.last_sync -= 5  # long enough ago that a walking query would walk
        (ws.root / "digest" / "wiki" / "b.md").write_text("# B\nzebrafish here\n", encoding="utf-8")
        assert _paths(index, "alpha") == ["digest/wiki/a.md"] and walks == []
        release.set()
        assert until(lambda: _paths(index, "zebrafish")) == ["digest/wiki/b.md"]
        assert walks == [] and index.freshness()["mode"] == "notify"
    finally:
        release.set()
        index.close()


def test_watch_limit_falls_back_to_the_walk_and_says_so(ws, monkeypatch):
    import watchfiles._rust_notify as rn

    class Limited:  # what watchfiles raises when inotify's max_user_watches is reached
        def __init__(self, *a, **k):
            raise OSError("OS file watch limit reached.")

    monkeypatch.setattr(rn, "RustNotify", Limited)
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    try:
        fresh = index.watch(wait=20)
        assert fresh["mode"] == "walk" and "max_user_watches" in fresh["reason"]
        text = StatusResult(status=index.status()).text()
        assert "freshness: stat walk before queries" in text and "max_user_watches" in text
        assert "file notifications off" in (ws.logs / "index.log").read_text()
        ws.write_text("digest/wiki/a.md", "# A\nwombat\n")
        index.writer.last_sync = 0.0
        assert _paths(index, "wombat") == ["digest/wiki/a.md"]  # the walk keeps search correct
    finally:
        index.close()


def test_a_burst_beyond_the_notification_budget_is_found_by_one_walk(ws, watched, monkeypatch):
    monkeypatch.setattr(watch_mod, "BURST_MAX", 5)
    watched.search("alpha")
    for i in range(40):
        (ws.root / "digest" / "wiki" / f"burst-{i}.md").write_text(f"# {i}\nnarwhal number{i}\n", encoding="utf-8")
    assert until(lambda: len(_paths(watched, "narwhal")) == 10)
    assert len(watched.search("narwhal", limit=50).results) == 40
    assert watched.freshness()["mode"] == "notify"  # the overflow cost one walk, not the notifications


def test_a_large_burst_is_indexed_in_the_background_and_ends_equal_to_a_reindex(ws, watched, monkeypatch):
    import reme_cc.index.writer as index_mod

    monkeypatch.setattr(index_mod, "INLINE_FILES", 20)
    watched.search("alpha")
    for i in range(120):
        (ws.root / "daily" / f"b-{i}.md").write_text(f"# {i}\nbadger {i}\n", encoding="utf-8")
    assert until(lambda: len(watched.search("badger", limit=100).results) == 100, timeout=120)
    assert "background" in (ws.logs / "index.log").read_text()
    ours = {r[0]: r[1] for r in watched.read(lambda c: c.execute("SELECT path, hash FROM files").fetchall())}
    fresh = Index(ws, Config.load(ws.root), background_embedding=False)
    try:
        fresh.reindex()
        theirs = {r[0]: r[1] for r in fresh.read(lambda c: c.execute("SELECT path, hash FROM files").fetchall())}
    finally:
        fresh.close()
    assert ours == theirs and len(ours) == 121


def test_status_says_while_a_burst_is_indexed_in_the_background(ws, watched, monkeypatch):
    import reme_cc.index.writer as index_mod

    monkeypatch.setattr(index_mod, "INLINE_FILES", 20)
    watched.search("alpha")
    other = Index(ws, Config.load(ws.root), background_embedding=False)
    try:
        with other.db.writer:  # another process is writing: the burst's indexer waits for the lock
            for i in range(40):
                (ws.root / "daily" / f"c-{i}.md").write_text(f"# {i}\nmarmot {i}\n", encoding="utf-8")
            watched.update_paths([f"daily/c-{i}.md" for i in range(40)])  # one batch of 40 (> INLINE_FILES)
            assert watched.search("marmot").results == []  # answered from the index as it was, not blocked
            text = StatusResult(status=watched.status()).text()
            assert "indexing 40 changed files in the background (search answers from the index as it was" in text
        assert until(lambda: len(watched.search("marmot", limit=50).results) == 40, timeout=120)
        assert "in the background" not in StatusResult(status=watched.status()).text()
    finally:
        other.close()


def test_filesystem_type_and_remote_detection(tmp_path):
    info = "\n".join(
        [
            "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
            "40 22 0:40 / /mnt/team rw,relatime shared:5 - nfs4 server:/export rw",
            "41 22 0:41 / /home/me/sshfs\\040dir rw - fuse.sshfs me@host: rw",
        ]
    )
    assert watch_mod.filesystem_type(tmp_path, "22 1 8:1 / / rw - ext4 /dev/sda1 rw") == "ext4"
    assert watch_mod.filesystem_type("/mnt/team/reme", info) == "nfs4"
    assert watch_mod.filesystem_type("/home/me/sshfs dir/x", info) == "fuse.sshfs"
    assert watch_mod.filesystem_type("/mnt/teamwork", info) == "ext4"  # a prefix of the name is not inside
    assert watch_mod.is_remote("nfs4") and watch_mod.is_remote("fuse.sshfs") and not watch_mod.is_remote("ext4")


def test_network_filesystem_adds_a_periodic_check(ws, monkeypatch):
    monkeypatch.setattr(watch_mod, "filesystem_type", lambda *_a, **_k: "nfs4")
    monkeypatch.setattr(watch_mod, "REMOTE_CHECK_S", 0.2)
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    try:
        fresh = index.watch(wait=20)
        assert fresh["mode"] == "notify" and "nfs4" in fresh["reason"] and fresh["periodic_check_s"] == 0.2
        assert "other machines' writes" in StatusResult(status=index.status()).text()
        index.search("anything")
        # a write notifications never report (another machine's): found by the periodic walk
        monkeypatch.setattr(watch_mod, "_rel", lambda *_a: None)
        ws.write_text("digest/wiki/remote.md", "# R\nkookaburra\n")
        assert until(lambda: _paths(index, "kookaburra")) == ["digest/wiki/remote.md"]
    finally:
        index.close()
