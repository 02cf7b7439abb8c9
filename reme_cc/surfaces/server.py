"""`reme-cc mcp`: the stdio MCP server, built from the one tool registry (reme_cc.tools).

Start-up is fast on purpose: the MCP handshake and ``tools/list`` are answered from the registry
alone, by a small standard-library JSON-RPC loop (below); opening the workspace and syncing the index
(jieba dictionary, vectors, query model) happens in the one worker thread in the background. Tool
calls queue behind that warm-up in the same thread, so an early call waits instead of seeing a
half-built index; a single worker also keeps SQLite access single-threaded while the reading thread
stays free to answer pings and other requests.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

from .. import __version__
from ..base.errors import ReMeError

log = logging.getLogger("reme.server")

WARM_UP_DELAY = 2.0  # seconds: warm up by then even if the client never lists the tools

INSTRUCTIONS = (
    "reme is the user's long-term memory: a folder of Markdown notes (daily logs, digests of people, "
    "procedures and wiki topics, past Claude Code sessions). Use `search` (semantic + keyword) or "
    "`traverse` (wikilink graph) to recall earlier sessions, preferences, decisions and project history, "
    "then `read` the hits and cite their workspace paths. Never invent memories; say so when nothing is found."
)


class Runtime:
    """The workspace context, opened lazily in the worker thread, and the tool executor."""

    def __init__(self, workspace: str | None = None, *, warm: bool = True):
        self.workspace = workspace
        self.ctx: Any = None
        self.listener: Any = None  # answers the UserPromptSubmit hook (surfaces/recall.py)
        self.open_error: str | None = None
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="reme-tool")
        self.started = time.monotonic()
        self.ready = threading.Event()
        self._warm = warm
        self._warm_started = threading.Lock()
        self._warm_pending = True
        self.executor.submit(self._open)
        # The warm-up (index sync, jieba, BM25) competes for the CPU with answering `initialize` and
        # `tools/list` (measured: tools listed 0.73 s after spawn without it, 1.2 s with it), so it starts
        # once the client has listed the tools, or after WARM_UP_DELAY at the latest.
        timer = threading.Timer(WARM_UP_DELAY, self.start_warm_up)
        timer.daemon = True
        timer.start()

    def start_warm_up(self) -> None:
        with self._warm_started:
            if not self._warm_pending:
                return
            self._warm_pending = False
        try:
            self.executor.submit(self._warm_up if self._warm else self.ready.set)
        except RuntimeError:  # already shutting down
            pass

    def _open(self) -> None:
        from ..tools import Context

        try:
            self.ctx = Context.open(self.workspace)
            if os.environ.get("REME_INTERNAL_AGENT") != "1":  # per-prompt recall asks the user's sessions' servers
                from .recall import serve

                self.listener = serve(self.ctx.workspace, self)
        except ReMeError as exc:
            self.open_error = str(exc)
            log.error("reme: cannot open the workspace: %s", exc)
        except Exception as exc:  # noqa: BLE001  (report, keep serving errors instead of dying)
            self.open_error = f"cannot open the workspace: {exc!r}"
            log.error("reme: %s\n%s", self.open_error, traceback.format_exc())

    def _warm_up(self) -> None:
        """Everything the first search would otherwise wait for, one step per job in the tool thread,
        so a call that arrives meanwhile waits for the step under way, not for all of them (it loads
        what it needs itself). Each step is logged with its time; a failing step is logged and skipped
        (search loads it again on first use and reports errors)."""
        if self.ctx is None:
            self.ready.set()
            return
        from ..index import keyword, sync

        t = time.monotonic()
        index = self.ctx.index  # numpy, jieba's module, the index database
        took = [f"open {time.monotonic() - t:.2f}s"]
        steps = [
            # threads of their own: file notifications, then the BM25 snapshot load (during the walk that
            # follows, or the first search's; FTS5 answers until it is in)
            ("watch", lambda: (index.watch(), index.warm_keyword())),
            ("sync", index.sync),  # one walk: what changed while no server ran
            ("vectors", index.warm_vectors),  # the shared vector file (mapped) and the query model
            ("catch-up", self._housekeeping),  # backlog -> the embedding worker; idle release
            ("jieba", keyword.warm_up),  # the shared dictionary table, for the first CJK query
            ("parsers", sync.warm_up),  # for the first edit the watcher reports
            ("links", index.warm_links),  # the link graph for search's expansion (a thread of its own)
            ("trim", index.trim_memory),  # what the warm-up (and FTS5 answers meanwhile) left in the heap
        ]

        def step(i: int) -> None:
            if i == len(steps):
                log.info("reme: ready %.2fs after start (%s)", time.monotonic() - self.started, ", ".join(took))
                self.ready.set()
                return
            name, fn = steps[i]
            t = time.monotonic()
            try:
                fn()
            except ReMeError as exc:
                log.error("reme: warm-up step %s failed: %s", name, exc)
            except Exception:  # noqa: BLE001  (tools still work on files; the error shows in `status`)
                log.error("reme: warm-up step %s failed\n%s", name, traceback.format_exc())
            took.append(f"{name} {time.monotonic() - t:.2f}s")
            try:
                self.executor.submit(step, i + 1)
            except RuntimeError:  # shutting down
                self.ready.set()

        step(0)

    def _housekeeping(self) -> None:
        """Vectors catch up whoever left the backlog (a killed worker is replaced); an idle server lets
        go of its models and in-memory indexes. Runs in the tool thread (SQLite stays
        single-threaded), every catchup.CHECK_EVERY_S."""
        from ..index.catchup import CHECK_EVERY_S

        try:
            pid = self.ctx.index.catch_up()
            if pid:
                log.info("reme: embedding backlog handed to worker pid %d", pid)
            if self.ctx.index.release_idle():
                log.info("reme: idle: released the query model and in-memory indexes (reloaded by the next search)")
            else:
                self.ctx.index.trim_memory()
        except Exception:  # noqa: BLE001  (search works without vectors; the error shows in `status`)
            log.warning("reme: embedding catch-up failed\n%s", traceback.format_exc())

        def again() -> None:
            try:
                self.executor.submit(self._housekeeping)
            except RuntimeError:  # shutting down
                pass

        timer = threading.Timer(CHECK_EVERY_S, again)
        timer.daemon = True
        timer.start()

    def call(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """Run one tool (in the worker thread). Raises ReMeError for user-facing failures."""
        if self.open_error:
            raise ReMeError(self.open_error)
        tools = registry()
        tool = tools.get(name)
        if tool is None:
            raise ReMeError(f"unknown tool {name!r}; available: {', '.join(sorted(tools))}")
        return tool.run(self.ctx, arguments or {})

    def close(self, wait: float = 3.0) -> None:
        if self.listener is not None:
            self.listener.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        done = threading.Event()

        def _close() -> None:
            try:
                if self.ctx is not None:
                    self.ctx.close()
            finally:
                done.set()

        # close in the worker's own order: after the running call (if any), bounded by `wait`
        threading.Thread(target=lambda: (self.executor.shutdown(wait=True), _close()), daemon=True).start()
        done.wait(wait)


def registry() -> dict[str, Any]:
    """Every registered tool (``tools.TOOL_MODULES``); ``REME_EXTRA_TOOL_MODULES`` (comma-separated
    modules, e.g. test tools) adds more. A module that cannot be imported fails loudly."""
    from .. import tools

    for name in (m.strip() for m in os.environ.get("REME_EXTRA_TOOL_MODULES", "").split(",")):
        if name:
            importlib.import_module(name)
    return tools.all_tools()


def tool_definitions() -> list[dict[str, Any]]:
    """The MCP ``tools/list`` entries of every registered tool (schema from the pydantic params)."""
    out = []
    for t in registry().values():
        schema = t.params.model_json_schema()
        schema.setdefault("properties", {})
        out.append(
            {
                "name": t.name,
                "description": t.description,
                "inputSchema": schema,
                "annotations": {
                    "title": t.name.replace("_", " "),
                    "readOnlyHint": t.read_only,
                    "destructiveHint": t.destructive,
                    "idempotentHint": t.idempotent,
                    "openWorldHint": False,
                },
            }
        )
    return out


# MCP over stdio, spoken here with the standard library: one JSON-RPC message per line. The SDK's
# server took ~0.35 s and ~30 MB per window to import (pydantic models of every protocol revision,
# its HTTP transports) for the four methods a tools-only server answers.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # the initialize handshake's
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


class Protocol:
    """Answers MCP requests from ``handle(line)``; replies go to ``send`` (any thread). ``initialize``,
    ``ping`` and ``tools/list`` are answered at once in the reading thread, tool calls in the runtime's
    worker thread (a slow call never delays them)."""

    def __init__(self, runtime: Runtime, send: Any):
        self.runtime = runtime
        self.send = send
        self._tools: list[dict[str, Any]] | None = None
        self._calls: dict[Any, concurrent.futures.Future[Any]] = {}  # request id -> queued or running call
        self._lock = threading.Lock()

    def handle(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):  # not JSON (or invalid UTF-8, or a nesting bomb)
            self._error(None, PARSE_ERROR, "Parse error")
            return
        if not isinstance(msg, dict) or ("method" not in msg and ("result" in msg or "error" in msg)):
            return  # a batch (no longer part of MCP) or a response: we send no requests
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params")
        if "id" not in msg:
            self._notification(method, params)
            return
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str) or not _valid_id(rid):
            self._error(rid if _valid_id(rid) else None, INVALID_REQUEST, "Invalid request")
            return
        if params is not None and not isinstance(params, dict):
            self._error(rid, INVALID_PARAMS, "params must be an object")
            return
        params = params or {}
        if method == "initialize":
            version = params.get("protocolVersion")
            self._result(
                rid,
                {
                    "protocolVersion": version if version in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "reme", "version": __version__},
                    "instructions": INSTRUCTIONS,
                },
            )
        elif method == "ping":
            self._result(rid, {})
        elif method == "tools/list":
            if self._tools is None:
                self._tools = tool_definitions()
            self._result(rid, {"tools": self._tools})
            self.runtime.start_warm_up()  # after this answer is on its way
        elif method == "tools/call":
            self._call(rid, params)
        else:
            self._error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")

    def _notification(self, method: Any, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            with self._lock:
                fut = self._calls.get(params.get("requestId")) if _valid_id(params.get("requestId")) else None
            if fut is not None:
                fut.cancel()  # only a call still queued; a cancelled request gets no answer

    def _call(self, rid: Any, params: dict[str, Any]) -> None:
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, (dict, type(None))):
            self._error(rid, INVALID_PARAMS, "tools/call needs a tool name and an arguments object")
            return
        try:
            fut = self.runtime.executor.submit(self.runtime.call, name, arguments)
        except RuntimeError as exc:  # executor shut down: we are stopping
            self._result(rid, _tool_error(f"reme server is shutting down ({exc}); retry"))
            return
        with self._lock:
            self._calls[rid] = fut
        fut.add_done_callback(lambda f: self._finish(rid, name, f))

    def _finish(self, rid: Any, name: str, fut: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._calls.pop(rid, None)
        if fut.cancelled():
            return
        try:
            result = {"content": _content(fut.result()), "isError": False}
        except ReMeError as exc:
            result = _tool_error(str(exc))
        except Exception as exc:  # noqa: BLE001  (never crash the server on a tool bug)
            log.error("reme: tool %s crashed\n%s", name, "".join(traceback.format_exception(exc)))
            result = _tool_error(f"{name} failed unexpectedly: {exc!r} (see the MCP server log)")
        self._result(rid, result)

    def _result(self, rid: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _error(self, rid: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def _valid_id(rid: Any) -> bool:
    return isinstance(rid, (str, int)) and not isinstance(rid, bool)


def _content(result: Any) -> list[dict[str, Any]]:
    # images (read_image) go out as MCP image content so the model sees the picture, not base64 text
    mime = getattr(result, "mime_type", None)
    if isinstance(mime, str) and mime.startswith("image/") and isinstance(getattr(result, "data", None), str):
        header = f"{getattr(result, 'path', '')}: {mime}, {getattr(result, 'size', '?')} bytes"
        return [{"type": "text", "text": header}, {"type": "image", "data": result.data, "mimeType": mime}]
    return [{"type": "text", "text": result.text()}]


def _tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _encode(msg: dict[str, Any]) -> bytes:
    try:
        return json.dumps(msg, ensure_ascii=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate from an undecodable file name: escaped instead
        return json.dumps(msg).encode("ascii") + b"\n"


def _stop_now(runtime: Runtime, sig: int) -> None:
    log.info("reme: MCP server stopping on signal %d", sig)
    runtime.close()
    sys.stdout.flush()
    os._exit(0)


def run(workspace: str | None = None) -> int:
    """Serve MCP on stdin/stdout until EOF or SIGINT/SIGTERM/SIGHUP (terminal closed): finish the
    running call (bounded), close the index and leave."""
    logging.basicConfig(
        level=os.environ.get("REME_LOG_LEVEL", "INFO"),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    runtime = Runtime(workspace)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    out_lock = threading.Lock()

    def send(msg: dict[str, Any]) -> None:
        data = _encode(msg)
        with out_lock:
            try:
                stdout.write(data)
                stdout.flush()
            except (BrokenPipeError, ValueError):  # the client is gone; EOF on stdin follows
                pass

    protocol = Protocol(runtime, send)
    ended = threading.Event()
    failed: list[str] = []

    def read() -> None:
        try:
            for line in iter(stdin.readline, b""):
                protocol.handle(line)
        except BaseException:  # noqa: BLE001
            failed.append(traceback.format_exc())
        finally:
            ended.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: _stop_now(runtime, s))
    threading.Thread(target=read, name="reme-stdin", daemon=True).start()
    # Python runs signal handlers in the main thread only, between bytecodes, whichever thread the
    # kernel interrupted; so the main thread does nothing but wait, waking up every 0.2 s.
    while not ended.wait(0.2):
        pass
    if failed:
        log.error("reme: MCP server stopped on an error\n%s", failed[0])
    runtime.close()
    sys.stdout.flush()
    os._exit(1 if failed else 0)  # worker threads (a running call, the watcher) must not keep the process alive


def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser("mcp", help="run the stdio MCP server (what Claude Code launches)")
    p.set_defaults(func=lambda args: run(getattr(args, "workspace", None)))


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
