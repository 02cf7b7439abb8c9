"""Stop-hook wall time on 1 MB and 20 MB transcripts (p50/p95 over N runs), first copy and incremental.

    python3 bench/bench_hooks.py [--runs 30] [--python python3] [--sizes 1,20]

Each run spawns `python3 -S hooks/reme_hook.py Stop` with a real-shaped payload on stdin, exactly as
Claude Code does, and measures until the process exits. Transcripts are synthesised from the real
CLI fixtures (same line types and proportions: api-request blobs, attachments, user/assistant lines),
with fresh uuids. "first" = a workspace that has never seen the session (a 20 MB backlog is handed to a
detached worker; its completion time is reported separately); "incremental" = one new turn (~30 KB)
appended before each Stop, the normal case. Last, the SessionStart hook (which builds the brief from the
index) on the demo workspace, p50/p95 of the whole hook against the bare interpreter start.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "reme_hook.py"
FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests/fixtures/claude_code/projects/-home-user-project/71d7eee5-6a9d-427a-8f40-f50521713e21.jsonl"
)
SID = "bench000-0000-4000-8000-000000000000"


def turn_lines(template: list[dict]) -> list[bytes]:
    """One turn: the fixture's lines with fresh uuids (so every turn is new conversation)."""
    out = []
    for obj in template:
        obj = dict(obj)
        if "uuid" in obj:
            obj["uuid"] = str(uuid.uuid4())
        obj["sessionId"] = SID
        out.append(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    return out


def make_transcript(path: Path, mb: float, template: list[dict]) -> None:
    with open(path, "wb") as fh:
        while fh.tell() < mb * 1024 * 1024:
            fh.writelines(turn_lines(template))


def run_stop(python: str, ws: Path, transcript: Path) -> float:
    payload = json.dumps({"session_id": SID, "transcript_path": str(transcript), "cwd": str(ws),
                          "hook_event_name": "Stop", "stop_hook_active": False}).encode()  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update({"REME_WORKSPACE": str(ws), "REME_RECORD_MIN_MESSAGES": "1000000", "REME_AUTO_DREAM": "false"})
    t0 = time.perf_counter()
    p = subprocess.run([python, "-S", str(HOOK), "Stop"], input=payload, env=env, capture_output=True)
    dt = time.perf_counter() - t0
    assert p.returncode == 0 and not p.stdout, p
    return dt


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] * 1000


def copied_lines(ws: Path) -> int:
    f = ws / "session" / "claude_code" / f"{SID}.jsonl"
    return f.read_bytes().count(b"\n") if f.exists() else 0


def bench(python: str, mb: float, runs: int, template: list[dict], tmp: Path) -> dict:
    src = tmp / f"t{mb}.jsonl"
    make_transcript(src, mb, template)
    start_mb = round(src.stat().st_size / 2**20, 1)
    expected = sum(
        1 for line in src.read_bytes().splitlines() if b'"type":"user"' in line or b'"type":"assistant"' in line
    )
    first, worker_done = [], []
    for i in range(runs):
        ws = tmp / f"ws-first-{mb}-{i}"
        first.append(run_stop(python, ws, src))
        t0 = time.perf_counter()
        while copied_lines(ws) < expected and time.perf_counter() - t0 < 60:
            time.sleep(0.01)
        worker_done.append(first[-1] + time.perf_counter() - t0)
        shutil.rmtree(ws, ignore_errors=True)
    ws = tmp / f"ws-inc-{mb}"
    run_stop(python, ws, src)
    while copied_lines(ws) < expected:
        time.sleep(0.01)
    inc = []
    for _ in range(runs):
        with open(src, "ab") as fh:
            fh.writelines(turn_lines(template))
        inc.append(run_stop(python, ws, src))
    total = sum(
        1 for line in src.read_bytes().splitlines() if b'"type":"user"' in line or b'"type":"assistant"' in line
    )
    assert copied_lines(ws) == total, (copied_lines(ws), total)
    return {
        "size_mb": start_mb, "size_after_runs_mb": round(src.stat().st_size / 2**20, 1),
        "first_p50_ms": round(pct(first, 0.5)), "first_p95_ms": round(pct(first, 0.95)),
        "first_copy_complete_p50_ms": round(pct(worker_done, 0.5)),
        "incremental_p50_ms": round(pct(inc, 0.5)), "incremental_p95_ms": round(pct(inc, 0.95)),
        "incremental_mean_ms": round(statistics.mean(inc) * 1000),
    }  # fmt: skip


def bench_session_start(python: str, runs: int, tmp: Path) -> dict:
    ws = tmp / "ws-brief"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update({"REME_WORKSPACE": str(ws), "REME_AUTO_DREAM": "false", "REME_EMBEDDING": "none"})
    subprocess.run([sys.executable, "-m", "reme_cc", "--workspace", str(ws), "demo"], env=env, check=True,
                   capture_output=True)  # fmt: skip
    project = tmp / "release-rollback"  # a project folder the demo's digest has a node for
    project.mkdir(exist_ok=True)
    payload = json.dumps({"session_id": SID, "cwd": str(project), "hook_event_name": "SessionStart",
                          "source": "startup"}).encode()  # fmt: skip
    times, out = [], b""
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([python, "-S", str(HOOK), "SessionStart"], input=payload, env=env, capture_output=True)
        times.append(time.perf_counter() - t0)
        assert p.returncode == 0, p
        out = p.stdout
    assert b"additionalContext" in out, out  # the brief was built, not skipped
    return {"session_start_p50_ms": round(pct(times, 0.5)), "session_start_p95_ms": round(pct(times, 0.95)),
            "brief_chars": len(json.loads(out)["hookSpecificOutput"]["additionalContext"])}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--python", default="python3")
    ap.add_argument("--sizes", default="1,20")
    args = ap.parse_args()
    # one turn ≈ 40 KB: the fixture's lines minus its one-off 40-60 KB session-start blobs
    template = [json.loads(line) for line in FIXTURE.read_text().splitlines() if len(line) < 20_000]
    baseline = []
    for _ in range(10):
        t0 = time.perf_counter()
        subprocess.run([args.python, "-S", "-c", "pass"])
        baseline.append(time.perf_counter() - t0)
    print(f"python: {shutil.which(args.python) or args.python}; bare interpreter start p50 "
          f"{pct(baseline, 0.5):.0f} ms; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for mb in [float(x) for x in args.sizes.split(",")]:
            print(json.dumps({"python": args.python, **bench(args.python, mb, args.runs, template, Path(tmp))}))
        print(json.dumps({"python": args.python, **bench_session_start(args.python, args.runs, Path(tmp))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
