"""Stdlib MCP stand-in used while the plugin's Python environment is being built (first install).

Claude Code waits only a few seconds for an MCP server, and the first install takes minutes. So the
launcher answers the handshake at once from here: ``initialize``, ``ping``, ``tools/list`` (one
``status`` tool) and any ``tools/call`` with "reme is preparing its Python environment ...; retry in
a minute" (or the install error). When the build finishes it starts the real server, replays the
client's ``initialize`` to it, sends ``notifications/tools/list_changed`` to the client and from then
on relays bytes both ways. Standard library only.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any
from collections.abc import Callable

from .. import __version__

HANDOVER_ID = "reme-standin-handover"


class StandIn:
    def __init__(
        self, build: Callable[[], str], server_argv: Callable[[str], list[str]], stdin: Any = None, stdout: Any = None
    ):
        self.build = build  # () -> python path; raises with a user-facing message
        self.server_argv = server_argv
        self.stdin = stdin or sys.stdin.buffer
        self.stdout = stdout or sys.stdout.buffer
        self.inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.out_lock = threading.Lock()
        self.started = time.monotonic()
        self.init_request: dict[str, Any] | None = None
        self.initialized_sent = False
        self.error: str | None = None
        self.child: subprocess.Popen[bytes] | None = None

    # ---- io
    def write(self, obj: dict[str, Any] | bytes) -> None:
        data = obj if isinstance(obj, bytes) else (json.dumps(obj) + "\n").encode()
        with self.out_lock:
            self.stdout.write(data)
            self.stdout.flush()

    def _read_stdin(self) -> None:
        for line in iter(self.stdin.readline, b""):
            self.inbox.put(("line", line))
        self.inbox.put(("eof", None))

    def _run_build(self) -> None:
        try:
            self.inbox.put(("built", self.build()))
        except Exception as exc:  # noqa: BLE001  (the message is what the user needs)
            self.inbox.put(("failed", str(exc)))

    # ---- protocol while preparing
    def message(self) -> str:
        if self.error:
            return self.error
        waited = time.monotonic() - self.started
        return (
            f"reme is preparing its Python environment (first start or after an update; about 1-3 minutes, "
            f"{waited:.0f}s so far); retry this call in a minute"
        )

    def answer(self, msg: dict[str, Any]) -> None:
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            self.init_request = msg
            version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "reme", "version": __version__},
                        "instructions": "reme long-term memory (starting up).",
                    },
                }
            )
        elif method == "notifications/initialized":
            self.initialized_sent = True
        elif rid is None:
            pass  # other notifications
        elif method == "ping":
            self.write({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "tools": [
                            {
                                "name": "status",
                                "description": "Status of the reme memory server (it is still preparing; the memory tools "
                                "search, read, write, traverse... appear when it is ready).",
                                "inputSchema": {"type": "object", "properties": {}},
                                "annotations": {"readOnlyHint": True},
                            }
                        ]
                    },
                }
            )
        elif method == "tools/call":
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {"content": [{"type": "text", "text": self.message()}], "isError": True},
                }
            )
        else:
            self.write(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"{method}: {self.message()}"}}
            )

    # ---- handover
    def hand_over(self, python: str) -> bool:
        """Start the real server and replay the handshake. False (and stay a stand-in) on failure."""
        try:
            self.child = subprocess.Popen(self.server_argv(python), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as exc:
            self.error = f"reme could not start its MCP server with {python}: {exc}"
            return False
        assert self.child.stdin and self.child.stdout
        if self.init_request is not None:
            self.child.stdin.write((json.dumps(dict(self.init_request, id=HANDOVER_ID)) + "\n").encode())
            self.child.stdin.flush()
            while True:  # wait for the real server's initialize reply, swallow it
                line = self.child.stdout.readline()
                if not line:
                    self.error = f"reme's MCP server ({python}) exited during start-up; run `reme-cc doctor`"
                    return False
                try:
                    if json.loads(line).get("id") == HANDOVER_ID:
                        break
                except ValueError:
                    continue
            if self.initialized_sent:
                self.child.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
                self.child.stdin.flush()
        threading.Thread(target=self._pump_child, daemon=True).start()
        self.write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return True

    def _pump_child(self) -> None:
        assert self.child and self.child.stdout
        for line in iter(self.child.stdout.readline, b""):
            self.write(line)
        self.inbox.put(("child-exit", None))

    # ---- main loop
    def run(self) -> int:
        threading.Thread(target=self._read_stdin, daemon=True).start()
        threading.Thread(target=self._run_build, daemon=True).start()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda s, f: self.inbox.put(("signal", s)))
        while True:
            kind, value = self.inbox.get()
            if kind == "line":
                if self.child is not None and self.child.poll() is None:
                    assert self.child.stdin
                    try:
                        self.child.stdin.write(value)
                        self.child.stdin.flush()
                    except BrokenPipeError:
                        pass
                    continue
                try:
                    msg = json.loads(value)
                except ValueError:
                    continue
                if isinstance(msg, dict):
                    self.answer(msg)
            elif kind == "built":
                if not self.hand_over(value):
                    print(self.error, file=sys.stderr)
            elif kind == "failed":
                self.error = value
                print(value, file=sys.stderr)
            elif kind in ("eof", "signal", "child-exit"):
                return self.stop(value if kind == "signal" else None)

    def stop(self, sig: int | None) -> int:
        child = self.child
        if child is not None and child.poll() is None:
            try:
                if sig is not None:
                    child.send_signal(sig)
                elif child.stdin:
                    child.stdin.close()
                child.wait(5)
            except (subprocess.TimeoutExpired, OSError):
                child.kill()
                child.wait()
        return 0


def serve(build: Callable[[], str], server_argv: Callable[[str], list[str]]) -> int:
    code = StandIn(build, server_argv).run()
    sys.stdout.flush()
    os._exit(code)  # the stdin reader thread may still block on read()
