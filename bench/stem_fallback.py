"""What the standard-library fallback of the English stems loses (index/terms.py, issue 25 item 3).

A process without the ``snowballstemmer`` package (a hook run with ``python3 -S``) finds a query
word's stored form as the longest of its candidate forms that the index holds (terms.stored_form).
For every English query word of each retrieval set, against that set's stored vocabulary:

  same      the fallback gives the stem (or both match nothing)
  missed    the stem is in the index, the fallback found another form or none
  wrong     the stem is not in the index but the fallback matched some other stored term

    .venv/bin/python bench/stem_fallback.py [--sets cards,xling,...] [--longmemeval /work/bench-venv]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from reme_cc.index import keyword, terms  # noqa: E402
from retrieval import load_set  # noqa: E402


def measure(files: dict[str, str], queries: list[tuple[str, set[str]]]) -> dict[str, float]:
    vocab = {t for text in files.values() for t in keyword.tokens(text)}
    counts = {"same": 0, "missed": 0, "wrong": 0}
    words = [w for q, _ in queries for w in terms.english_words(q)]
    for w in words:
        stem = terms.store_form(w, keyword.stem)
        got = terms.stored_form(w, vocab.__contains__)
        if got == stem or (stem not in vocab and got not in vocab):
            counts["same"] += 1
        elif stem in vocab:
            counts["missed"] += 1
        else:
            counts["wrong"] += 1
    n = max(1, len(words))
    return {"query words": len(words), **{k: round(v / n, 4) for k, v in counts.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="lme,identifiers,xling,cards,integrator")
    ap.add_argument("--longmemeval", default=os.environ.get("REME_LONGMEMEVAL", "/work/bench-venv"))
    a = ap.parse_args()
    print("| set | query words | same | missed | wrong |")
    print("|---|---|---|---|---|")
    for name in a.sets.split(","):
        try:
            files, queries = load_set(name, a.longmemeval)
        except FileNotFoundError as exc:
            print(f"| {name} | skipped: {exc} | | | |")
            continue
        m = measure(files, queries)
        print(f"| {name} | {m['query words']} | {m['same']:.3f} | {m['missed']:.3f} | {m['wrong']:.3f} |")


if __name__ == "__main__":
    main()
