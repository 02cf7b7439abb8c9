"""Issue #7 items 1 and 6 at full scale (by hand; CI runs tests/test_reliability_soak.py and tests/test_load.py
at small scale). Same machinery: tests/support/soak.py and tests/support/load.py.

    .venv/bin/python bench/soak.py                         # 60 s soak + load with 10,000 calls
    .venv/bin/python bench/soak.py --only soak --seconds 120
    .venv/bin/python bench/soak.py --only load --load-calls 10000 --files 1000

Prints one JSON object of figures; exits 1 when the soak found problems or a load call failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.load import concurrent_searches, make_corpus, memory_over_calls  # noqa: E402
from support.soak import Soak  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["soak", "load"], help="run only one part")
    ap.add_argument("--seconds", type=float, default=60.0, help="soak duration (60)")
    ap.add_argument("--servers", type=int, default=4)
    ap.add_argument("--hooks", type=int, default=2)
    ap.add_argument("--load-calls", type=int, default=10_000, help="calls for the RSS run (10,000)")
    ap.add_argument("--rounds", type=int, default=20, help="bursts of 50 concurrent searches per client (20)")
    ap.add_argument("--files", type=int, default=500, help="corpus size for the load runs (500)")
    ap.add_argument(
        "--embedding",
        default=os.environ.get("REME_TEST_EMBEDDING", "none"),
        help="embedding backend for every process (none = BM25 only, as in CI)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reme-soak-"))
    out: dict = {"load_average_start": os.getloadavg()}
    failed = False
    if args.only in (None, "soak"):
        soak = Soak(work / "soak", args.seconds, servers=args.servers, hooks=args.hooks, embedding=args.embedding)
        fig = soak.run()
        procs = args.servers + args.hooks + 2  # + dream loop + editor
        fig["processes_x_seconds_held"] = f"{procs} x {args.seconds:g} s (+ {soak.processes_started} short-lived)"
        fig["problem_samples"] = soak.problems[:10]
        out["soak"] = fig
        failed |= bool(soak.problems)
    if args.only in (None, "load"):
        root = make_corpus(work / "load" / "ws", files=args.files)
        t0 = time.monotonic()
        out["load_1_client"] = concurrent_searches(root, clients=1, rounds=args.rounds, embedding=args.embedding)
        out["load_4_clients"] = concurrent_searches(root, clients=4, rounds=args.rounds, embedding=args.embedding)
        out["load_rss"] = memory_over_calls(
            root, calls=args.load_calls, embedding=args.embedding, warmup=min(1000, args.load_calls // 5)
        )
        out["load_seconds"] = round(time.monotonic() - t0, 1)
        failed |= any(out[k]["errors"] for k in ("load_1_client", "load_4_clients", "load_rss"))
    out["load_average_end"] = os.getloadavg()
    out["work_dir"] = str(work) if args.keep else None
    print(json.dumps(out, indent=2, ensure_ascii=False))
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
