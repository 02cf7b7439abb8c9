"""Many processes on one workspace (issue #7 item 1), shared by tests/test_reliability_soak.py (CI: 10 s)
and bench/soak.py (by hand: 60 s).

    soak = Soak(tmp_path, seconds=10)
    figures = soak.run()          # starts everything, waits, checks; never raises for a finding
    assert not soak.problems, "\\n".join(soak.problems)

Processes, all on the same workspace, all real:

* ``servers`` stdio MCP servers (``reme-cc mcp``), each driven by one client thread of ours through
  tests/support/mcp_stdio.py: write / edit / move of its own notes under ``daily/2020-01-0<i>/``,
  searches for tokens other servers wrote 3+ s earlier (freshness across processes). Links point at
  its own notes, at seed nodes and at other servers' "pinned" notes (never moved; some are linked
  before they exist, so their resolution must flip from missing to exact in every process's index).
* ``hooks`` Claude Code sessions: a growing transcript file each, and after every turn a real
  ``python3 hooks/reme_hook.py Stop`` process with the hook payload. ``record`` is ON: the hook
  starts detached recorders (``reme-cc auto-memory``) with the anthropic backend pointed at the
  fake API, which answers with a ``daily_write`` card.
* 1 dream loop: ``reme-cc dream`` processes one after another (sdk backend = the real bundled Claude
  CLI, scripted fake API: one unit per changed daily file, one created digest node per unit).
* 1 editor: tests/support/soak_editor.py writing daily notes straight to disk (in place and slow, or
  atomic rename).

Afterwards: every successful write is on disk with its content, every process exited with rc 0,
the index equals a fresh ``reindex`` of a copy of the workspace (files, chunks, FTS tokens, links,
node names, search results of a fixed query set), no process of the run is left, and every lock file
under metadata/ can be taken at once.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.claude_cli import kill_leftovers, leftover_processes, sdk_env
from support.dream_script import T, coordinator, first_user_text, node_md
from support.fake_api import (
    FakeAPI,
    Reply,
    Request,
    all_of,
    has_tool,
    is_main,
    is_subagent,
    system_contains,
    text,
    tool_use,
)
from support.mcp_stdio import McpProcess

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "reme_hook.py"
EDITOR = Path(__file__).with_name("soak_editor.py")
SEED_NODES = 6
QUERIES = [
    "soak seed release checklist",
    "hook timeouts",
    "editor note",
    "dream body",
    "wikilink rewriting",
    "server note token",
    "sqlite locking",
    "session card",
    "key rotation vault",
    "revision",
]
# Work every server does at the least, however slow the machine: the loop runs past its deadline until
# these are done (within OVERTIME), so the test's "it really did concurrent work" check does not hang on load.
MIN_SERVER_OPS = {"write": 2, "edit": 1, "move": 1, "delete": 1, "search": 1}
OVERTIME = 240.0
FRESH_AFTER = 3.0  # seconds after which another process's write must be searchable (design: 1-2 s)


def mcp_argv() -> list[str]:
    exe = Path(sys.executable).with_name("reme-cc")
    return [str(exe), "mcp"] if exe.exists() else [sys.executable, "-m", "reme_cc", "mcp"]


def reme_argv(*args: str) -> list[str]:
    exe = Path(sys.executable).with_name("reme-cc")
    return [str(exe), *args] if exe.exists() else [sys.executable, "-m", "reme_cc", *args]


def system_python() -> str:
    """Hooks run with the system python3 in real use (stdlib only)."""
    return shutil.which("python3", path="/usr/bin:/bin") or sys.executable


def p95(values: list[float]) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


@dataclass
class ServerStats:
    ops: dict[str, int] = field(default_factory=lambda: {"write": 0, "edit": 0, "move": 0, "delete": 0, "search": 0})
    latencies: list[float] = field(default_factory=list)
    fresh_checks: int = 0


class Soak:
    def __init__(
        self,
        base: Path,
        seconds: float = 10.0,
        *,
        servers: int = 4,
        hooks: int = 2,
        dream: bool = True,
        editor: bool = True,
        seed: int = 7,
        embedding: str = "none",
    ):
        self.base = Path(base)
        self.root = self.base / "ws"
        self.seconds = seconds
        self.n_servers, self.n_hooks, self.with_dream, self.with_editor = servers, hooks, dream, editor
        self.seed = seed
        self.embedding = embedding
        self.run_id = uuid.uuid4().hex
        self.today = dt.date.today().isoformat()
        self.problems: list[str] = []
        self.figures: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.expected: dict[str, str] = {}  # path -> exact content (servers, editor)
        self.contains: dict[str, list[str]] = {}  # path -> texts it must contain (dream nodes)
        self.tokens: dict[str, float] = {}  # search token -> time its write returned
        self.pins_made: set[str] = set()
        self.exposed: list[str] = []  # notes other servers link to; only ever deleted
        self.deleted: set[str] = set()  # deleted successfully: must stay gone
        self.sessions: dict[str, tuple[Path, list[str]]] = {}
        self.process_seconds = 0.0
        self.processes_started = 0
        self.dream_nodes: dict[str, tuple[str, str, list[str]]] = {}  # unit name -> (path, body, sources)
        self._unit_no = 0

    # ---- helpers ---------------------------------------------------------------------------------
    def problem(self, msg: str) -> None:
        with self._lock:
            self.problems.append(msg)

    def count_process(self, seconds: float) -> None:
        with self._lock:
            self.processes_started += 1
            self.process_seconds += seconds

    def env(self, api: FakeAPI, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE", "ANTHROPIC", "REME_")) and k != "PYTEST_CURRENT_TEST"
        }
        env.update(sdk_env(api, self.base / "home"))
        env.update(
            {
                "REME_WORKSPACE": str(self.root),
                "REME_EMBEDDING": self.embedding,
                "REME_TEST_RUN": self.run_id,
                "REME_AUTO_DREAM": "false",
                "REME_LOG_LEVEL": "WARNING",
                "REME_AGENT_RETRIES": "0",
                "REME_PYTHON": sys.executable,
            }
        )
        env.update(extra)
        return env

    # ---- seed ------------------------------------------------------------------------------------
    def seed_workspace(self) -> None:
        from reme_cc.base.workspace import Workspace

        ws = Workspace(self.root)
        for k in range(SEED_NODES):
            ws.write_text(
                f"daily/2020-01-20/seed-card-{k}.md",
                f"---\nname: Seed card {k}\ndescription: where seed {k} came from\n---\n"
                f"The team wrote the release checklist {k} and discussed sqlite locking.\n",
            )
            ws.write_text(
                f"digest/wiki/soak-seed-{k}.md",
                node_md(
                    f"Soak seed {k}",
                    f"seed node {k}",
                    f"Seed node {k} about the release checklist, key rotation with the vault, wikilink rewriting. "
                    f"Next: [[digest/wiki/soak-seed-{(k + 1) % SEED_NODES}.md]].",
                    [f"daily/2020-01-20/seed-card-{k}.md"],
                ),
            )
        for k in range(SEED_NODES):
            for rel in (f"daily/2020-01-20/seed-card-{k}.md", f"digest/wiki/soak-seed-{k}.md"):
                self.expected[rel] = (self.root / rel).read_text()

    # ---- fake API: recorder + dream ----------------------------------------------------------------
    def script_api(self, api: FakeAPI) -> None:
        def recorder(req: Request) -> Reply:
            if req.tool_results(last_only=True):
                return text("Recorded.")
            m = re.search(r"hooktok(\d+)x", req.last_user_text)
            name = f"Soak session {m.group(1) if m else 'x'}"
            return tool_use(
                "daily_write",
                {
                    "name": name,
                    "description": "a soak test session",
                    "content": "## What happened\n- Many turns of the soak test.\n",
                },
            )

        def extractor(req: Request) -> Reply:
            changed = re.findall(r"^### (daily/\S+)$", req.last_user_text, re.M)
            units = []
            for rel in changed[:3]:
                with self._lock:
                    self._unit_no += 1
                    k = self._unit_no
                units.append(
                    {
                        "name": f"Soak dream unit {k}",
                        "bucket": "wiki",
                        "summary": f"What {rel} says about release checklists.",
                        "paths": [rel],
                    }
                )
            return text("```json\n" + json.dumps({"units": units, "topics": []}) + "\n```")

        def integrator(req: Request) -> Reply:
            first = first_user_text(req)
            m = re.search(r"^Name: Soak dream unit (\d+)$", first, re.M)
            if not m:
                return text('{"action": null, "error": "not a soak unit"}')
            k = int(m.group(1))
            sources = re.findall(r"^- \[\[(daily/[^\]]+)\]\]$", first, re.M)
            path, body = f"digest/wiki/soak-dream-{k}.md", f"Dream body {k}: soakdream{k} distilled from the cards."
            with self._lock:
                self.dream_nodes[f"Soak dream unit {k}"] = (path, body, sources)
            turn = sum(1 for msg in req.messages if msg.get("role") == "assistant")
            plan = [
                tool_use(
                    T + "write",
                    {"path": path, "content": node_md(f"Soak dream unit {k}", "from the dream", body, sources)},
                ),
                text("Done.\n" + json.dumps({"action": "CREATE", "path": path, "related": []})),
            ]
            return plan[min(turn, len(plan) - 1)]

        api.rule(has_tool("daily_write"), recorder)
        api.rule(all_of(is_main, system_contains("**Extract** phase")), extractor)
        api.rule(all_of(is_main, system_contains("You coordinate ReMe's dream")), coordinator)
        api.rule(all_of(is_subagent, system_contains("**Integrate** phase")), integrator)
        api.default = text("OK")

    # ---- MCP server clients -----------------------------------------------------------------------
    def server_client(self, i: int, srv: McpProcess, deadline: float, stats: ServerStats) -> None:
        rng = random.Random(self.seed * 100 + i)
        folder = f"daily/2020-01-0{i + 1}"
        own: dict[str, str] = {}  # what this server wrote last, by current path
        pins_next = 0
        n = 0
        moves = 0

        def call(op: str, args: dict[str, Any]) -> dict[str, Any] | None:
            t0 = time.monotonic()
            try:
                res = srv.call_tool(op, args, timeout=60)
            except Exception as exc:  # noqa: BLE001 - a finding, not a crash of the harness
                self.problem(f"server {i}: {op} {args.get('path') or args.get('src') or args.get('query')}: {exc}")
                return None
            stats.latencies.append(time.monotonic() - t0)
            stats.ops[op] += 1
            if res.get("isError"):
                self.problem(f"server {i}: {op} {json.dumps(args)[:200]} failed: {McpProcess.text(res)[:400]}")
                return None
            return res

        def links_for(exclude: str) -> str:
            others = [p for p in own if p != exclude and "-pin" not in p and "-x" not in p]
            mine = rng.sample(others, min(2, len(others)))
            pin_of = rng.choice([s for s in range(self.n_servers) if s != i] or [i])
            targets = mine + [
                f"daily/2020-01-0{pin_of + 1}/s{pin_of}-pin{rng.randint(0, 3)}.md",
                f"digest/wiki/soak-seed-{rng.randrange(SEED_NODES)}.md",
            ]
            with self._lock:  # another server's exposed note: it may be deleted at any moment
                theirs = [x for x in self.exposed[-8:] if not x.startswith(f"{folder}/")]
            if theirs:
                targets.append(rng.choice(theirs))
            return " ".join(f"[[{t}]]" for t in targets)

        def busy() -> bool:
            now = time.monotonic()
            return now < deadline or (
                now < deadline + OVERTIME and any(stats.ops[op] < k for op, k in MIN_SERVER_OPS.items())
            )

        while busy():
            r = rng.random()
            movable = [p for p in own if "-pin" not in p and "-x" not in p]
            exposed = [p for p in own if "-x" in p]
            if pins_next < 4 and (n >= 2 * pins_next + 1):
                path, token = f"{folder}/s{i}-pin{pins_next}.md", f"soaks{i}pin{pins_next}"
                pins_next += 1
            elif r < 0.35 or not own:
                kind = "x" if rng.random() < 0.3 else "n"
                path, token = f"{folder}/s{i}-{kind}{n}.md", f"soaks{i}{kind}{n}"
            else:
                path, token = "", ""
            if path:
                n += 1
                content = (
                    f"# Server {i} note {path.rsplit('/', 1)[1]}\n\nToken {token} written by server {i}, "
                    f"a server note about sqlite locking.\n\nrev: r0\n\nLinks: {links_for(path)}\n"
                )
                if call("write", {"path": path, "content": content}) is not None:
                    own[path] = content
                    with self._lock:
                        if "-x" in path:  # may be deleted any time: not used for freshness checks
                            self.exposed.append(path)
                        else:
                            self.tokens[token] = time.monotonic()
                        if "-pin" in path:
                            self.pins_made.add(path)
            elif r < 0.6:
                path = rng.choice(sorted(own))
                m = re.search(r"^rev: r(\d+)$", own[path], re.M)
                assert m
                old, new = m.group(0), f"rev: r{int(m.group(1)) + 1}"
                if call("edit", {"path": path, "old_text": old, "new_text": new}) is not None:
                    own[path] = own[path].replace(old, new, 1)
            elif r < 0.75 and movable:
                src = rng.choice(sorted(movable))
                moves += 1
                dst = f"{folder}/{src.rsplit('/', 1)[1][:-3].split('-m')[0]}-m{moves}.md"
                if call("move", {"src": src, "dst": dst}) is not None:
                    own[dst] = own.pop(src)
                    for p in own:
                        own[p] = own[p].replace(f"[[{src}]]", f"[[{dst}]]")
            elif r < 0.8 and exposed:
                path = rng.choice(sorted(exposed))
                if call("delete", {"path": path}) is not None:
                    del own[path]
                    with self._lock:
                        self.deleted.add(path)
            else:
                with self._lock:
                    old_enough = [
                        t
                        for t, at in self.tokens.items()
                        if time.monotonic() - at >= FRESH_AFTER and not t.startswith(f"soaks{i}")
                    ]
                token = rng.choice(old_enough) if old_enough else rng.choice(QUERIES)
                res = call("search", {"query": token, "limit": 5})
                if res is not None and old_enough:
                    stats.fresh_checks += 1
                    if token not in McpProcess.text(res):
                        self.problem(
                            f"server {i}: search {token!r} (written by another process "
                            f"{FRESH_AFTER:.0f}+ s earlier) did not find it: {McpProcess.text(res)[:300]}"
                        )
        with self._lock:
            self.expected.update(own)

    # ---- hook sessions -----------------------------------------------------------------------------
    def hook_session(self, h: int, env: dict[str, str], deadline: float) -> None:
        sid = str(uuid.UUID(int=random.Random(self.seed * 1000 + h).getrandbits(128), version=4))
        src = self.base / "transcripts" / f"{sid}.jsonl"
        src.parent.mkdir(parents=True, exist_ok=True)
        uuids: list[str] = []
        self.sessions[sid] = (src, uuids)
        parent = None
        k = 0
        while time.monotonic() < deadline:
            lines = []
            for role in ("user", "assistant"):
                uid = str(uuid.uuid4())
                now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                content: Any = (
                    f"Turn {k} of soak session {h}: hooktok{h}x{k} please remember the release checklist."
                    if role == "user"
                    else [{"type": "text", "text": f"Noted turn {k} (hooktok{h}x{k})."}]
                )
                lines.append(
                    json.dumps(
                        {
                            "parentUuid": parent,
                            "isSidechain": False,
                            "type": role,
                            "uuid": uid,
                            "timestamp": now,
                            "sessionId": sid,
                            "cwd": str(self.base),
                            "message": {"role": role, "content": content},
                        }
                    )
                )
                parent = uid
                uuids.append(uid)
            with src.open("a", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
            k += 1
            payload = {
                "session_id": sid,
                "transcript_path": str(src),
                "hook_event_name": "Stop",
                "cwd": str(self.base),
                "stop_hook_active": False,
            }
            t0 = time.monotonic()
            proc = subprocess.run(
                [system_python(), str(HOOK), "Stop"],
                input=json.dumps(payload).encode(),
                capture_output=True,
                env=env,
                cwd=str(self.base),
                timeout=60,
            )
            self.count_process(time.monotonic() - t0)
            if proc.returncode != 0 or proc.stdout.strip():
                self.problem(
                    f"hook {h}: Stop rc={proc.returncode} stdout={proc.stdout[:200]!r} stderr={proc.stderr[-500:]!r}"
                )
            time.sleep(random.Random(k).uniform(0.1, 0.4))

    # ---- dream loop --------------------------------------------------------------------------------
    def dream_loop(self, env: dict[str, str], deadline: float) -> None:
        first = True
        while first or time.monotonic() < deadline:
            first = False
            t0 = time.monotonic()
            proc = subprocess.run(
                reme_argv("dream", "--json", "--date", self.today, "--max-units", "3"),
                capture_output=True,
                text=True,
                env=env,
                cwd=str(self.root),
                timeout=300,
            )
            self.count_process(time.monotonic() - t0)
            self.figures["dreams"] = self.figures.get("dreams", 0) + 1
            if proc.returncode != 0:
                self.problem(f"dream rc={proc.returncode}: {proc.stdout[-1500:]} {proc.stderr[-1500:]}")
                continue
            try:
                summary = json.loads(proc.stdout)
            except ValueError:
                self.problem(f"dream printed no JSON: {proc.stdout[-500:]}")
                continue
            self.figures["dream_nodes"] = self.figures.get("dream_nodes", 0) + summary.get("created", 0)
            for node in summary.get("nodes", []):
                made = self.dream_nodes.get(node.get("unit", ""))
                if made is None:
                    self.problem(f"dream reported a node nobody scripted: {node}")
                    continue
                path, body, sources = made
                self.contains[path] = [body] + [f"[[{s}]]" for s in sources]
            time.sleep(0.2)

    # ---- the run -----------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        self.seed_workspace()
        t_start = time.monotonic()
        with FakeAPI() as api:
            self.script_api(api)
            base_env = self.env(api)
            hook_env = self.env(
                api,
                REME_RECORD="true",
                REME_RECORD_MIN_MESSAGES="8",
                REME_AGENT_BACKEND="anthropic",
                REME_ANTHROPIC_API_KEY="sk-ant-fake-key",
            )
            dream_env = self.env(api, REME_AGENT_BACKEND="sdk")
            try:
                self._run_all(base_env, hook_env, dream_env)
            finally:
                kill_leftovers(self.run_id)
            self.figures["api_requests"] = len(api.messages_requests())
        self.figures["wall_seconds"] = round(time.monotonic() - t_start, 1)
        self.check_files()
        self.check_locks()
        self.check_index()
        self.figures["problems"] = len(self.problems)
        return self.figures

    def _run_all(self, base_env: dict[str, str], hook_env: dict[str, str], dream_env: dict[str, str]) -> None:
        servers = [McpProcess(mcp_argv(), env=base_env, cwd=str(self.root)) for _ in range(self.n_servers)]
        try:
            for s in servers:
                s.initialize()
            stats = [ServerStats() for _ in servers]
            deadline = time.monotonic() + self.seconds
            t0 = time.monotonic()
            editor = None
            if self.with_editor:
                editor = subprocess.Popen(
                    [sys.executable, str(EDITOR), str(self.root), str(self.seconds), self.today, str(self.seed)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=base_env,
                    text=True,
                )
            threads = [
                threading.Thread(target=self.server_client, args=(i, s, deadline, stats[i]))
                for i, s in enumerate(servers)
            ]
            threads += [
                threading.Thread(target=self.hook_session, args=(h, hook_env, deadline)) for h in range(self.n_hooks)
            ]
            if self.with_dream:
                threads.append(threading.Thread(target=self.dream_loop, args=(dream_env, deadline)))
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=self.seconds + 360)
                if t.is_alive():
                    self.problem(f"{t.name} did not finish")
            if editor is not None:
                out, err = editor.communicate(timeout=60)
                self.count_process(time.monotonic() - t0)
                if editor.returncode != 0:
                    self.problem(f"editor rc={editor.returncode}: {err[-1000:]}")
                writes = [json.loads(line) for line in out.splitlines() if line.strip()]
                for w in writes:
                    self.expected[w["path"]] = w["content"]
                self.figures["editor_writes"] = len(writes)
            # detached hook workers and recorders finish on their own
            busy = [p for p in leftover_processes(self.run_id, wait=0) if not _is_server(p[1])]
            deadline2 = time.monotonic() + 120
            while busy and time.monotonic() < deadline2:
                time.sleep(0.2)
                busy = [p for p in leftover_processes(self.run_id, wait=0) if not _is_server(p[1])]
            if busy:
                self.problem(f"detached processes still running 120 s after the soak: {busy}")
            # one query per server after the freshness interval: every index catches up with the disk
            time.sleep(1.2)
            for i, s in enumerate(servers):
                res = s.call_tool("search", {"query": "release checklist", "limit": 3})
                if res.get("isError"):
                    self.problem(f"server {i}: final search failed: {McpProcess.text(res)[:300]}")
            for i, s in enumerate(servers):
                rc = s.stop(timeout=20)
                self.count_process(time.monotonic() - s.t0)
                if rc != 0:
                    self.problem(f"server {i} exited rc={rc}: {''.join(s.stderr_lines)[-1500:]}")
                elif any("Traceback" in line for line in s.stderr_lines):
                    self.problem(f"server {i} logged a traceback: {''.join(s.stderr_lines)[-1500:]}")
            left = leftover_processes(self.run_id, wait=5)
            if left:
                self.problem(f"orphan processes after the run: {left}")
            lat = [x for st in stats for x in st.latencies]
            self.figures.update(
                {
                    "seconds": self.seconds,
                    "servers": self.n_servers,
                    "hook_sessions": self.n_hooks,
                    "server_ops": {
                        op: sum(st.ops[op] for st in stats) for op in ("write", "edit", "move", "delete", "search")
                    },
                    "server_call_p95_ms": round(p95(lat) * 1000, 1),
                    "freshness_checks": sum(st.fresh_checks for st in stats),
                }
            )
        finally:
            for s in servers:
                s.__exit__(None, None, None)

    # ---- checks --------------------------------------------------------------------------------------
    def check_files(self) -> None:
        checked = 0
        for rel, content in sorted(self.expected.items()):
            p = self.root / rel
            if not p.is_file():
                self.problem(f"{rel}: written successfully but missing on disk")
            elif p.read_text("utf-8", "replace") != content:
                self.problem(
                    f"{rel}: content differs from the last successful write:\n"
                    f"--- expected\n{content[:600]}\n--- on disk\n{p.read_text('utf-8', 'replace')[:600]}"
                )
            checked += 1
        for rel in sorted(self.deleted):
            if (self.root / rel).exists():
                self.problem(f"{rel}: deleted successfully but back on disk")
            checked += 1
        for rel, parts in sorted(self.contains.items()):
            p = self.root / rel
            text_ = p.read_text("utf-8", "replace") if p.is_file() else None
            missing = [x for x in parts if text_ is None or x not in text_]
            if missing:
                self.problem(f"{rel} (dream node): missing {missing}")
            checked += 1
        from reme_cc.memory.transcript import read_copy
        from reme_cc.base.workspace import Workspace

        ws = Workspace(self.root)
        for sid, (_src, uuids) in self.sessions.items():
            copied = [e.get("uuid") for e in read_copy(ws, sid)]
            if copied != uuids:
                lost = [u for u in uuids if u not in copied]
                dup = len(copied) - len(set(copied))
                self.problem(
                    f"session {sid}: copy has {len(copied)} entries, transcript {len(uuids)} "
                    f"({len(lost)} lost, {dup} duplicated, order ok={copied == sorted(copied, key=uuids.index)})"
                )
            checked += len(uuids)
        cards = sorted(
            p.relative_to(self.root).as_posix() for p in (self.root / "daily" / self.today).glob("Soak session*.md")
        )
        self.figures["recorder_cards"] = len(cards)
        self.figures["writes_checked"] = checked
        # no half-written temp files of atomic writes left anywhere
        temps = [p for p in self.root.rglob(".*.tmp") if "metadata" not in p.parts]
        if temps:
            self.problem(f"temp files left behind: {temps[:5]}")
        for log in ("auto-memory.log", "hooks.log", "hooks-worker.log", "index.log"):
            p = self.root / "metadata" / "logs" / log
            if p.exists() and "Traceback" in p.read_text("utf-8", "replace"):
                self.problem(f"metadata/logs/{log} has a traceback:\n{p.read_text('utf-8', 'replace')[-2000:]}")
        hooks_log = self.root / "metadata" / "logs" / "hooks.log"
        if hooks_log.exists():
            self.figures["recordings_started"] = hooks_log.read_text().count("recorder started")

    def check_locks(self) -> None:
        locks = sorted((self.root / "metadata").rglob("*.lock"))
        for path in locks:
            fd = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                self.problem(f"lock {path.relative_to(self.root)} is still held after every process ended")
            finally:
                os.close(fd)
        self.figures["locks_checked"] = len(locks)

    def check_index(self) -> None:
        copy = self.base / "ws-fresh"
        shutil.copytree(self.root, copy, symlinks=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REME_")}
        env.update({"REME_EMBEDDING": self.embedding, "REME_WORKSPACE": str(copy)})
        proc = subprocess.run(
            reme_argv("--workspace", str(copy), "reindex"), capture_output=True, text=True, env=env, timeout=300
        )
        if proc.returncode != 0:
            self.problem(f"reindex of the copy failed rc={proc.returncode}: {proc.stderr[-1000:]}")
            return
        live, fresh = index_tables(self.root), index_tables(copy)
        for table in live:
            a, b = live[table], fresh[table]
            if a != b:
                extra, missing = sorted(set(a) - set(b)), sorted(set(b) - set(a))
                self.problem(
                    f"index table {table} differs from a fresh rebuild: {len(extra)} rows only in the live "
                    f"index, {len(missing)} only in the rebuild; e.g. live {extra[:3]} / fresh {missing[:3]}"
                )
        self.figures["index_rows_compared"] = sum(len(v) for v in live.values())
        got_live, got_fresh = search_results(self.root, self.embedding), search_results(copy, self.embedding)
        for q in QUERIES:
            if got_live[q] != got_fresh[q]:
                self.problem(f"search {q!r}: live index {got_live[q][:5]} != fresh rebuild {got_fresh[q][:5]}")
        self.figures["queries_compared"] = len(QUERIES)


def _is_server(cmdline: str) -> bool:
    return cmdline.rstrip().endswith(" mcp")


def index_tables(root: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The derived index as comparable row lists (ids and timestamps of indexing left out)."""
    conn = sqlite3.connect(f"file:{root / 'metadata' / 'index.sqlite'}?mode=ro", uri=True)
    try:
        q = {
            "files": "SELECT path, mtime_ns, size, hash, name, description, extra, date, indexed FROM files",
            "chunks": "SELECT path, start_line, end_line, text, hash, headings FROM chunks",
            "chunks_fts": "SELECT c.path, c.start_line, f.tokens FROM chunks c JOIN chunks_fts f ON f.rowid = c.id",
            "fts_orphans": "SELECT rowid FROM chunks_fts WHERE rowid NOT IN (SELECT id FROM chunks)",
            "links": "SELECT source, target, resolved_path, anchor, alias, embed, predicate, line, how FROM links",
            "nodes_fts": "SELECT path, tokens FROM nodes_fts",
        }
        return {name: sorted(conn.execute(sql).fetchall(), key=repr) for name, sql in q.items()}
    finally:
        conn.close()


def search_results(root: Path, embedding: str) -> dict[str, list[tuple[Any, ...]]]:
    from reme_cc.base.config import Config
    from reme_cc.index import Index
    from reme_cc.base.workspace import Workspace

    old = os.environ.get("REME_EMBEDDING")
    os.environ["REME_EMBEDDING"] = embedding
    try:
        ws = Workspace(root)
        index = Index(ws, Config.load(ws.root), background_embedding=False)
    finally:
        if old is None:
            os.environ.pop("REME_EMBEDDING", None)
        else:
            os.environ["REME_EMBEDDING"] = old
    try:
        out = {}
        for q in QUERIES:
            hits = index.search(q, limit=20).results
            out[q] = sorted(
                ((h.path, h.start_line, h.end_line, round(h.score, 6)) for h in hits), key=lambda t: (-t[3], t[0], t[1])
            )
        return out
    finally:
        index.close()
