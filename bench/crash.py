"""Crash injection by hand (issue #7 item 2): 200 kill -9 by default, spread over the five scenarios of
tests/support/crash.py (indexing, tool writes, transcript copies, recordings, dreams). CI runs 20.

    .venv/bin/python bench/crash.py                       # 200 kills, ~30 min on 2 cores
    .venv/bin/python bench/crash.py --kills 50 --seed 7 --only index,tools
    .venv/bin/python bench/crash.py --record-backend sdk  # recordings through the real Claude CLI

Prints one line per kill and a summary (kills that landed inside the work, torn tails, temp files left,
worst lock wait, dangling links after retried moves); exits 1 on the first unrecovered crash, with the
workspace left in --workdir for inspection.
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

SHARE = {"index": 0.25, "tools": 0.25, "transcript": 0.25, "record": 0.15, "dream": 0.10}


def main() -> int:
    from support import crash
    from support.fake_api import FakeAPI

    from reme_cc.base.workspace import Workspace

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20260620)
    ap.add_argument("--only", default="", help="comma-separated scenarios")
    ap.add_argument("--record-backend", default="anthropic", choices=["anthropic", "sdk"])
    ap.add_argument("--workdir", default="/tmp/reme-crash")
    args = ap.parse_args()
    names = [n for n in SHARE if not args.only or n in args.only.split(",")]
    total = sum(SHARE[n] for n in names)
    plan = {n: max(1, round(args.kills * SHARE[n] / total)) for n in names}
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    rng = random.Random(args.seed)
    stats: dict[str, collections.Counter] = {}
    worst_lock = 0.0
    t_start = time.monotonic()
    with FakeAPI() as api:
        for name in names:
            base = work / name
            root = base / "ws"
            Workspace(root)
            kw = {}
            if name in ("record", "dream"):
                kw = {"api": api, "home": base / "home"}
                if name == "record":
                    kw["backend"] = args.record_backend
            c = stats.setdefault(name, collections.Counter())
            for i in range(plan[name]):
                t0 = time.monotonic()
                try:
                    o = crash.SCENARIOS[name](root, base / "fresh", rng, **kw)
                except Exception as exc:  # noqa: BLE001
                    print(f"FAILED {name} #{i + 1}: {type(exc).__name__}: {exc}\nworkspace kept in {root}")
                    return 1
                c["runs"] += 1
                c["killed"] += o.killed
                c["recovered"] += o.recovered
                c["torn_tails"] += o.torn_tails
                c["temp_files"] += o.temp_files
                c["dangling"] += o.dangling
                worst_lock = max(worst_lock, o.lock_seconds)
                print(
                    f"{name:<10} #{i + 1:<3} kill at {o.delay:5.2f}s killed={int(o.killed)} torn={o.torn_tails} "
                    f"tmp={o.temp_files} lock={o.lock_seconds * 1000:.2f}ms {time.monotonic() - t0:5.1f}s {o.note}",
                    flush=True,
                )
    print("\nscenario    runs  killed  recovered  torn-tails  temp-files  dangling")
    for name, c in stats.items():
        print(
            f"{name:<10} {c['runs']:>5} {c['killed']:>7} {c['recovered']:>10} {c['torn_tails']:>11} "
            f"{c['temp_files']:>11} {c['dangling']:>9}"
        )
    runs = sum(c["runs"] for c in stats.values())
    killed = sum(c["killed"] for c in stats.values())
    print(
        f"\n{runs} crash runs, {killed} kills landed inside the work, all recovered; worst lock wait after a kill "
        f"{worst_lock * 1000:.2f} ms; {time.monotonic() - t_start:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
