"""reme-ai (the seeds' own implementation, PyPI `reme-ai`) on the same workspace and queries, BM25 mode.

Runs in its OWN venv (never the project's): /work/bench-venv/bin/python bench/remeai_side.py WS QUERIES.json
(``--rounds-on-stdin``: after the build, one timed pass of the queries per line read, its latencies
printed as a JSON line, so bench/agent_view.py can interleave its passes with ours.)
bench/run.py calls it in the same run on the same corpus. It copies the workspace's daily/ and digest/
(reme-ai writes its own metadata/ into the workspace it is given), builds reme-ai's application from its
packaged default config with the embedding store off (= BM25 mode, regex tokenizer, markdown chunker),
times its `index_update` (full index build of daily/ + digest/) and its `search` job (limit 5,
candidate multiplier 5, link expansion on — the same contract as ours), and prints one JSON object.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


async def timed_searches(app, queries: list[str]) -> tuple[list[float], list[int]]:
    """Its `search` job (limit 5) on each query: ms per query, hits per query."""
    lat, hits = [], []
    for q in queries:
        t = time.perf_counter()
        resp = await app.run_job("search", query=q, limit=5)
        lat.append((time.perf_counter() - t) * 1000)
        hits.append(len((getattr(resp, "metadata", {}) or {}).get("results", [])))
    return lat, hits


async def main(src: Path, queries: list[str], work: Path, rounds_on_stdin: bool = False) -> dict:
    import reme
    from reme import ReMe
    from reme.config.config_parser import _load_config

    ws = work / "ws"
    if ws.exists():
        shutil.rmtree(ws)
    t = time.perf_counter()
    for layer in ("daily", "digest"):
        shutil.copytree(src / layer, ws / layer)
    copy_s = time.perf_counter() - t

    default = _load_config("default")
    bench = _load_config("benchmark")
    cfg = {
        "workspace_dir": str(ws),
        "enable_logo": False,
        "log_to_console": False,
        "log_to_file": False,
        "service": copy.deepcopy(default["service"]),
        "jobs": {
            "index_update": copy.deepcopy(bench["jobs"]["index_update"]),
            "search": copy.deepcopy(default["jobs"]["search"]),
        },
        "components": {
            k: copy.deepcopy(default["components"][k])
            for k in (
                "tokenizer",
                "file_graph",
                "file_catalog",
                "file_chunker",
                "keyword_index",
                "tag_index",
                "file_store",
            )
        },
    }
    cfg["jobs"]["index_update"]["watch_dirs"] = ["daily_dir", "digest_dir"]
    cfg["components"]["file_store"]["default"]["embedding_store"] = ""  # BM25 mode
    app = ReMe(**cfg)
    out: dict = {"reme_ai_version": reme.__version__, "copy_s": round(copy_s, 2)}
    t = time.perf_counter()
    await app.start()
    out["start_s"] = round(time.perf_counter() - t, 2)
    t, c = time.perf_counter(), time.process_time()
    r = await app.run_job("index_update")
    out["index_build_s"] = round(time.perf_counter() - t, 2)
    out["index_build_cpu_s"] = round(time.process_time() - c, 2)
    store = app.context.components["file_store"]["default"]
    out["chunks"] = len(getattr(store, "file_chunks", {}) or {})
    out["bm25_docs"] = int(getattr(store.keyword_index, "n_docs", -1))
    out["index_update_ok"] = bool(getattr(r, "success", True))
    # warm-up, then the timed queries
    first = await app.run_job("search", query=queries[0], limit=5)
    out["sample_answer_head"] = str(getattr(first, "answer", ""))[:3000]
    if rounds_on_stdin:  # one pass of the timed queries per "go" line, its latencies printed (agent_view.py)
        print(json.dumps({"ready": True, "index_build_s": out["index_build_s"]}), flush=True)
        for _line in sys.stdin:
            lat, _hits = await timed_searches(app, queries)
            print(json.dumps({"search_ms": lat}), flush=True)
        await app.close()
        return out
    lat, hits = await timed_searches(app, queries)
    out["search_ms"] = {
        "p50": round(pct(lat, 0.5), 1),
        "p95": round(pct(lat, 0.95), 1),
        "mean": round(statistics.mean(lat), 1),
        "n": len(lat),
    }
    out["mean_hits"] = round(statistics.mean(hits), 2)
    # the bare BM25 retrieve of its keyword index, no step/render/expansion (its floor)
    kw = store.keyword_index
    bare = []
    for q in queries:
        t = time.perf_counter()
        await kw.retrieve(q, limit=25)
        bare.append((time.perf_counter() - t) * 1000)
    out["bm25_retrieve_ms"] = {"p50": round(pct(bare, 0.5), 3), "p95": round(pct(bare, 0.95), 3)}
    # the same BM25 retrieve over OUR chunks (reme-ai's chunker keeps ~1 chunk per generated file, ours
    # ~5): its keyword index refilled with the chunk texts of our index, so both score the same documents
    db = src / "metadata" / "index.sqlite"
    if db.exists():
        import sqlite3

        conn = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
        docs = {str(i): t for i, t in conn.execute("SELECT id, text FROM chunks")}
        conn.close()
        await kw.clear()
        t = time.perf_counter()
        await kw.add_docs(docs)
        out["same_chunks_add_docs_s"] = round(time.perf_counter() - t, 2)
        out["same_chunks_docs"] = int(kw.n_docs)
        same = []
        for q in queries:
            t = time.perf_counter()
            await kw.retrieve(q, limit=25)
            same.append((time.perf_counter() - t) * 1000)
        out["bm25_retrieve_same_chunks_ms"] = {"p50": round(pct(same, 0.5), 3), "p95": round(pct(same, 0.95), 3)}
    out["rss_mb"] = round(rss_mb(), 1)
    await app.close()
    return out


if __name__ == "__main__":
    src, qfile = Path(sys.argv[1]), Path(sys.argv[2])
    queries = json.loads(qfile.read_text(encoding="utf-8"))
    stdin_rounds = "--rounds-on-stdin" in sys.argv[3:]
    with tempfile.TemporaryDirectory(prefix="remeai-bench-") as tmp:
        result = asyncio.run(main(src, queries, Path(tmp), stdin_rounds))
        if not stdin_rounds:
            print(json.dumps(result, ensure_ascii=False))
