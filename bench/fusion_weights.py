"""How much the default fusion should trust its vector half, per set and coverage: R@5 of the MCP
search call (limit 5, one hit per note) with the vector weight lowered from the default's 0.5, and, at
full coverage, the questions the vector half helps or hurts (against the same rule with weight 0) with
the per-query signals that might tell them apart (means per group). Each question's recall is made once
per coverage and re-fused per weight.

    nice -n 10 .venv/bin/python bench/fusion_weights.py --sets locomo          # ~6 min with cached vectors
    .venv/bin/python bench/fusion_weights.py --sets temporal,bilingual-en-zh --weights 0.5,0.3
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval import folder_of, load_set, score, set_index, subset, today_of  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.index.search import FUSIONS, run_search  # noqa: E402


def remembered(idx):
    """idx.recall made once per arguments (the recall does not depend on the fusion's weights)."""
    made: dict = {}
    recall = idx.recall

    def once(*args, **kw):
        key = (args, tuple(sorted((k, repr(v)) for k, v in kw.items())))
        if key not in made:
            made[key] = recall(*args, **kw)
        rec = made[key]
        return dataclasses.replace(rec, paths=dict(rec.paths), warnings=list(rec.warnings))  # search adds to both

    idx.recall = once
    return made


def notes_found(idx, queries, rule) -> list[list[str]]:
    out = []
    for q in queries:
        hits = run_search(idx, q[0], 5, expand=False, folder=folder_of(q, None), today=today_of(q), fusion=rule)
        out.append(list(dict.fromkeys(h.path for h in hits.results)))
    return out


def signals(idx, q) -> dict[str, float]:
    """What the two halves' own lists say about one question (read from the remembered recall)."""
    rule = FUSIONS["scripts"]
    rec = idx.recall(q[0], 25, None, None, ("vector", "keyword"), folder_of(q, None),
                     notes=True, rare=rule.rare, scripts=rule.foreign, only=None)  # fmt: skip
    kw, vec = [s for _, s in rec.keyword], [s for _, s in rec.vector]

    def first(hits):
        return next((rec.paths.get(c) for c, _ in hits if c in rec.paths), None)

    return {
        "BM25 top / second": kw[0] / kw[1] if len(kw) > 1 and kw[1] else 1.0,
        "vector top - median": vec[0] - statistics.median(vec) if vec else 0.0,
        "both halves' first note the same": float(first(rec.keyword) == first(rec.vector) is not None),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="locomo")
    ap.add_argument("--weights", default="0.5,0.4,0.3,0.2")
    ap.add_argument("--coverages", default="10,50,100")
    ap.add_argument("--longmemeval", default="")
    a = ap.parse_args()
    weights = [float(w) for w in a.weights.split(",")]
    default = FUSIONS["scripts"]
    for name in a.sets.split(","):
        files, queries = load_set(name, a.longmemeval)
        with set_index(files, Config().replace(embedding="auto"), print) as (idx, _ws, chunks, vectors):
            print(f"\n{name}: {len(files)} notes, {len(queries)} questions; R@5 of the MCP call (limit 5)")
            print("| coverage | keyword only | " + " | ".join(f"vector weight {w}" for w in weights) + " |")
            for cov in [int(c) for c in a.coverages.split(",")]:
                idx.__dict__.pop("recall", None)
                idx.set_embeddings({h: vectors[h] for h in subset(sorted(chunks), cov)})
                remembered(idx)
                row = [score(notes_found(idx, queries, rule_of(default, w)), queries)["R@5"] for w in weights]
                kw_only = [
                    [h.path for h in run_search(idx, q[0], 5, expand=False, folder=folder_of(q, None),
                                                today=today_of(q), modes=("keyword",), fusion="rrf").results]
                    for q in queries
                ]  # fmt: skip
                keyword = score(kw_only, queries)
                print(f"| {cov} % | {keyword['R@5']:.3f} | " + " | ".join(f"{r:.3f}" for r in row) + " |")
            with_vectors = notes_found(idx, queries, default)
            without = notes_found(idx, queries, rule_of(default, 0.0))
            groups: dict[str, list[dict]] = {"helps": [], "hurts": [], "same": []}
            for q, got, alone in zip(queries, with_vectors, without):
                hit, hit_alone = len(q[1] & set(got[:5])), len(q[1] & set(alone[:5]))
                groups["helps" if hit > hit_alone else "hurts" if hit < hit_alone else "same"].append(signals(idx, q))
            print(f"at {cov} %, the vector half (weight {default.vector_weight} against 0) "
                  + ", ".join(f"{k} {len(v)}" for k, v in groups.items()))  # fmt: skip
            for signal in signals(idx, queries[0]):
                means = {k: statistics.mean(s[signal] for s in v) if v else float("nan") for k, v in groups.items()}
                print(f"  {signal}: " + ", ".join(f"{k} {m:.3f}" for k, m in means.items()))


def rule_of(default, w: float):
    return dataclasses.replace(default, vector_weight=w, keyword_weight=1.0 - w)


if __name__ == "__main__":
    main()
