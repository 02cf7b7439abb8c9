"""`reme-cc mcp`: the stdio MCP server, built from the one tool registry (reme_cc.tools).

Start-up is fast on purpose: the MCP handshake and ``tools/list`` are answered from the registry
alone; opening the workspace and syncing the index (jieba dictionary, embedder) happens in the one
worker thread in the background. Tool calls queue behind that warm-up in the same thread, so an
early call waits instead of seeing a half-built index; a single worker also keeps SQLite/faiss
access single-threaded while the asyncio loop stays free to answer pings and other requests.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

from . import __version__
from .errors import ReMeError

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
        from .tools import Context

        try:
            self.ctx = Context.open(self.workspace)
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
        from .index import keyword, sync

        index = self.ctx.index
        steps = [
            ("watch", index.watch),            # file notifications, set up in their own thread
            ("sync", index.sync),              # one walk: what changed while no server ran
            ("bm25", index.warm_keyword),      # snapshot load in the background; FTS5 answers meanwhile
            ("vectors", index.warm_vectors),   # the shared faiss file and the query model
            ("catch-up", self._housekeeping),  # backlog -> the embedding worker; idle release
            ("jieba", keyword.warm_up),        # the shared dictionary table, for the first CJK query
            ("parsers", sync.warm_up),         # for the first edit the watcher reports
        ]
        took: list[str] = []

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
        go of its models and in-memory indexes. Runs in the tool thread (SQLite/faiss stay
        single-threaded), every catchup.CHECK_EVERY_S."""
        from .index.catchup import CHECK_EVERY_S

        try:
            pid = self.ctx.index.catch_up()
            if pid:
                log.info("reme: embedding backlog handed to worker pid %d", pid)
            if self.ctx.index.release_idle():
                log.info("reme: idle: released the query model and in-memory indexes (reloaded by the next search)")
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
    from . import tools

    for name in (m.strip() for m in os.environ.get("REME_EXTRA_TOOL_MODULES", "").split(",")):
        if name:
            importlib.import_module(name)
    return tools.all_tools()


def tool_definitions() -> list[Any]:
    """MCP Tool objects for every registered tool (schema from the pydantic params)."""
    import mcp_types as types

    out = []
    for t in registry().values():
        schema = t.params.model_json_schema()
        schema.setdefault("properties", {})
        out.append(
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=schema,
                annotations=types.ToolAnnotations(
                    title=t.name.replace("_", " "),
                    read_only_hint=t.read_only,
                    destructive_hint=t.destructive,
                    idempotent_hint=t.idempotent,
                    open_world_hint=False,
                ),
            )
        )
    return out


def build_server(runtime: Runtime) -> Any:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = tool_definitions()

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        asyncio.get_running_loop().call_soon(runtime.start_warm_up)  # after this answer is on its way
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: Any) -> Any:
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(runtime.executor, runtime.call, params.name, params.arguments)
            return types.CallToolResult(content=_content(result), is_error=False)
        except ReMeError as exc:
            return _error(str(exc))
        except RuntimeError as exc:  # executor shut down: we are stopping
            return _error(f"reme server is shutting down ({exc}); retry")
        except Exception as exc:  # noqa: BLE001  (never crash the server on a tool bug)
            log.error("reme: tool %s crashed\n%s", params.name, traceback.format_exc())
            return _error(f"{params.name} failed unexpectedly: {exc!r} (see the MCP server log)")

    def _content(result: Any) -> list[Any]:
        # images (read_image) go out as MCP image content so the model sees the picture, not base64 text
        mime = getattr(result, "mime_type", None)
        if isinstance(mime, str) and mime.startswith("image/") and isinstance(getattr(result, "data", None), str):
            header = f"{getattr(result, 'path', '')}: {mime}, {getattr(result, 'size', '?')} bytes"
            return [types.TextContent(type="text", text=header),
                    types.ImageContent(type="image", data=result.data, mime_type=mime)]
        return [types.TextContent(type="text", text=result.text())]

    def _error(message: str) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)

    return Server("reme", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(runtime: Runtime) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(runtime)
    # On the CLI's SIGINT/SIGTERM (and SIGHUP: terminal closed) finish the running call (bounded),
    # close the index and leave. Cancelling the serve task is not enough: the stdio transport's stdin
    # reader is an uncancellable worker thread that anyio would wait for.
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, _stop_now, runtime, sig)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _stop_now(runtime: Runtime, sig: int) -> None:
    log.info("reme: MCP server stopping on signal %d", sig)
    runtime.close()
    sys.stdout.flush()
    os._exit(0)


def run(workspace: str | None = None) -> int:
    """Serve MCP on stdin/stdout until EOF or SIGINT/SIGTERM."""
    logging.basicConfig(level=os.environ.get("REME_LOG_LEVEL", "INFO"), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    runtime = Runtime(workspace)
    code = 0
    # not asyncio.run(): its shutdown joins the default executor, where the stdio transport's stdin
    # reader may block on read() forever; we leave with os._exit below instead
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_serve(runtime))
    except KeyboardInterrupt:
        pass
    except BaseException:  # noqa: BLE001
        log.error("reme: MCP server stopped on an error\n%s", traceback.format_exc())
        code = 1
    finally:
        runtime.close()
        sys.stdout.flush()
    # the stdio transport reads stdin in a helper thread that may still block on read(); leave now
    os._exit(code)


def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser("mcp", help="run the stdio MCP server (what Claude Code launches)")
    p.set_defaults(func=lambda args: run(getattr(args, "workspace", None)))


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else None)
