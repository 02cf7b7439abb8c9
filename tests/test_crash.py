"""Issue #7 item 2: kill -9 at random moments of indexing, tool writes, transcript copies, recordings and
dreams (CI: 20 kills; `bench/crash.py` runs 200 by hand). After each kill: no truncated or half-written
file anywhere (tests/support/crash.py states the contract), no process of the killed run survives,
every lock is free at once, the next process repairs the index by itself (equal to a fresh rebuild),
and the retried work completes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from support import crash
from support.fake_api import FakeAPI

from reme_cc.base.errors import LockedError
from reme_cc.base.workspace import Workspace

pytestmark = pytest.mark.timeout(600)

# kills per scenario in CI (20 in total)
CI_KILLS = {"index": 4, "tools": 5, "transcript": 5, "record": 3, "dream": 3}
SEED = int(os.environ.get("REME_CRASH_SEED", "20260620"))


def run_scenario(name: str, tmp_path, n: int, **kw) -> list[crash.Outcome]:
    root = tmp_path / "ws"
    Workspace(root)
    rng = random.Random(f"{SEED}-{name}")
    outcomes = []
    for _ in range(n):
        outcomes.append(crash.SCENARIOS[name](root, tmp_path / "fresh", rng, **kw))
    for o in outcomes:
        print(o)
    return outcomes


@pytest.mark.parametrize("name", ["index", "tools", "transcript"])
def test_kill_9_then_recover(name, tmp_path):
    outcomes = run_scenario(name, tmp_path, CI_KILLS[name])
    assert all(o.recovered for o in outcomes)
    # most kills must actually land inside the work (else the test proves little)
    assert sum(o.killed for o in outcomes) >= len(outcomes) - 1, outcomes


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["record", "dream"])
def test_kill_9_agent_runs_then_retry_completes(name, tmp_path):
    with FakeAPI() as api:
        outcomes = run_scenario(name, tmp_path, CI_KILLS[name], api=api, home=tmp_path / "home")
    assert all(o.recovered for o in outcomes)
    assert sum(o.killed for o in outcomes) >= 2, outcomes


# ---- deterministic pieces of the contract ---------------------------------------------------------------


def test_torn_tail_of_a_copy_is_ignored_by_readers_and_cut_by_the_next_copy(tmp_path):
    """kill -9 cannot tear a single write(), but power loss can: the contract for the last line."""
    from reme_cc.memory.render import parse_lines
    from reme_cc.memory.transcript import copy_session, read_copy

    ws = Workspace(tmp_path / "ws")
    src = tmp_path / "s.jsonl"
    entries = crash.transcript_entries(40, 0, random.Random(1))
    src.write_text("".join(json.dumps(e) + "\n" for e in entries))
    copy_session(ws, "torn", src)
    copy = ws.root / "session/claude_code/torn.jsonl"
    full = read_copy(ws, "torn")
    data = copy.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) - 1) + 25  # tear the last line in its middle
    copy.write_bytes(data[:cut])
    check = crash.check_files(ws.root)
    assert check.torn_tails == ["session/claude_code/torn.jsonl"] and not check.problems, check
    assert read_copy(ws, "torn") == full[:-1]
    assert [e for _, e in parse_lines(copy.read_bytes())] == full[:-1]
    more = crash.transcript_entries(4, 100, random.Random(2))
    with src.open("a") as fh:
        fh.write("".join(json.dumps(e) + "\n" for e in more))
    copy_session(ws, "torn", src)
    want = [e["uuid"] for e in entries + more if e["type"] in ("user", "assistant")]
    assert [e["uuid"] for e in read_copy(ws, "torn")] == want  # the torn entry is copied again, once
    assert copy.read_bytes().endswith(b"\n")


def test_a_sigkilled_lock_holder_never_blocks(tmp_path):
    """flock locks (workspace locks and the index's filelock) die with their holder: measured."""
    ws = Workspace(tmp_path / "ws")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time\nfrom filelock import FileLock\nfrom reme_cc.base.workspace import Workspace\n"
                "ws = Workspace(sys.argv[1])\nl1 = ws.lock('dream'); l1.__enter__()\nl2 = ws.lock('record-s1'); l2.__enter__()\n"
                "l3 = FileLock(str(ws.metadata / 'index.lock')); l3.acquire()\nprint('held', flush=True)\ntime.sleep(600)\n"
            ),
            str(ws.root),
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert holder.stdout.readline().strip() == b"held"
        t0 = time.monotonic()
        with pytest.raises(LockedError, match="held by another reme process"):
            with ws.lock("dream", timeout=0.3):
                pass
        assert 0.25 <= time.monotonic() - t0 < 2.0  # a live holder: a clear error after the timeout
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        from filelock import FileLock

        t0 = time.monotonic()
        with (
            ws.lock("dream", timeout=5),
            ws.lock("record-s1", timeout=5),
            FileLock(str(ws.metadata / "index.lock"), timeout=5),
        ):
            waited = time.monotonic() - t0
        assert waited < 0.2, f"locks of a dead process blocked for {waited:.2f}s"
        assert crash.lock_wait(ws.root)[0] < 0.1
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_dream_cut_short_after_writing_its_node_is_completed_by_the_next_dream(ctx, monkeypatch, tmp_path):
    """Regression: a dream killed after an integrator wrote its node but before the checkpoint. The retry's
    integrator rewrites the same node (no change on disk), which used to count as a failed unit, so the
    sources were re-extracted by every later dream, forever."""
    from support.claude_cli import sdk_env
    from support.dream_script import create_plan, extractor_turn, node_md, script_dream

    from reme_cc.memory import dream

    ws = ctx.workspace
    src, node = "daily/2026-06-20/pin.md", "digest/procedure/pin-the-toolchain.md"
    ws.write_text(src, "---\nname: Pin\ndescription: pin it\n---\nAlways pin the toolchain.\n")
    body = "Always pin the toolchain version."
    ws.write_text(
        node, node_md("Pin the toolchain", "Pin the toolchain (from the dream)", body, [src])
    )  # the killed run's work
    with FakeAPI() as api:
        for k, v in sdk_env(api, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_RETRIES", "0")
        units = [{"name": "Pin the toolchain", "bucket": "procedure", "summary": "pin it", "paths": [src]}]
        script_dream(
            api,
            extractions=[extractor_turn(units)],
            plans={"Pin the toolchain": create_plan(node, "Pin the toolchain", body, [src])},
        )
        summary = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date="2026-06-20")))
    assert summary.failed == 0 and summary.corroborated == 1, summary.text()
    assert src in dream.load_catalog(ws)
