"""A folder with 100k files (issue 15's bad-input row), as a user's agent sees it through a real MCP server.

    python bench/big_folder.py [--files 100000] [--workdir /tmp/reme-bench]

Builds (once) a workspace whose ``resource/big/`` holds ``--files`` small notes next to a few ordinary
cards, then, with a keyword-only server (the part measured is freshness and indexing, not embedding):

* ``cold``: a server on the never-indexed workspace: when `tools/list` and the first `search` are
  answered, the search latency while the files are indexed in the background, seconds until every
  file is catalogued and searchable, the server's peak RSS;
* ``warm``: a new server on the indexed workspace: first search after spawn, spaced (1.1 s) and
  back-to-back searches, idle RSS, the freshness line of `status`;
* ``hand_edit``: one file in the big folder edited outside reme: seconds until `search` finds it;
* ``walk_ms``: the stat walk of the whole workspace (the fallback when notifications are off or
  overflow, and the 5-minute safety net), in-process.

Prints one JSON object. Wall times on a shared 2-core machine are noisy: the load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from agent_view import Server, proc_mem, stats  # noqa: E402

CARDS = {
    "daily/2026-06-20/deploy.md": "---\nname: deploy\ndescription: how we deploy\n---\nDeploy with `make ship`.\n",
    "digest/procedure/tests.md": "---\nname: tests\ndescription: running tests\n---\nRun `pytest -x` first.\n",
}


def build(root: Path, n: int) -> float:
    t = time.monotonic()
    big = root / "resource" / "big"
    big.mkdir(parents=True)
    for rel, text in CARDS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for i in range(n):
        (big / f"item-{i:06d}.md").write_text(
            f"# item {i}\nbigword{i} is about topic {i % 97} of the archive\n", encoding="utf-8"
        )
    return round(time.monotonic() - t, 1)


def catalogued(srv: Server) -> int:
    status = srv.call("status", {})
    return next((int(l.split()[1]) for l in status.splitlines() if l.startswith("files:")), -1)


def cold(root: Path, n: int, limit_s: float) -> dict:
    srv = Server(root, "none")
    ms, _ = srv.search("make ship")
    out = {"tools_listed_s": round(srv.listed_s, 2), "first_search_s": round(srv.listed_s + ms / 1000, 2)}
    lat, done_at, peak = [], None, 0.0
    last = f"bigword{n - 1}"
    while time.monotonic() - srv.t0 < limit_s:
        ms, text = srv.search(last, limit=1)
        lat.append(ms)
        peak = max(peak, proc_mem(srv.mcp.proc.pid)["hwm_mb"])
        if "item-" in text and catalogued(srv) >= n + len(CARDS):
            done_at = time.monotonic() - srv.t0
            break
        time.sleep(1.0)
    out.update(
        {
            "all_indexed_after_s": round(done_at, 1) if done_at else None,
            "search_ms_while_indexing": stats(lat),
            "peak_rss_mb": peak,
        }
    )
    srv.close()
    return out


def warm(root: Path, spaced: int) -> dict:
    srv = Server(root, "none")
    ms, _ = srv.search("make ship")
    out: dict = {"first_search_s": round(srv.listed_s + ms / 1000, 2)}
    qs = [f"bigword{i * 997} archive" for i in range(spaced)]
    gap = []
    for q in qs:
        time.sleep(1.1)
        gap.append(srv.search(q)[0])
    b2b = [srv.search(q)[0] for q in qs]
    out.update(
        {
            "spaced_ms": stats(gap),
            "back_to_back_ms": stats(b2b),
            "spaced_over_back_to_back_p50": round(stats(gap)["p50"] / stats(b2b)["p50"], 2),
        }
    )
    time.sleep(3)
    out["idle"] = proc_mem(srv.mcp.proc.pid)
    out["freshness"] = next((l for l in srv.call("status", {}).splitlines() if l.startswith("freshness")), None)
    # a hand edit deep in the big folder
    target = root / "resource" / "big" / "item-000500.md"
    word = f"handedit{int(time.time())}"
    t = time.monotonic()
    target.write_text(f"# item 500\n{word} was written by hand\n", encoding="utf-8")
    found = None
    while time.monotonic() - t < 30:
        ms, text = srv.search(word, limit=1)
        if "item-000500" in text:
            found = {"seconds": round(time.monotonic() - t, 2), "search_ms": round(ms, 1)}
            break
        time.sleep(0.05)
    out["hand_edit"] = found
    srv.close()
    return out


def walk_ms(root: Path, runs: int = 5) -> dict:
    from reme_cc.index.sync import walk

    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        files = walk(root)
        ts.append((time.perf_counter() - t) * 1000)
    return {"files": len(files), **stats(ts)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--workdir", default="/tmp/reme-bench")
    ap.add_argument("--spaced", type=int, default=10)
    ap.add_argument("--limit-s", type=float, default=1800.0, help="give up waiting for the cold index after this")
    a = ap.parse_args()
    root = Path(a.workdir) / f"ws-bigfolder-{a.files}"
    fig: dict = {"workspace": str(root), "load_avg_start": round(os.getloadavg()[0], 2)}
    if root.exists():
        shutil.rmtree(root)  # the cold part needs a never-indexed workspace
    fig["build_files_s"] = build(root, a.files)
    fig["cold"] = cold(root, a.files, a.limit_s)
    print(json.dumps(fig), file=sys.stderr, flush=True)  # partial figures, in case a later part fails
    fig["warm"] = warm(root, a.spaced)
    fig["walk_ms"] = walk_ms(root)
    fig["load_avg_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
