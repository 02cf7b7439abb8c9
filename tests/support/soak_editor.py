"""The "editor" of the soak test: a plain process that writes notes straight to disk, as a user's editor
(or Obsidian, or a sync tool) would, never through reme. Prints one JSON line per finished write.

    python soak_editor.py WORKSPACE SECONDS DATE SEED

Half of the writes are in place and slow (truncate, first half, pause, second half: an indexer may see
the half-written file), half are atomic (temp file + rename). Exits 0 when the time is up.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time


def note(n: int, rev: int, pins: list[str]) -> str:
    links = " ".join(f"[[{p}]]" for p in pins)
    return (
        f"---\nname: Editor note {n}\ndescription: typed by hand in an editor, revision {rev}\n---\n"
        f"# Editor note {n}\n\nToken editortok{n}x{rev} about release checklists and hook timeouts.\n\n"
        f"See {links} and [[digest/wiki/soak-seed-0.md]].\n"
    )


def main(argv: list[str]) -> int:
    root, seconds, date, seed = argv[0], float(argv[1]), argv[2], int(argv[3])
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    files: dict[str, int] = {}
    n = 0
    while time.monotonic() < deadline:
        if files and rng.random() < 0.4:
            rel = rng.choice(sorted(files))
            files[rel] += 1
        else:
            rel = f"daily/{date}/editor-{n}.md"
            n += 1
            files[rel] = 0
        num = int(rel.rsplit("-", 1)[1][:-3])
        # links to the servers' pinned notes, some of which may not exist yet (they resolve later)
        pins = [f"daily/2020-01-0{s + 1}/s{s}-pin{rng.randint(0, 3)}.md" for s in rng.sample(range(4), 2)]
        text = note(num, files[rel], pins)
        full = os.path.join(root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = text.encode("utf-8")
        if rng.random() < 0.5:
            with open(full, "wb") as fh:  # in place, slowly: truncate, half, pause, rest
                fh.write(data[: len(data) // 2])
                fh.flush()
                time.sleep(0.01)
                fh.write(data[len(data) // 2 :])
        else:
            tmp = os.path.join(os.path.dirname(full), f".editor-{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, full)
        print(json.dumps({"path": rel, "content": text}), flush=True)
        time.sleep(rng.uniform(0.05, 0.2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
