"""Per-prompt recall as the UserPromptSubmit hook runs it, and ``reme-cc recall`` (its dry run).

The hook asks a running MCP server of the same workspace over a local socket (hybrid evidence: jieba
terms and vectors, warm) and falls back to the index read-only, keyword only, when none answers in
time; memory/prompt_recall.py then decides, renders and logs, the same way for both. Standard library
only on the hook's side.

The socket: ``<runtime dir>/reme-<uid>/<workspace hash>-<pid>.sock`` — the runtime dir is
``$XDG_RUNTIME_DIR`` or the temp folder; the folder is the user's own, mode 0700, and is refused when
it is a link, someone else's, or open to others (another local user could otherwise answer the hook).
Each MCP server binds its own; the hook tries the newest first and removes one nobody listens on.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..base.config import Config
from ..base.deadline import call_with_timeout
from ..base.errors import InvalidInputError, ReMeError
from ..base.workspace import Workspace
from ..memory import prompt_recall
from ..memory.prompt_recall import Decision

DEADLINE_S = 0.9  # the prompt waits for the hook: after this, nothing is injected (and the log says why)
SERVER_SHARE = 0.55  # of the deadline a server may take before the keyword-only path gets the rest
MAX_REQUEST = 256 * 1024
MAX_ANSWER = 4 * 1024 * 1024


# ---- the socket ------------------------------------------------------------------------------------------


def socket_dir() -> Path | None:
    """The user's private folder for the sockets (created 0700), or None when it is unsafe."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    folder = Path(base) / f"reme-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder


def _prefix(ws: Workspace) -> str:
    return hashlib.sha256(str(ws.root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


class Listener:
    """Answers recall requests in a running MCP server: each request runs ``answer(request)`` (in the
    server's tool thread, behind any running call) and waits at most the deadline the hook sent."""

    def __init__(self, ws: Workspace, answer: Any):
        self.answer = answer
        self.path: Path | None = None
        folder = socket_dir()
        if folder is None:
            return
        path = folder / f"{_prefix(ws)}-{os.getpid()}.sock"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            path.unlink(missing_ok=True)
            old = os.umask(0o177)
            try:
                sock.bind(str(path))
            finally:
                os.umask(old)
            sock.listen(8)
        except OSError:
            sock.close()
            return
        self.sock, self.path = sock, path
        threading.Thread(target=self._serve, name="reme-recall", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(2.0)
                request = json.loads(_read_line(conn, MAX_REQUEST))
                deadline = min(5.0, max(0.05, float(request.get("deadline", DEADLINE_S))))
                reply = self.answer(request, deadline)
            except Exception as exc:  # noqa: BLE001 - a bad request gets an error, the server goes on
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            try:
                conn.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            except OSError:
                pass

    def close(self) -> None:
        if self.path is not None:
            try:
                self.sock.close()
                self.path.unlink(missing_ok=True)
            except OSError:
                pass


def _read_line(conn: socket.socket, limit: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        part = conn.recv(65536)
        if not part:
            break
        data += part
        if len(data) > limit:
            raise ValueError(f"message over {limit} bytes")
    return data


def ask_server(ws: Workspace, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """A running server's answer, or None (none runs, none answered in ``timeout``)."""
    folder = socket_dir()
    if folder is None or timeout <= 0:
        return None
    end = time.monotonic() + timeout
    try:
        found = sorted(folder.glob(f"{_prefix(ws)}-*.sock"), key=lambda p: -p.lstat().st_mtime)
    except OSError:
        return None
    for path in found:
        left = end - time.monotonic()
        if left <= 0.01:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(left)
            sock.connect(str(path))
            sock.sendall(json.dumps({**request, "deadline": left - 0.01}).encode("utf-8") + b"\n")
            answer = json.loads(_read_line(sock, MAX_ANSWER) or b"null")
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink(missing_ok=True)  # its server is gone
            continue
        except (OSError, ValueError):
            return None
        finally:
            sock.close()
        return answer if isinstance(answer, dict) and "error" not in answer else None
    return None


def serve(ws: Workspace, runtime: Any) -> Listener:
    """The MCP server's listener: requests run in its tool thread, each bounded by its deadline."""

    def answer(request: dict[str, Any], deadline: float) -> dict[str, Any]:
        if runtime.ctx is None:
            return {"error": runtime.open_error or "the workspace is not open yet"}
        from ..tools.prompt_candidates import answer as hybrid

        job = runtime.executor.submit(hybrid, runtime.ctx, request)
        try:
            return job.result(timeout=deadline)
        except TimeoutError:
            job.cancel()
            return {"error": f"busy for {deadline:.2f}s"}

    return Listener(ws, answer)


# ---- one prompt -------------------------------------------------------------------------------------------


def recall_for_prompt(
    ws: Workspace,
    config: Config,
    prompt: str,
    cwd: str,
    session_id: str | None,
    *,
    deadline: float = DEADLINE_S,
    record: bool = True,
    ctx: Any = None,
    keyword_only: bool = False,
) -> Decision:
    """What the hook injects for ``prompt`` (``record``: remember it for the session and log it).
    ``ctx``: compute the hybrid evidence in this process instead of asking a server."""
    t0 = time.monotonic()
    state = prompt_recall.load_state(ws, session_id)
    decision = Decision(prompt, "")
    why = prompt_recall.trivial(prompt)
    if not why:
        decision = _evidence_and_decide(ws, config, prompt, cwd, session_id, state, t0 + deadline, ctx, keyword_only)
    else:
        decision.reason = why
    decision.ms = (time.monotonic() - t0) * 1000
    if record:
        prompt_recall.save_state(ws, session_id, decision, state)
        prompt_recall.log(ws, decision, session_id)
    return decision


def _evidence_and_decide(
    ws: Workspace,
    config: Config,
    prompt: str,
    cwd: str,
    session_id: str | None,
    state: dict[str, Any],
    end: float,
    ctx: Any,
    keyword_only: bool,
) -> Decision:
    notes: list[str] = []
    project = None
    if ctx is not None:
        from ..tools.prompt_candidates import candidates
        from ..tools.recall_scope import current_project

        information, found, notes = candidates(ctx, prompt, cwd)
        project, source = current_project(ctx, cwd).name or None, "in-process"
    else:
        answer = (
            None
            if keyword_only
            else ask_server(ws, {"prompt": prompt, "cwd": cwd}, (end - time.monotonic()) * SERVER_SHARE)
        )
        if answer is not None:
            information = float(answer.get("information") or 0.0)
            found = [prompt_recall.candidate_from(c) for c in answer.get("candidates") or []]
            notes, source = [str(n) for n in answer.get("notes") or []], "server"
            project = answer.get("project")
        else:
            if not keyword_only:
                notes.append("no MCP server of this workspace answered: keyword evidence only, no vectors")
            try:
                information, found, more = call_with_timeout(
                    read_only_evidence, (ws, prompt, cwd), end - time.monotonic()
                )
            except ReMeError as exc:
                return Decision(prompt, "keyword-only", reason=f"deadline: {exc}", notes=notes)
            notes += more
            source = "keyword-only"
    if project is None and cwd:
        from ..memory.project import detect

        project = detect(cwd).name or None
    decision = prompt_recall.decide(
        prompt,
        information,
        found,
        project=project,
        seen=state["given"],
        own_session=session_id,
        budget=config.recall_chars,
        source=source,
    )
    decision.notes = notes
    return decision


def read_only_evidence(args: tuple[Workspace, str, str]) -> tuple[float, list[Any], list[str]]:
    """``prompt_recall.keyword_candidates(ws, prompt, cwd)``: the index read-only, keyword only."""
    return prompt_recall.keyword_candidates(*args)


# ---- `reme-cc recall` --------------------------------------------------------------------------------------


def run_cli(args: Any) -> int:
    from ..tools import Context

    prompt = " ".join(args.prompt).strip()
    if not prompt:
        raise InvalidInputError('recall: give the prompt to try, e.g. reme-cc recall "how do we cut a release"')
    cwd = os.path.abspath(args.cwd or os.getcwd())
    ctx = Context.open(getattr(args, "workspace", None))
    config = ctx.config if args.chars is None else ctx.config.replace(recall_chars=args.chars)
    try:
        decision = None
        if not args.keyword_only:
            decision = recall_for_prompt(ctx.workspace, config, prompt, cwd, args.session, record=False, deadline=5.0)
            if decision.source != "server" and not prompt_recall.trivial(prompt):
                decision = recall_for_prompt(ctx.workspace, config, prompt, cwd, args.session, record=False, ctx=ctx)
        else:
            decision = recall_for_prompt(
                ctx.workspace, config, prompt, cwd, args.session, record=False, keyword_only=True, deadline=5.0
            )
    finally:
        ctx.close()
    if getattr(args, "json", False):
        print(json.dumps({**decision.as_json(), "text": decision.text}, ensure_ascii=False, indent=2))
        return 0
    print(_explain(decision, config))
    return 0


def _explain(d: Decision, config: Config) -> str:
    how = {"server": "a running MCP server (keyword + vectors)", "in-process": "this process (keyword + vectors)"}
    lines = [f"evidence from {how.get(d.source, 'the index read-only (keyword only)')} in {d.ms:.0f} ms"]
    lines += [f"note: {n}" for n in d.notes]
    b = prompt_recall.BAR
    bar = (
        f"bar: keyword share / {b.keyword} + vector gap / {b.gap} >= 1 (without vectors: keyword share >= "
        f"{b.keyword_alone}); notes of other projects are left to search"
    )
    lines.append(bar + f"; budget {config.recall_chars} characters (recall_chars)")
    if not config.auto_recall or config.recall_chars <= 0:
        lines.append("auto_recall is off: the hook injects nothing (this shows what it would inject)")
    if d.considered:
        lines.append("candidates (relevance >= 1 clears the bar):")
        for c in d.considered[:6]:
            mark = "injected" if c in d.injected else "        "
            lines.append(
                f"  {mark} {c.relevance:5.2f}  keyword {c.keyword:.2f}  vector {c.vector:.3f} (gap {c.gap:+.3f})  "
                f"tier {c.tier:g}  {c.shown}"
            )
    if d.injected:
        lines += [f"would inject {len(d.text)} characters:", d.text]
    else:
        lines.append(f"would inject nothing: {d.reason}")
    return "\n".join(lines)


def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "recall",
        help="dry run of per-prompt recall: what the UserPromptSubmit hook would inject for a prompt, and why",
    )
    p.add_argument("prompt", nargs="+", help="the prompt, as typed in Claude Code")
    p.add_argument("--cwd", help="the session's folder (default: the current one); decides the project")
    p.add_argument("--session", help="a session id: leave out what that session was already given")
    p.add_argument("--chars", type=int, help="budget in characters instead of recall_chars")
    p.add_argument("--keyword-only", action="store_true", help="what the hook injects when no MCP server runs")
    p.set_defaults(func=run_cli)
