"""Crash-injection kit shared by tests/test_crash.py (CI: 20 kills) and bench/crash.py (by hand: 200).

Each scenario starts a real reme process on a real workspace, SIGKILLs its whole process group at a
random moment, and then checks what the brief of issue #7 asks:

* ``check_files``: no truncated or half-written file. Contract checked:
  - every ``.md`` decodes as UTF-8 and its frontmatter parses; files written by a driver end with
    their sentinel (a torn write would lose it);
  - every ``.json`` (cursors, copy state, dream catalog) parses; every ``.yaml`` parses;
  - every ``.jsonl`` line is valid JSON except possibly an unterminated LAST line (a torn append),
    which the readers (``transcript.read_copy``, ``render.parse_lines``) must ignore;
  - temp files of atomic writes (``.<name>.<rand>.tmp``) may be left by a kill, but are invisible:
    not walked by the index, not listed by the ``list`` tool.
* ``index_dump`` / ``fresh_dump``: after the next process ran, the index equals a fresh rebuild of a
  copy of the files (files, chunks + their FTS tokens, links, node FTS rows).
* ``lock_wait``: every lock file left in ``metadata/`` is free at once (flock dies with its holder).
* ``leftovers``: no process of the killed run survives (pool workers, the Claude CLI, ...).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "reme_hook.py"
SENTINEL = "<!-- end of note -->"


# ---------------------------------------------------------------------------------------------
# processes


def base_env(root: Path, run_id: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE", "ANTHROPIC"))}
    env.update(
        {
            "REME_WORKSPACE": str(root),
            "REME_EMBEDDING": "none",
            "REME_TEST_RUN": run_id,
            "REME_AUTO_DREAM": "false",
            "PYTHONPATH": str(REPO / "tests"),
        }
    )
    env.update(extra or {})
    return env


def start(argv: list[str], env: dict[str, str], stdin: bytes | None = None, cwd: str = "/") -> subprocess.Popen:
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        start_new_session=True,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.run_id = env.get("REME_TEST_RUN")  # type: ignore[attr-defined]
    if stdin:
        assert proc.stdin
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    return proc


def kill_after(proc: subprocess.Popen, delay: float) -> bool:
    """At ``delay`` s, SIGKILL the process group and every detached process of the run (a hook's copy
    worker, a recorder); False when nothing was running any more at that moment."""
    deadline = time.monotonic() + delay
    try:
        proc.wait(delay)
        alive = False
    except subprocess.TimeoutExpired:
        alive = True
    time.sleep(max(0.0, deadline - time.monotonic()))
    with_group(proc, signal.SIGKILL)
    run_id = getattr(proc, "run_id", None)
    if run_id:
        from support.claude_cli import leftover_processes

        detached = leftover_processes(run_id, wait=0)
        alive = alive or bool(detached)
        kill_leftovers(run_id)
    proc.wait(10)
    return alive


def with_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def leftovers(run_id: str, wait: float = 5.0) -> list[tuple[int, str]]:
    from support.claude_cli import leftover_processes

    return leftover_processes(run_id, wait=wait)


def kill_leftovers(run_id: str) -> None:
    from support.claude_cli import kill_leftovers as kl

    kl(run_id)


def run_ok(
    argv: list[str], env: dict[str, str], timeout: float = 120, stdin: bytes | None = None
) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, env=env, input=stdin, capture_output=True, timeout=timeout, cwd="/")
    if p.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv[:6])} exited {p.returncode}\nstdout: {p.stdout.decode()[-2000:]}\n"
            f"stderr: {p.stderr.decode()[-3000:]}"
        )
    return p


def reme(root: Path, *args: str) -> list[str]:
    return [PY, "-m", "reme_cc", "--workspace", str(root), *args]


# ---------------------------------------------------------------------------------------------
# checks


@dataclass
class FileCheck:
    problems: list[str] = field(default_factory=list)
    torn_tails: list[str] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)
    files: int = 0


def is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def check_files(root: Path, sentinel_under: tuple[str, ...] = ()) -> FileCheck:
    """Walk the whole workspace (metadata/ too, except the SQLite/faiss files)."""
    import yaml

    from reme_cc.memory.render import parse_lines
    from reme_cc.notes.frontmatter import parse_note

    out = FileCheck()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith("metadata/") and (
            ".sqlite" in rel or "/vectors-" in rel or rel.endswith((".lock", ".log", ".log.1"))
        ):
            continue
        if ".git/" in rel:
            continue
        if is_temp(path.name):
            out.temp_files.append(rel)
            continue
        out.files += 1
        data = path.read_bytes()
        try:
            if rel.endswith(".md"):
                text = data.decode("utf-8")
                note = parse_note(text)
                if note.error:
                    out.problems.append(f"{rel}: frontmatter does not parse: {note.error}")
                if rel.startswith(sentinel_under) and SENTINEL not in text[-400:]:
                    out.problems.append(f"{rel}: truncated (sentinel missing; {len(data)} bytes)")
            elif rel.endswith(".jsonl"):
                lines = data.split(b"\n")
                torn = lines[-1] if lines[-1] else None
                for line in lines[:-1]:
                    if line.strip():
                        json.loads(line)
                if torn is not None:
                    out.torn_tails.append(rel)
                    try:
                        json.loads(torn)
                        out.problems.append(f"{rel}: last line is complete JSON but has no newline")
                    except ValueError:
                        pass
                    complete = [json.loads(ln) for ln in lines[:-1] if ln.strip()]
                    if [e for _, e in parse_lines(data)] != [e for e in complete if isinstance(e, dict)]:
                        out.problems.append(f"{rel}: parse_lines does not ignore the torn last line")
            elif rel.endswith(".json"):
                json.loads(data)
            elif rel.endswith((".yaml", ".yml")):
                yaml.safe_load(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, yaml.YAMLError) as exc:
            out.problems.append(f"{rel}: {type(exc).__name__}: {str(exc)[:200]}")
    if out.temp_files:  # allowed only when invisible to the index walk and to `list`
        from reme_cc.index.sync import walk

        walked = set(walk(root))
        for rel in out.temp_files:
            if rel in walked:
                out.problems.append(f"{rel}: temp file is visible to the index walk")
    return out


def index_dump(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        q = lambda sql: sorted(tuple(r) for r in conn.execute(sql))  # noqa: E731
        dump = {
            "files": q("SELECT path, mtime_ns, size, hash, name, description, extra, date, indexed FROM files"),
            "chunks": q(
                "SELECT c.path, c.start_line, c.end_line, c.hash, c.headings, f.tokens FROM chunks c "
                "LEFT JOIN chunks_fts f ON f.rowid = c.id"
            ),
            "fts_rows": conn.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0],
            "links": q("SELECT source, target, resolved_path, anchor, alias, embed, predicate, line, how FROM links"),
            "nodes": q("SELECT path, tokens FROM nodes_fts"),
        }
    finally:
        conn.close()
    dump["chunk_rows"] = len(dump["chunks"])
    return dump


def fresh_dump(root: Path, scratch: Path) -> dict[str, Any]:
    """Index of a copy of the files (no metadata/), built from scratch in this process."""
    from reme_cc.base.config import Config
    from reme_cc.index import Index
    from reme_cc.base.workspace import Workspace

    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(
        root,
        scratch,
        ignore=lambda d, names: (
            [n for n in names if n == "metadata" and Path(d) == root] + [n for n in names if is_temp(n)]
        ),
        copy_function=shutil.copy2,
    )
    ws = Workspace(scratch)
    idx = Index(ws, Config.load(None, env={"REME_EMBEDDING": "none"}), background_embedding=False)
    try:
        idx.sync(force=True)
    finally:
        idx.close()
    return index_dump(scratch / "metadata" / "index.sqlite")


def diff_dumps(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    out = []
    for key in want:
        if got.get(key) != want[key]:
            if isinstance(want[key], list):
                g, w = set(got.get(key) or []), set(want[key])
                out.append(
                    f"{key}: {len(g - w)} extra, {len(w - g)} missing; e.g. extra {sorted(g - w)[:2]} "
                    f"missing {sorted(w - g)[:2]}"
                )
            else:
                out.append(f"{key}: {got.get(key)} != {want[key]}")
    return out


def _holders(path: Path) -> str:
    """Who holds a flock on ``path`` (from /proc/locks), with their command lines."""
    ino = os.stat(path).st_ino
    out = []
    for line in Path("/proc/locks").read_text().splitlines():
        parts = line.split()
        if len(parts) > 5 and parts[5].endswith(f":{ino}"):
            pid = parts[4]
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
            except OSError:
                cmd = "?"
            out.append(f"pid {pid}: {cmd}")
    return "; ".join(out) or "no holder listed"


def lock_wait(root: Path) -> tuple[float, list[str]]:
    """Acquire every lock file under metadata/ with timeout 0; returns (max seconds, names)."""
    import fcntl

    worst, names = 0.0, []
    for path in sorted((root / "metadata").rglob("*.lock")):
        names.append(path.relative_to(root).as_posix())
        t0 = time.monotonic()
        fd = os.open(path, os.O_RDWR)
        try:
            # a SIGKILLed holder may still be tearing down for a few ms; its lock must free by itself
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() - t0 > 5.0:
                        raise Failure(f"{names[-1]} is still locked 5 s after the kill: {_holders(path)}") from None
                    time.sleep(0.005)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        worst = max(worst, time.monotonic() - t0)
    return worst, names


# ---------------------------------------------------------------------------------------------
# scenario results


@dataclass
class Outcome:
    scenario: str
    delay: float
    killed: bool
    torn_tails: int = 0
    temp_files: int = 0
    lock_seconds: float = 0.0
    dangling: int = 0
    recovered: bool = False
    note: str = ""


class Failure(AssertionError):
    pass


def verify(cond: bool, msg: str) -> None:
    if not cond:
        raise Failure(msg)


def common_after_kill(root: Path, run_id: str, outcome: Outcome, sentinel_under: tuple[str, ...] = ()) -> FileCheck:
    left = leftovers(run_id)
    if left:
        kill_leftovers(run_id)
    verify(not left, f"{outcome.scenario}: processes survived the kill: {left}")
    fc = check_files(root, sentinel_under)
    verify(not fc.problems, f"{outcome.scenario} (kill at {outcome.delay:.2f}s): " + "; ".join(fc.problems[:5]))
    outcome.torn_tails, outcome.temp_files = len(fc.torn_tails), len(fc.temp_files)
    secs, _ = lock_wait(root)
    outcome.lock_seconds = secs
    verify(secs < 0.5, f"{outcome.scenario}: a dead process's lock blocked for {secs:.2f}s")
    return fc


def index_matches_fresh(root: Path, scratch: Path, label: str) -> None:
    got = index_dump(root / "metadata" / "index.sqlite")
    verify(got["fts_rows"] == got["chunk_rows"], f"{label}: {got['fts_rows']} FTS rows for {got['chunk_rows']} chunks")
    want = fresh_dump(root, scratch)
    problems = diff_dumps(got, want)
    verify(not problems, f"{label}: index differs from a fresh rebuild: " + "; ".join(problems))


# ---------------------------------------------------------------------------------------------
# scenario: indexing (reindex + incremental sync of a few hundred files)

WORDS = (
    "alpha beta gamma delta kumquat ladder sqlite wal index chunk graph memory dream harvest 光伏 产业链 记忆 索引"
).split()


def make_notes(root: Path, n: int, rng: random.Random) -> None:
    for i in range(n):
        folder = root / ("digest/wiki" if i % 3 == 0 else f"daily/2026-06-{1 + i % 28:02d}")
        folder.mkdir(parents=True, exist_ok=True)
        write_note(folder / f"note-{i}.md", i, rng, 0)


def write_note(path: Path, i: int, rng: random.Random, version: int) -> None:
    body = "\n\n".join(f"## Section {k}\n" + " ".join(rng.choice(WORDS) for _ in range(60)) for k in range(4))
    link = f"digest/wiki/note-{(i * 7) % 300 // 3 * 3}.md"
    path.write_text(
        f"---\nname: Note {i}\ndescription: version {version} about {rng.choice(WORDS)}\n---\n"
        f"# Note {i}\n\nSee [[{link}]] and [[note-{(i + 1) % 300}]].\n\n{body}\n\n{SENTINEL}\n"
    )


_DURATIONS: dict[tuple[str, str], float] = {}


def _duration(root: Path, cmd: str, env: dict[str, str]) -> float:
    """Seconds one unkilled ``reme-cc <cmd>`` takes on this workspace (measured once)."""
    key = (str(root), cmd)
    if key not in _DURATIONS:
        t0 = time.monotonic()
        run_ok(reme(root, cmd), env)
        _DURATIONS[key] = max(0.2, time.monotonic() - t0)
    return _DURATIONS[key]


def scenario_index(
    root: Path, scratch: Path, rng: random.Random, *, files: int = 300, max_delay: float = 3.5
) -> Outcome:
    if not (root / "digest").exists() or not any((root / "digest").rglob("*.md")):
        make_notes(root, files, rng)
    # between kills, the files change too: the killed run may be a full reindex or an incremental sync
    for _ in range(rng.randint(0, 20)):
        i = rng.randrange(files)
        folder = root / ("digest/wiki" if i % 3 == 0 else f"daily/2026-06-{1 + i % 28:02d}")
        write_note(folder / f"note-{i}.md", i, rng, rng.randint(1, 10**6))
    run_id = uuid.uuid4().hex
    env = base_env(root, run_id)
    cmd = rng.choice(["reindex", "reindex", "status"])
    # kill inside the work: a delay drawn within the duration one unkilled run of this command took
    # here (machines differ tenfold in speed, so a fixed range would often kill an exited process)
    delay = rng.uniform(0.1, 0.9) * min(max_delay, _duration(root, cmd, env))
    proc = start(reme(root, cmd), env)
    out = Outcome("index", delay, kill_after(proc, delay), note=cmd)
    common_after_kill(root, run_id, out, sentinel_under=("digest/", "daily/"))
    run_ok(reme(root, "status"), base_env(root, run_id))  # the next process repairs the index by itself
    index_matches_fresh(root, scratch, f"index (killed {cmd} at {delay:.2f}s)")
    out.recovered = True
    return out


# ---------------------------------------------------------------------------------------------
# scenario: tool writes (write/edit/move through the CLI entry point, in a loop)

WRITER = r"""
import json, os, random, sys
from reme_cc.surfaces.cli import main
root, seed, journal = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)
SENT = "<!-- end of note -->"
def log(obj):
    with open(journal, "a") as fh:
        fh.write(json.dumps(obj) + "\n"); fh.flush(); os.fsync(fh.fileno())
i = 0
while True:
    i += 1
    k = rng.randrange(6)
    path = f"resource/crash/n{k}.md"
    if os.path.exists(os.path.join(root, f"resource/crash/m{k}.md")):  # finish a move-back cut short
        log({"i": i, "op": "move-back", "path": f"resource/crash/m{k}.md"})
        rc = main(["--workspace", root, "move", f"resource/crash/m{k}.md", path])
        log({"i": i, "done": rc})
        continue
    op = rng.choice(["write", "write", "edit", "move"])
    if op == "write" or not os.path.exists(os.path.join(root, path)):
        body = f"# Note {k} v{i}\n\nSee [[resource/crash/n{(k + 1) % 6}.md]].\n\n" + ("filler text " * 4000) + f"\n\nv{i}\n\n{SENT}\n"
        log({"i": i, "op": "write", "path": path})
        rc = main(["--workspace", root, "write", path, "--content", body, "--name", f"Note {k}", "--description", f"v{i}"])
    elif op == "edit":
        text = open(os.path.join(root, path), encoding="utf-8").read()
        old = text.split("\n\n")[-2] if text.count("\n\n") >= 2 else None
        if not old or old == SENT or text.count(old) != 1:
            continue
        log({"i": i, "op": "edit", "path": path})
        rc = main(["--workspace", root, "edit", path, "--old-text", old, "--new-text", f"v{i} edited"])
    else:
        dst = f"resource/crash/m{k}.md"
        if os.path.exists(os.path.join(root, dst)):
            continue
        log({"i": i, "op": "move", "path": path, "dst": dst})
        rc = main(["--workspace", root, "move", path, dst])
        if rc == 0:
            log({"i": i, "op": "move-back"})
            rc = main(["--workspace", root, "move", dst, path])
    log({"i": i, "done": rc})
"""


def scenario_tools(root: Path, scratch: Path, rng: random.Random, *, max_delay: float = 4.0) -> Outcome:
    run_id = uuid.uuid4().hex
    journal = root.parent / f"journal-{run_id}.jsonl"
    delay = rng.uniform(0.8, max_delay)
    proc = start([PY, "-c", WRITER, str(root), str(rng.randrange(10**9)), str(journal)], base_env(root, run_id))
    out = Outcome("tools", delay, kill_after(proc, delay))
    if not out.killed:
        raise Failure(f"tool writer exited by itself: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    common_after_kill(root, run_id, out, sentinel_under=("resource/crash/",))
    ops = [json.loads(ln) for ln in journal.read_text().splitlines() if ln.strip()]
    out.note = f"{sum(1 for o in ops if 'done' in o)} ops completed"
    # the next process: a search (syncs the index by itself), then the index equals a fresh rebuild
    run_ok(reme(root, "search", "filler text"), base_env(root, run_id))
    index_matches_fresh(root, scratch, f"tools (killed at {delay:.2f}s)")
    # every note is reachable under one of its two names, never under both
    for k in range(6):
        both = [(root / f"resource/crash/{p}{k}.md").exists() for p in ("n", "m")]
        verify(sum(both) <= 1, f"note {k} exists under both names after the kill")
    # retry an interrupted move-back as the writer would, then count links that point nowhere
    for k in range(6):
        if (root / f"resource/crash/m{k}.md").exists():
            run_ok(reme(root, "move", f"resource/crash/m{k}.md", f"resource/crash/n{k}.md"), base_env(root, run_id))
    from reme_cc.notes.wikilinks import parse_links

    dangling = [
        (p.name, link.target)
        for p in (root / "resource/crash").glob("*.md")
        for link in parse_links(p.read_text(encoding="utf-8"))
        if not (root / link.target).exists()
    ]
    out.note += f", dangling links after retry: {len(dangling)}"
    out.dangling = len(dangling)
    out.recovered = True
    return out


# ---------------------------------------------------------------------------------------------
# scenario: transcript copies (hook Stop on a big transcript that keeps growing)


def transcript_entries(n: int, start: int, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for k in range(start, start + n):
        role = "user" if k % 2 == 0 else "assistant"
        text = f"message {k}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 400)))
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        out.append(
            {
                "parentUuid": None,
                "type": role,
                "uuid": f"u-{k:07d}",
                "sessionId": "crash-sess",
                "timestamp": f"2026-06-20T10:{(k // 60) % 60:02d}:{k % 60:02d}.000Z",
                "message": {"role": role, "content": content},
            }
        )
        if k % 5 == 0:  # bookkeeping lines the copy must skip
            out.append({"type": "progress", "uuid": f"p-{k:07d}", "data": "x" * 2000})
    return out


def scenario_transcript(root: Path, scratch: Path, rng: random.Random, *, max_delay: float = 0.5) -> Outcome:
    from reme_cc.memory.transcript import read_copy
    from reme_cc.base.workspace import Workspace

    sid = "crash-sess"
    src = root.parent / "projects" / f"{sid}.jsonl"
    src.parent.mkdir(parents=True, exist_ok=True)
    have = sum(1 for _ in src.open("rb")) if src.exists() else 0
    with src.open("a", encoding="utf-8") as fh:  # ~1-3 MB more per round: the hook copies it inline
        for e in transcript_entries(rng.randint(1500, 4000), have * 10, rng):
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
        # Claude Code may be in the middle of writing a line when the hook runs
        fh.write('{"parentUuid":null,"type":"user","uuid":"half-written')
    run_id = uuid.uuid4().hex
    env = base_env(root, run_id, {"REME_RECORD_MIN_MESSAGES": "1000000", "REME_RECORD_MIN_MINUTES": "1000000"})
    payload = json.dumps({"session_id": sid, "transcript_path": str(src), "hook_event_name": "Stop"}).encode()
    delay = rng.uniform(0.03, max_delay)
    proc = start([PY, "-S", str(HOOK), "Stop"], env, stdin=payload)
    out = Outcome("transcript", delay, kill_after(proc, delay))
    common_after_kill(root, run_id, out)
    # finish the half-written line, then the next hook completes the copy exactly once
    data = src.read_bytes()
    src.write_bytes(data[: data.rfind(b"\n") + 1])
    t0 = time.monotonic()
    run_ok([PY, "-S", str(HOOK), "Stop"], env, stdin=payload, timeout=60)
    hook_s = time.monotonic() - t0
    verify(hook_s < 3.0, f"the Stop hook took {hook_s:.2f}s")
    leftovers(run_id, wait=60)  # a big backlog is copied by a detached worker: let it finish
    out.note = f"next hook {hook_s:.2f}s"
    want = [
        json.loads(ln)["uuid"]
        for ln in src.read_bytes().splitlines()
        if ln.strip() and json.loads(ln)["type"] in ("user", "assistant")
    ]
    got = [e["uuid"] for e in read_copy(Workspace(root), sid)]
    verify(
        got == want,
        f"transcript copy after kill at {delay:.2f}s: {len(got)} entries, want {len(want)} "
        f"(duplicates: {len(got) - len(set(got))})",
    )
    copy = root / "session" / "claude_code" / f"{sid}.jsonl"
    verify(copy.read_bytes().endswith(b"\n"), "the copy still ends in a torn line after the next copy")
    out.recovered = True
    return out


# ---------------------------------------------------------------------------------------------
# scenario: recordings (`reme-cc auto-memory` against the fake API with a slow reply)


def scenario_record(
    root: Path,
    scratch: Path,
    rng: random.Random,
    api: Any,
    *,
    backend: str = "anthropic",
    home: Path,
    max_delay: float = 4.0,
) -> Outcome:
    from support.claude_cli import sdk_env
    from support.fake_api import Reply, text, tool_use

    from reme_cc.memory import daily
    from reme_cc.memory.recording import load_cursor
    from reme_cc.memory.render import parse_lines
    from reme_cc.base.workspace import Workspace

    ws = Workspace(root)
    sid = f"rec-{rng.randrange(10**6)}"
    copy = root / "session" / "claude_code" / f"{sid}.jsonl"
    copy.parent.mkdir(parents=True, exist_ok=True)
    with copy.open("w", encoding="utf-8") as fh:
        for k in range(6):
            role = "user" if k % 2 == 0 else "assistant"
            fh.write(
                json.dumps(
                    {
                        "type": role,
                        "uuid": f"{sid}-{k}",
                        "timestamp": f"2026-06-20T09:0{k}:00Z",
                        "message": {"role": role, "content": f"We decided point {k} about the cache."},
                    }
                )
                + "\n"
            )
    tname = "daily_write" if backend == "anthropic" else "mcp__reme__daily_write"
    slow = rng.uniform(0.3, 1.5)

    def card(req: Any) -> Reply:
        r = tool_use(
            tname,
            {
                "name": f"Cache decisions {sid}",
                "description": "Decided the cache design.",
                "content": "## What happened\n- decided the cache\n\n" + "detail " * 2000 + f"\n\n{SENTINEL}",
            },
        )
        r.hang = slow
        return r

    api.rules.clear()
    api.default = text("recorded")
    api.rule(lambda req: not req.tool_results(last_only=True), card)
    run_id = uuid.uuid4().hex
    env = base_env(
        root,
        run_id,
        {
            **sdk_env(api, home),
            "REME_AGENT_BACKEND": backend,
            "REME_AGENT_RETRIES": "0",
            "REME_ANTHROPIC_API_KEY": "sk-ant-fake" if backend == "anthropic" else "",
        },
    )
    delay = rng.uniform(0.3, max_delay)
    proc = start(reme(root, "auto-memory", "--session-id", sid), env)
    out = Outcome(f"record-{backend}", delay, kill_after(proc, delay))
    common_after_kill(root, run_id, out, sentinel_under=("daily/2026-06-20/",))
    cards = [c.path for c in daily.list_cards(ws, "2026-06-20") if c.meta.get("session_id") == sid]
    verify(len(cards) <= 1, f"two cards after a kill: {cards}")
    cursor = load_cursor(ws, "claude_code", sid)
    if cursor:  # the cursor only moves once the card is safely written
        verify(bool(cards), f"cursor advanced to {cursor.get('line')} without a card (kill at {delay:.2f}s)")
    # retry to completion
    p = run_ok(reme(root, "auto-memory", "--session-id", sid), env, timeout=180)
    cards = [c.path for c in daily.list_cards(ws, "2026-06-20") if c.meta.get("session_id") == sid]
    verify(len(cards) == 1, f"after the retry: cards {cards}; {p.stdout.decode()}")
    last = parse_lines(copy.read_bytes())[-1]
    verify(load_cursor(ws, "claude_code", sid).get("uuid") == last[1]["uuid"], "cursor not at the end after the retry")
    day = (root / "daily" / "2026-06-20.md").read_text(encoding="utf-8")
    verify(cards[0] in day, f"day index does not list {cards[0]}")
    check = check_files(root, sentinel_under=("daily/2026-06-20/",))
    verify(not check.problems, "; ".join(check.problems))
    out.note = p.stdout.decode().strip()[:120]
    out.recovered = True
    return out


# ---------------------------------------------------------------------------------------------
# scenario: dreams (the real Claude CLI through the Agent SDK against the scripted fake API)


def scenario_dream(
    root: Path, scratch: Path, rng: random.Random, api: Any, *, home: Path, max_delay: float = 3.5
) -> Outcome:
    from support.claude_cli import sdk_env
    from support.dream_script import create_plan, extractor_turn, script_dream

    from reme_cc.notes.evidence import link_targets, sources_section

    tag = rng.randrange(10**6)
    date = "2026-06-20"
    src = f"daily/{date}/dream-src-{tag}.md"
    (root / "daily" / date).mkdir(parents=True, exist_ok=True)
    (root / src).write_text(
        f"---\nname: Dream source {tag}\ndescription: lesson {tag}\n---\n"
        f"Lesson {tag}: always pin the toolchain version.\n\n{SENTINEL}\n",
        encoding="utf-8",
    )
    node = f"digest/procedure/pin-toolchain-{tag}.md"
    name = f"Pin the toolchain {tag}"

    def script() -> None:
        api.rules.clear()
        units = [{"name": name, "bucket": "procedure", "summary": "Pin the toolchain version.", "paths": [src]}]
        plans = {name: create_plan(node, name, f"Always pin the toolchain version.\n\n{SENTINEL}", [src])}
        script_dream(api, extractions=[extractor_turn(units, [])] * 3, plans=plans)

    script()
    run_id = uuid.uuid4().hex
    env = base_env(root, run_id, {**sdk_env(api, home), "REME_AGENT_RETRIES": "0", "REME_AGENT_BACKEND": "sdk"})
    delay = rng.uniform(0.5, max_delay)
    proc = start(reme(root, "dream", "--date", date, "--max-units", "5"), env)
    out = Outcome("dream", delay, kill_after(proc, delay))
    common_after_kill(root, run_id, out)
    script()
    p = subprocess.run(reme(root, "dream", "--date", date, "--json"), env=env, capture_output=True, timeout=240)
    summary = json.loads(p.stdout.decode() or "{}")
    verify(
        p.returncode == 0 and not summary.get("error"),
        f"dream retry failed: rc={p.returncode} {p.stdout.decode()[-1500:]} {p.stderr.decode()[-1500:]}",
    )
    verify((root / node).exists(), f"the retried dream did not create {node}: {summary}")
    verify(src in link_targets(sources_section((root / node).read_text()) or ""), f"{node} lost its Sources link")
    from reme_cc.memory.dream import load_catalog
    from reme_cc.base.workspace import Workspace

    catalog = load_catalog(Workspace(root))
    verify(src in catalog, f"{src} not checkpointed after the retried dream")
    left = leftovers(run_id)
    verify(not left, f"dream processes left: {left}")
    check = check_files(root, sentinel_under=("digest/procedure/",))
    verify(not check.problems, "; ".join(check.problems))
    run_ok(reme(root, "status"), base_env(root, run_id))
    index_matches_fresh(root, scratch, f"dream (killed at {delay:.2f}s)")
    out.note = f"retry: created {summary.get('created')}, changed {summary.get('changed')}"
    out.recovered = True
    return out


SCENARIOS: dict[str, Callable[..., Outcome]] = {
    "index": scenario_index,
    "tools": scenario_tools,
    "transcript": scenario_transcript,
    "record": scenario_record,
    "dream": scenario_dream,
}
