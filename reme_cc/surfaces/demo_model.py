"""The OFFLINE SCRIPTED MODEL of `reme-cc demo`: a tiny stand-in for the Anthropic Messages API.

It listens on 127.0.0.1 (a random port) and nowhere else, and answers every model call of one demo
run with canned text: the Claude Code session, the recorder agent, and the dream's extractor,
coordinator and integrator subagents. The real Claude Code CLI and the real Agent SDK talk to it
exactly as they talk to the API (``ANTHROPIC_BASE_URL``), so everything else in the loop — hooks,
transcript copy, recorder, note service, dream, index — is the product's own code.

It tells the callers apart by their system prompt (the first line of each agent's prompt file) and
answers like the real model would, through the same tools: ``daily_write`` for the recorder, the
extractor's JSON object, one ``Agent`` call per unit for the coordinator, ``search`` → ``write`` →
the final JSON line for each integrator. No request ever leaves the machine; nothing is spent.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Iterator

LABEL = "OFFLINE SCRIPTED MODEL"


@dataclass(frozen=True)
class Script:
    """What the scripted model says, for one demo story."""

    session_reply: str  # the assistant's answer in the Claude Code session
    card_name: str  # the recorder's daily_write call
    card_description: str
    card_content: str
    unit_name: str  # the extractor's one unit (its paths: the changed cards it was shown)
    unit_bucket: str
    unit_summary: str
    node_path: str  # what the integrator writes (its Sources: the unit's paths)
    node_description: str
    node_body: str
    topics: list[dict[str, str]] = field(default_factory=list)


def _text(content: Any) -> str:
    """The text of a message's content: a string or a list of blocks (tool results included)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            parts.append(_text(block.get("content")))
    return "\n".join(p for p in parts if p)


class Call:
    """One /v1/messages request, with the views the script needs."""

    def __init__(self, body: dict[str, Any], headers: dict[str, str]):
        self.body = body
        self.messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        self.subagent = bool(headers.get("x-claude-code-agent-id"))  # the CLI marks a subagent's requests
        system = [_text(body.get("system"))] + [
            _text(m.get("content")) for m in self.messages if m.get("role") == "system"
        ]
        self.system = "\n".join(system)
        users = [m for m in self.messages if m.get("role") == "user"]
        self.first_user = _text(users[0].get("content")) if users else ""
        self.last_user = users[-1].get("content") if users else ""
        self.turn = sum(1 for m in self.messages if m.get("role") == "assistant")
        self.tools = [str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict)]

    def tool(self, name: str) -> str:
        """The name this caller knows registry tool ``name`` by (``mcp__reme__write``, …)."""
        return next((t for t in self.tools if t == name or t.endswith("__" + name)), name)

    def results(self) -> list[tuple[dict[str, Any], str, bool]]:
        """(the tool_use's input, the result's text, is_error) for each result in the last user message."""
        uses = {}
        for m in self.messages:
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                uses.update(
                    {
                        b.get("id"): b.get("input") or {}
                        for b in m["content"]
                        if isinstance(b, dict) and b.get("type") == "tool_use"
                    }
                )
        blocks = self.last_user if isinstance(self.last_user, list) else []
        return [
            (uses.get(b.get("tool_use_id"), {}), _text(b.get("content")), bool(b.get("is_error")))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]


def _markers() -> dict[str, str]:
    """The first line of each agent's system prompt: how a request says which agent it comes from."""
    from .agent import load_agent
    from ..memory.dream import COORDINATOR_PROMPT

    first = {
        name: load_agent(name).prompt.strip().splitlines()[0]
        for name in ("recorder", "dream-extractor", "dream-integrator")
    }
    first["coordinator"] = COORDINATOR_PROMPT.strip().splitlines()[0]
    return first


_ids = itertools.count(1)


def _tool_use(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_demo{next(_ids):06d}", "name": name, "input": data}


def _say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


class ScriptedModel:
    """``with ScriptedModel(script) as model:`` → ``model.url`` for ANTHROPIC_BASE_URL; ``model.calls``
    counts what it answered, per caller (session, recorder, extractor, coordinator, integrator)."""

    def __init__(self, script: Script):
        self.script = script
        self.markers = _markers()
        self.calls: dict[str, int] = {}
        self.input_tokens = 0  # about what the same calls would send a real model (4 bytes a token)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ScriptedModel:
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-model", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # ---- the script ------------------------------------------------------------------------------
    def caller(self, call: Call) -> str:
        m = self.markers
        if m["recorder"] in call.system:
            return "recorder"
        if m["dream-extractor"] in call.system:
            return "extractor"
        if m["coordinator"] in call.system:
            return "coordinator"
        if call.subagent and m["dream-integrator"] in call.system:
            return "integrator"
        return "session"  # the user's Claude Code session (and any side request of its CLI)

    def answer(self, call: Call) -> list[dict[str, Any]]:
        who = self.caller(call)
        with self._lock:
            self.calls[who] = self.calls.get(who, 0) + 1
            self.input_tokens += len(json.dumps(call.body)) // 4
        return getattr(self, "_" + who)(call)

    def _session(self, call: Call) -> list[dict[str, Any]]:
        return _say(self.script.session_reply)

    def _recorder(self, call: Call) -> list[dict[str, Any]]:
        s = self.script
        if call.results():  # daily_write answered: done
            return _say("Recorded the session's card.")
        return [
            _tool_use(
                call.tool("daily_write"),
                {"name": s.card_name, "description": s.card_description, "content": s.card_content},
            )
        ]

    def _extractor(self, call: Call) -> list[dict[str, Any]]:
        s = self.script
        paths = re.findall(r"^### (daily/.+\.md)$", _text(call.last_user), re.M)  # the changed cards it was shown
        units = (
            [
                {
                    "name": s.unit_name,
                    "bucket": s.unit_bucket,
                    "summary": s.unit_summary,
                    "paths": paths,
                    "scope": "general",
                }
            ]
            if paths
            else []
        )
        return _say("```json\n" + json.dumps({"units": units, "topics": s.topics}, ensure_ascii=False) + "\n```")

    def _coordinator(self, call: Call) -> list[dict[str, Any]]:
        results = call.results()
        if results:  # every integrator came back: one JSON line per unit, copied from theirs
            lines = []
            for used, said, _error in results:
                unit = re.search(r"integrate unit (\d+)", str(used.get("description", "")))
                final = re.findall(r'\{"action".*\}', said)
                report = json.loads(final[-1]) if final else {"action": None, "error": said[:200] or "no answer"}
                lines.append(
                    json.dumps(
                        {
                            "unit": int(unit.group(1)) if unit else 0,
                            "action": report.get("action"),
                            "path": report.get("path"),
                            "error": report.get("error"),
                            **{k: report[k] for k in ("subject", "values") if k in report},  # a CONFLICT's
                        }
                    )
                )
            return _say("\n".join(lines))
        units = re.findall(r'<unit id="(\d+)">\n(.*?)\n</unit>', _text(call.last_user), re.S)
        return [
            _tool_use(
                "Agent",
                {
                    "subagent_type": "dream-integrator",
                    "description": f"integrate unit {uid}",
                    "prompt": prompt,
                    "run_in_background": False,
                },
            )
            for uid, prompt in units
        ]

    def _integrator(self, call: Call) -> list[dict[str, Any]]:
        s = self.script
        if call.turn == 0:  # recall first, as the integrator's prompt asks
            return [_tool_use(call.tool("search"), {"query": s.unit_name, "folder": "digest", "limit": 10})]
        if call.turn == 1:
            sources = re.findall(r"^- \[\[(.+?)\]\]$", call.first_user, re.M)  # the unit's source paths
            links = "\n".join(f"- Said in the session recorded in [[{p}]]." for p in sources)
            node = (
                f"---\nname: {s.unit_name}\ndescription: {s.node_description}\n---\n"
                f"{s.node_body}\n\n## Sources\n\n{links}\n"
            )
            return [_tool_use(call.tool("write"), {"path": s.node_path, "content": node})]
        (_used, said, error), *_ = call.results() or [({}, "", True)]
        if error:
            return _say(json.dumps({"action": None, "path": s.node_path, "error": said[:200] or "the write failed"}))
        return _say("Created the node.\n" + json.dumps({"action": "CREATE", "path": s.node_path, "related": []}))


# ---- the HTTP side: /v1/messages (JSON or SSE stream) and /v1/messages/count_tokens -------------------
def _message(call: Call, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    usage = {
        "input_tokens": max(1, len(json.dumps(call.body)) // 4),
        "output_tokens": max(1, len(json.dumps(blocks)) // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    return {
        "id": f"msg_demo{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": call.body.get("model", "demo-scripted"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The message as the API streams it (what the CLI reads)."""
    yield {
        "type": "message_start",
        "message": dict(message, content=[], stop_reason=None, usage=dict(message["usage"], output_tokens=1)),
    }
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            yield {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
            }
            yield {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            }
        else:
            yield {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            yield {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}
        yield {"type": "content_block_stop", "index": i}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet: the demo prints what matters
            pass

        def do_GET(self) -> None:
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = self.path.split("?")[0]
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            if not isinstance(body, dict):
                self._json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "not JSON"}})
            elif path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            elif path != "/v1/messages":
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
            else:
                call = Call(body, {k.lower(): v for k, v in self.headers.items()})
                message = _message(call, model.answer(call))
                try:
                    self._stream(message) if body.get("stream") else self._json(200, message)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away

        def _json(self, status: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")  # the stream ends when we close
            self.end_headers()
            self.close_connection = True
            for event in _events(message):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

    return Handler
