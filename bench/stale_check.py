"""What catching stale notes costs (issue 26, 3): the dream's check of N project digest nodes against a
working tree (first run: every node newly marked, a note-service write each; second run: checks only,
nothing changed) and the SessionStart brief with its own cheap check of the nodes it lists.

    .venv/bin/python bench/stale_check.py [--nodes 300] [--runs 5] [--work /tmp/reme-bench/stale]

Each node cites one file that exists (with a symbol), one that does not, and a make target."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path


def main() -> None:
    from reme_cc.base.config import Config
    from reme_cc.base.workspace import Workspace
    from reme_cc.memory import brief, dream, gitlog, stale
    from reme_cc.tools import Context

    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--work", default="/tmp/reme-bench/stale")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    root = work / "app"
    (root / ".git").mkdir(parents=True)
    for i in range(args.nodes):
        (root / "src" / f"m{i}").mkdir(parents=True)
        (root / "src" / f"m{i}" / "mod.py").write_text(f"def f{i}(): pass\n")
    (root / "Makefile").write_text("check:\n\ttrue\n")
    ws = Workspace(work / "ws")
    card = "daily/2026-06-20/c.md"
    ws.write_text(card, f"---\nname: c\ndescription: c\nproject: app\nproject_root: {root}\n---\nx\n")
    for i in range(args.nodes):
        ws.write_text(
            f"digest/wiki/n{i}.md",
            f"---\nname: app node {i}\ndescription: d\nproject: app\n---\n"
            f"See `src/m{i}/mod.py::f{i}`, src/m{i}/gone.py and `make check`.\n\n## Sources\n- [[{card}]]\n",
        )
    ctx = Context(ws, Config.load(ws.root))
    ctx.index.sync()
    d = dream.DreamContext(ws, ctx.config, recorder=gitlog.ChangeRecorder(ws), day="2026-06-21")
    d._index = ctx.index
    runs = []
    for _ in range(args.runs):  # the first runs mark (writes, bounded by CHECK_SECONDS), the last only check
        t = time.monotonic()
        marked = stale.mark_stale(d, "2026-06-21")
        runs.append((time.monotonic() - t, len(marked)))
    t = time.monotonic()
    for _ in range(20):
        brief.build_brief(ws, Config(), cwd=str(root), today="2026-06-21")
    per_brief = (time.monotonic() - t) / 20
    shown = ", ".join(f"{s:.2f} s ({n} stale)" for s, n in runs)
    print(f"nodes {args.nodes}: dream check runs {shown}; build_brief {per_brief * 1000:.1f} ms")
    ctx.close()


if __name__ == "__main__":
    main()
