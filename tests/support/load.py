"""Load on the stdio MCP server (issue #7 item 6), shared by tests/test_load.py (CI scale) and bench/soak.py
(full scale: 10,000 calls).

    root = make_corpus(tmp_path / "ws", files=200)
    fig = concurrent_searches(root, clients=1, rounds=4, burst=50)   # {"calls", "errors", "p50_ms", "p95_ms", ...}
    fig = memory_over_calls(root, calls=1000)                        # {"rss_start_mb", "rss_end_mb", "growth_mb", ...}

Everything is loopback/stdio: one ``reme-cc mcp`` process per client (that is what a client of a stdio
server is), driven by ``TimedMcp`` (tests/support/mcp_stdio.py plus the arrival time of every reply,
so a latency is send -> reply, not send -> when we got round to looking).
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from support.mcp_stdio import McpProcess
from support.soak import mcp_argv, p95

REPO = Path(__file__).resolve().parents[2]


class TimedMcp(McpProcess):
    """McpProcess (which notes each reply's arrival time) that can also report the server's RSS."""

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


def make_corpus(root: Path, files: int = 200, seed: int = 3) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from corpus import generate  # bench/corpus.py: daily cards, day pages, digest nodes, zh + en, links
    finally:
        sys.path.remove(str(REPO / "bench"))
    generate(root, files, seed=seed)
    from reme_cc.base.workspace import Workspace

    Workspace(root)  # the other layers
    return root


def queries(seed: int = 0) -> list[str]:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from corpus import EN_TOPICS, ZH_TOPICS
    finally:
        sys.path.remove(str(REPO / "bench"))
    rng = random.Random(seed)
    words = EN_TOPICS + ZH_TOPICS
    return [" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(200)]


def server_env(root: Path, run_id: str, embedding: str = "none") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE", "ANTHROPIC", "REME_")) and k != "PYTEST_CURRENT_TEST"
    }
    env.update(
        {"REME_WORKSPACE": str(root), "REME_EMBEDDING": embedding, "REME_TEST_RUN": run_id, "REME_LOG_LEVEL": "WARNING"}
    )
    return env


def start(root: Path, run_id: str, embedding: str = "none") -> TimedMcp:
    srv = TimedMcp(mcp_argv(), env=server_env(root, run_id, embedding), cwd=str(root))
    srv.initialize()
    # the first call waits for the warm-up sync: keep it out of the measured calls
    res = srv.call_tool("status", {}, timeout=300)
    if res.get("isError"):
        raise RuntimeError(f"status failed: {McpProcess.text(res)}")
    return srv


def burst(
    srv: TimedMcp, calls: list[tuple[str, dict[str, Any]]], timeout: float = 300.0
) -> tuple[list[float], list[str]]:
    """Send every call at once (all in flight together), then collect. Returns (latencies s, errors)."""
    sent: dict[int, tuple[float, str]] = {}
    for name, args in calls:
        t = time.monotonic()
        rid = srv.start_request("tools/call", {"name": name, "arguments": args})
        sent[rid] = (t, name)
    lat, errors = [], []
    for rid, (t, name) in sent.items():
        try:
            res = srv.wait(rid, timeout)
        except Exception as exc:  # noqa: BLE001 - counted as an error of the run
            errors.append(f"{name}: {exc}"[:300])
            continue
        lat.append(srv.arrived.pop(rid) - t)
        if res.get("isError"):
            errors.append(f"{name}: {McpProcess.text(res)}"[:300])
    return lat, errors


def concurrent_searches(
    root: Path, *, clients: int = 1, rounds: int = 4, burst_size: int = 50, embedding: str = "none"
) -> dict[str, Any]:
    """``clients`` servers on the same workspace at once, each receiving ``rounds`` bursts of
    ``burst_size`` concurrent search calls. Latency = send -> reply of each call."""
    run_id = uuid.uuid4().hex
    qs = queries(1)
    servers = [start(root, run_id, embedding) for _ in range(clients)]
    results: list[tuple[list[float], list[str]]] = [([], []) for _ in servers]
    try:

        def drive(i: int) -> None:
            rng = random.Random(i)
            for _ in range(rounds):
                calls = [("search", {"query": rng.choice(qs), "limit": 5}) for _ in range(burst_size)]
                lat, err = burst(servers[i], calls)
                results[i][0].extend(lat)
                results[i][1].extend(err)

        t0 = time.monotonic()
        threads = [threading.Thread(target=drive, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        rcs = [s.stop(timeout=20) for s in servers]
    finally:
        for s in servers:
            s.__exit__(None, None, None)
    lat = [x for r in results for x in r[0]]
    errors = [x for r in results for x in r[1]]
    return {
        "clients": clients,
        "calls": len(lat) + len(errors),
        "errors": len(errors),
        "error_samples": errors[:5],
        "in_flight_per_client": burst_size,
        "p50_ms": round(sorted(lat)[len(lat) // 2] * 1000, 1) if lat else 0,
        "p95_ms": round(p95(lat) * 1000, 1),
        "max_ms": round(max(lat, default=0) * 1000, 1),
        "calls_per_s": round(len(lat) / wall, 1) if wall else 0,
        "exit_codes": rcs,
    }


def memory_over_calls(
    root: Path, *, calls: int = 1000, burst_size: int = 50, warmup: int = 200, embedding: str = "none"
) -> dict[str, Any]:
    """One server, ``calls`` mixed calls (search, node_search, read, list, traverse, and a few writes
    and edits of one scratch note) in bursts; RSS sampled after ``warmup`` calls and after each burst."""
    run_id = uuid.uuid4().hex
    qs = queries(2)
    rng = random.Random(5)
    srv = start(root, run_id, embedding)
    files = [p.relative_to(root).as_posix() for p in sorted((root / "digest").rglob("*.md"))]
    scratch = "daily/2025-01-01/load-scratch.md"
    rev = [0]

    def one() -> tuple[str, dict[str, Any]]:
        r = rng.random()
        if r < 0.6:
            return "search", {"query": rng.choice(qs), "limit": 5}
        if r < 0.7:
            return "node_search", {"query": rng.choice(qs), "limit": 10}
        if r < 0.8:
            return "read", {"path": rng.choice(files)}
        if r < 0.85:
            return "list", {"path": "digest", "recursive": True, "limit": 50}
        if r < 0.95:
            return "traverse", {"seeds": [rng.choice(files)], "depth": 2}
        rev[0] += 1
        return "write", {"path": scratch, "content": f"# Scratch\n\nrevision {rev[0]} about {rng.choice(qs)}\n"}

    samples: list[tuple[int, float]] = []
    lat: list[float] = []
    errors: list[str] = []
    done = 0
    try:
        t0 = time.monotonic()
        while done < calls:
            n = min(burst_size, calls - done)
            # writes of one note must not be in flight together (their order would be undefined)
            batch, wrote = [], False
            for _ in range(n):
                name, args = one()
                if name == "write":
                    if wrote:
                        name, args = "search", {"query": rng.choice(qs), "limit": 5}
                    wrote = True
                batch.append((name, args))
            got, err = burst(srv, batch)
            lat += got
            errors += err
            done += n
            if done >= warmup:
                samples.append((done, srv.rss_mb()))
        wall = time.monotonic() - t0
        rc = srv.stop(timeout=20)
    finally:
        srv.__exit__(None, None, None)
    start_mb = samples[0][1] if samples else 0.0
    end_mb = samples[-1][1] if samples else 0.0
    # growth per 1,000 calls over the second half (a leak keeps growing; a warm cache levels off)
    half = [s for s in samples if s[0] >= calls // 2]
    slope = ((half[-1][1] - half[0][1]) / max(1, half[-1][0] - half[0][0]) * 1000) if len(half) >= 2 else 0.0
    return {
        "calls": done,
        "errors": len(errors),
        "error_samples": errors[:5],
        "rss_after_warmup_mb": round(start_mb, 1),
        "rss_end_mb": round(end_mb, 1),
        "rss_peak_mb": round(max((s[1] for s in samples), default=0), 1),
        "growth_mb": round(end_mb - start_mb, 1),
        "growth_mb_per_1000_calls_2nd_half": round(slope, 2),
        "p95_ms": round(p95(lat) * 1000, 1),
        "calls_per_s": round(done / wall, 1) if wall else 0,
        "exit_code": rc,
    }
