"""A minimal raw JSON-RPC client for stdio MCP servers (no mcp package needed), for server tests.

Example::

    with McpProcess([sys.executable, "-m", "reme_cc.surfaces.server"], env=env) as srv:
        srv.initialize()
        names = [t["name"] for t in srv.request("tools/list")["tools"]]
        out = srv.call_tool("read", {"path": "a.md"})   # -> result dict (content, isError)
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from typing import Any
from collections.abc import Mapping, Sequence

PROTOCOL = "2025-06-18"


class McpProcess:
    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None):
        self.argv = list(argv)
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env else None,
            cwd=cwd,
            start_new_session=True,
        )
        self._next = 1
        self._replies: dict[int, dict[str, Any]] = {}
        self.arrived: dict[int, float] = {}  # reply id -> monotonic arrival time (per-call latency)
        self._cond = threading.Condition()
        self.notifications: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "id" in msg and ("result" in msg or "error" in msg):
                with self._cond:
                    self.arrived[msg["id"]] = time.monotonic()
                    self._replies[msg["id"]] = msg
                    self._cond.notify_all()
            else:
                self.notifications.put(msg)

    def _read_err(self) -> None:
        assert self.proc.stderr
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        self.proc.stdin.flush()

    def start_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        rid = self._next
        self._next += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def wait(self, rid: int, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None and rid not in self._replies:
                    raise TimeoutError(f"no reply to request {rid}; stderr:\n{''.join(self.stderr_lines)[-3000:]}")
                self._cond.wait(min(left, 0.1))
            msg = self._replies.pop(rid)
        if "error" in msg:
            raise RuntimeError(f"JSON-RPC error: {msg['error']}")
        return msg["result"]

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        return self.wait(self.start_request(method, params), timeout)

    def initialize(self) -> dict[str, Any]:
        res = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "reme-test", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return res

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, timeout: float = 60.0) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments or {}}, timeout)

    @staticmethod
    def text(result: dict[str, Any]) -> str:
        return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")

    def close_stdin(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()

    def stop(self, sig: int | None = None, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            if sig is None:
                self.close_stdin()
            else:
                self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise

    def __enter__(self) -> McpProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
