"""In-memory numpy BM25 vs FTS5's bm25() on a benchmark workspace: identical answers, and the time of each.

    python bench/bm25_check.py [--files 10000 --scale 2] [--queries 200] [--workdir /tmp/reme-bench]

Builds the numpy index from the workspace's index (run.py or latency.py --prepare leave one), then runs
the same queries (limit 25 and limit 5 within a date range) through keyword.search_chunks (FTS5) and
BM25Index.search (numpy) and compares the (chunk id, score) lists exactly: ids, order and float scores.
Prints build/load times, mismatches (must be 0), p50/p95 of each and the in-memory index size.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import pct, queries_for, workspace_args  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.index import Index, keyword, rss_mb  # noqa: E402
from reme_cc.base.workspace import Workspace  # noqa: E402


def main() -> None:
    ap, root_of = workspace_args()
    a = ap.parse_args()
    root = root_of(a)
    idx = Index(Workspace(root), Config().replace(embedding="none"))
    bm = idx.keywords.bm25
    fig: dict = {"workspace": str(root)}
    r0 = rss_mb()
    bm.build(use_snapshot=False, save=False)
    fig["build"] = bm.last_build
    fig["rss_mb_added_by_build"] = round(rss_mb() - r0, 1)
    bm.build(use_snapshot=True, save=False)
    fig["load"] = bm.last_build
    seg = bm.state.segments[0]
    fig["postings"] = int(len(seg.docs))
    fig["array_mb"] = round(
        sum(
            x.nbytes
            for x in (
                seg.ids,
                seg.doclen,
                seg.indptr,
                seg.docs,
                seg.tf,
                seg.start,
                seg.path_idx,
                seg.date_idx,
                seg.live,
            )
        )
        / 1e6,
        1,
    )
    fts_ms, np_ms, bad, fallback = [], [], 0, 0
    for q in queries_for(a.queries):
        for k, sd, ed in ((25, None, None), (5, "2026-01-01", "2026-03-31")):
            t = time.perf_counter()
            want = idx.read(lambda c: keyword.search_chunks(c, q, k, sd, ed))
            fts_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            got = idx.read(lambda c: bm.search(c, q, k, sd, ed))
            np_ms.append((time.perf_counter() - t) * 1000)
            if got is None:
                fallback += 1
            elif got != want:
                bad += 1
    fig["compared"] = len(fts_ms)
    fig["mismatches"] = bad
    fig["fts5_fallbacks"] = fallback
    fig["fts5_ms"] = {"p50": pct(fts_ms, 0.5), "p95": pct(fts_ms, 0.95)}
    fig["numpy_ms"] = {"p50": pct(np_ms, 0.5), "p95": pct(np_ms, 0.95)}
    idx.close()
    print(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
