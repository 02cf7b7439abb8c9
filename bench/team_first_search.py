"""The first search in a repository whose team memory (.reme/) holds many small notes (issue 21 item 10).

    python bench/team_first_search.py [--notes 20000] [--workdir /tmp/reme-bench-team] [--runs 3]

Builds (once) a personal workspace with one note and a git repository whose ``.reme/daily/`` holds
``--notes`` small notes, then per run, in a fresh process state (new Context, the team index wiped):
the latency of the first ``search`` (the tool's own call, as the MCP server makes it), whether its
answer carried the personal hit, what it said about the team memory, and -- when the code indexes the
team in the background -- seconds until the team memory is fully indexed. Prints one JSON object;
wall times on a shared 2-core machine are noisy, so the load average is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def build(work: Path, notes: int) -> tuple[Path, Path]:
    ws, repo = work / "ws", work / "repo"
    marker = work / f".built-{notes}"
    if marker.exists():
        return ws, repo
    shutil.rmtree(work, ignore_errors=True)
    (ws / "digest" / "personal").mkdir(parents=True)
    (ws / "digest" / "personal" / "pref.md").write_text(
        "---\nname: pref\ndescription: d\n---\nThe user likes topic summaries.\n", encoding="utf-8"
    )
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    daily = repo / ".reme" / "daily" / "2026-06-20"
    daily.mkdir(parents=True)
    for i in range(notes):
        (daily / f"n{i:05d}.md").write_text(f"# note {i}\nteamword{i} about topic {i % 97}\n", encoding="utf-8")
    marker.write_text("")
    return ws, repo


def wipe_team_state(ws: Path, repo: Path) -> None:
    shutil.rmtree(repo / ".reme" / "metadata", ignore_errors=True)  # where older versions kept it
    shutil.rmtree(ws / "metadata" / "team", ignore_errors=True)  # where it lives now


def one_run(ws: Path, repo: Path, full_s: float) -> dict:
    from reme_cc.base.config import Config
    from reme_cc.tools import Context, all_tools
    from reme_cc.base.workspace import Workspace

    wipe_team_state(ws, repo)
    os.chdir(repo)
    ctx = Context(Workspace(ws), Config.load(ws))
    try:
        ctx.index.sync()  # the personal index is warm, as in a running server
        t = time.monotonic()
        res = all_tools()["search"].run(ctx, {"query": "topic summaries"})
        first = time.monotonic() - t
        row = {
            "first_search_s": round(first, 2),
            "personal_hit_first": bool(res.results) and res.results[0].path == "digest/personal/pref.md",
            "team_note": next((w for w in res.warnings if "team memory" in w), None),
        }
        from reme_cc.tools.recall_scope import team_context

        team, _ = team_context(ctx)
        indexing = getattr(team.index, "indexing", None)
        if indexing is not None:
            deadline = time.monotonic() + full_s
            while indexing() is not None and time.monotonic() < deadline:
                time.sleep(0.5)
            row["team_indexed_after_s"] = round(time.monotonic() - t, 1) if indexing() is None else None
        t = time.monotonic()
        all_tools()["search"].run(ctx, {"query": "teamword17"})
        row["next_search_s"] = round(time.monotonic() - t, 2)
        return row
    finally:
        ctx.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=20000)
    ap.add_argument("--workdir", default="/tmp/reme-bench-team")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--full-s", type=float, default=600.0, help="wait at most this long for the team indexing")
    a = ap.parse_args()
    os.environ.setdefault("REME_EMBEDDING", "none")  # the part measured is indexing, not embedding
    ws, repo = build(Path(a.workdir), a.notes)
    os.environ["REME_WORKSPACE"] = str(ws)
    rows = [one_run(ws, repo, a.full_s) for _ in range(a.runs)]
    print(json.dumps({"notes": a.notes, "load_avg": os.getloadavg(), "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
