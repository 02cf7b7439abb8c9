"""Per-prompt recall: the MCP server's side of the UserPromptSubmit hook, the hook's keyword-only
fallback, and ``reme-cc recall`` (its dry run).

The hook's fast path (prompt_hook.py) sends its payload to a running MCP server of the same workspace
over a private local socket (recall_socket.py). The server decides in its tool thread
with hybrid evidence (jieba terms and vectors, warm) and records the decision (the session's state, the
logs) only once its answer is on its way, so a hook that gave up waiting leaves nothing behind. With no
server in time the hook decides keyword only from the index read-only. memory/prompt_recall.py decides,
renders and logs, the same way for both.
"""

from __future__ import annotations

import json
import os
import socket
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
from . import hook_log
from .recall_socket import DEADLINE_S, MAX_REQUEST, read_line, setting_vars, socket_dir, socket_key

# ---- the server's side --------------------------------------------------------------------------------


class Listener:
    """Answers the hook in a running MCP server: each connection runs ``answer(request, deadline)`` and
    gets its reply; ``answer`` returns (reply, what to do once the reply is sent)."""

    def __init__(self, ws: Workspace, answer: Any):
        self.answer = answer
        self.path: Path | None = None
        folder = socket_dir()
        if folder is None:
            return
        path = Path(folder) / f"{socket_key(str(ws.root))}-{os.getpid()}.sock"
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
        after = None
        with conn:
            try:
                conn.settimeout(2.0)
                request = json.loads(read_line(conn, MAX_REQUEST))
                deadline = min(5.0, max(0.05, float(request.get("deadline", DEADLINE_S))))
                reply, after = self.answer(request, deadline)
            except Exception as exc:  # noqa: BLE001 - a bad request gets an error, the server goes on
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            try:
                conn.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            except OSError:
                return  # the hook gave up: nothing of this decision is recorded
        if after is not None:
            after()

    def close(self) -> None:
        if self.path is not None:
            try:
                self.sock.close()
                self.path.unlink(missing_ok=True)
            except OSError:
                pass


def serve(ws: Workspace, runtime: Any) -> Listener:
    """The MCP server's listener: each prompt is decided in its tool thread, bounded by the hook's deadline."""

    def answer(request: dict[str, Any], deadline: float) -> tuple[dict[str, Any], Any]:
        ctx = runtime.ctx
        if ctx is None:
            return {"error": runtime.open_error or "the workspace is not open yet"}, None
        payload = request.get("payload")
        if not isinstance(payload, dict):
            raise InvalidInputError("the request has no hook payload")
        config = hook_config(ctx.config, request.get("settings"))
        t0 = time.monotonic()
        job = runtime.executor.submit(
            recall_for_payload,
            ctx.workspace,
            config,
            payload,
            deadline=deadline,
            ctx=ctx,
            record=False,
            source="server",
        )
        try:
            decision = job.result(timeout=deadline)
        except TimeoutError:
            job.cancel()
            return {"error": f"busy for {deadline:.2f}s"}, None
        output, note = hook_output(decision)

        def record() -> None:
            if decision is not None:
                remember(ctx.workspace, payload_session(payload), decision)
            hook_log.log(
                ctx.workspace, "UserPromptSubmit", f"{note} ({(time.monotonic() - t0) * 1000:.0f} ms in the server)"
            )

        return {"output": output}, record

    return Listener(ws, answer)


def hook_config(config: Config, settings: Any) -> Config:
    """The server's settings with the recall ones as the hook's own environment gives them (plugin
    options reach each process through its environment; the hook's are the session's)."""
    env = settings if isinstance(settings, dict) else {}
    picked = {name: env[var] for name, var in setting_vars() if str(env.get(var, "")).strip()}
    if not picked:
        return config
    parsed = Config.from_mapping(picked)
    return config.replace(**{k: getattr(parsed, k) for k in picked})


# ---- one prompt -------------------------------------------------------------------------------------------


def payload_session(payload: dict[str, Any]) -> str | None:
    sid = payload.get("session_id")
    return sid if isinstance(sid, str) and sid else None


def recall_for_payload(
    ws: Workspace,
    config: Config,
    payload: dict[str, Any],
    *,
    deadline: float = DEADLINE_S,
    ctx: Any = None,
    record: bool = True,
    note: str = "",
    source: str = "in-process",
) -> Decision | None:
    """The hook's decision for its payload (None: auto_recall is off). ``ctx``: hybrid evidence in this
    process (the server), else keyword only; ``note``: why no server answered (the fallback)."""
    if not config.auto_recall or config.recall_chars <= 0:
        return None
    prompt, cwd = payload.get("prompt"), payload.get("cwd")
    return recall_for_prompt(
        ws,
        config,
        prompt if isinstance(prompt, str) else "",
        cwd if isinstance(cwd, str) else "",
        payload_session(payload),
        deadline=deadline,
        record=record,
        ctx=ctx,
        source=source,
        note=note,
    )


def hook_output(decision: Decision | None) -> tuple[str, str]:
    """(what the hook prints, its line in hooks.log)."""
    if decision is None:
        return "", "auto_recall off"
    if not decision.text:
        return "", f"recall ({decision.source or 'nothing asked'}): nothing injected: {decision.reason}"
    out = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": decision.text}}
    paths = ", ".join(c.shown for c in decision.injected)
    return json.dumps(out, ensure_ascii=False), f"recall ({decision.source}): {len(decision.text)} chars: {paths}"


def remember(ws: Workspace, session_id: str | None, decision: Decision) -> None:
    """What was injected into the session (no repeats), and the recall log's line."""
    prompt_recall.save_state(ws, session_id, decision, prompt_recall.load_state(ws, session_id))
    prompt_recall.log(ws, decision, session_id)


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
    source: str = "in-process",
    note: str = "",
) -> Decision:
    """What the hook injects for ``prompt`` (``record``: remember it for the session and log it).
    ``ctx``: hybrid evidence in this process (``source`` names it in the log); else keyword only, from
    the index read-only (``note``: why, for the log)."""
    t0 = time.monotonic()
    seen = prompt_recall.load_state(ws, session_id)["given"]
    why = prompt_recall.trivial(prompt)
    if why:
        decision = Decision(prompt, "", reason=why)
    else:
        decision = _evidence_and_decide(config, prompt, cwd, session_id, seen, t0 + deadline, ws, ctx, source, note)
    decision.ms = (time.monotonic() - t0) * 1000
    if record:
        remember(ws, session_id, decision)
    return decision


def _evidence_and_decide(
    config: Config,
    prompt: str,
    cwd: str,
    session_id: str | None,
    seen: dict[str, str],
    end: float,
    ws: Workspace,
    ctx: Any,
    source: str,
    note: str,
) -> Decision:
    project = None
    bar = prompt_recall.BAR
    if ctx is not None:
        from ..tools.prompt_candidates import candidates
        from ..tools.recall_scope import current_project

        information, found, notes = candidates(ctx, prompt, cwd)
        project = current_project(ctx, cwd).name or None
        bar = prompt_recall.bar_for(ctx.index.model_id)
    else:
        try:
            information, found, notes = call_with_timeout(read_only_evidence, (ws, prompt, cwd), end - time.monotonic())
        except ReMeError as exc:
            return Decision(prompt, "keyword-only", reason=f"deadline: {exc}", notes=[note] if note else [])
        source = "keyword-only"
        if note:
            notes = [f"{note}: keyword evidence only, no vectors", *notes]
    if project is None and cwd:
        from ..memory.project import detect

        project = detect(cwd).name or None
    decision = prompt_recall.decide(
        prompt,
        information,
        found,
        project=project,
        seen=seen,
        own_session=session_id,
        budget=config.recall_chars,
        source=source,
        bar=bar,
    )
    decision.notes = list(notes)
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
    try:  # the server's evidence, computed here (the model loads: seconds), or the fallback's
        decision = recall_for_prompt(
            ctx.workspace,
            config,
            prompt,
            cwd,
            args.session,
            record=False,
            deadline=5.0,
            ctx=None if args.keyword_only else ctx,
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
    if d.source:
        lines = [f"evidence from {how.get(d.source, 'the index read-only (keyword only)')} in {d.ms:.0f} ms"]
    else:  # a trivial turn: nothing looked up
        lines = ["not looked up: the prompt is a trivial turn"]
    lines += [f"note: {n}" for n in d.notes]
    b = d.bar
    standing = f"vector gap / {b.gap}"
    if b.foreign_z:
        standing = f"max(vector gap / {b.gap}, other language's z-score / {b.foreign_z})"
    bar = (
        f"bar: keyword share / {b.keyword} + {standing} >= 1 (without vectors: keyword share >= "
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
                + (f"other language z {c.foreign_z:.2f}  " if c.foreign_z else "")
                + f"tier {c.tier:g}  {c.shown}"
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
