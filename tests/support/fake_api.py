"""A scripted fake Anthropic Messages API on 127.0.0.1, for driving the real Claude CLI and the SDK.

Example::

    from support.fake_api import FakeAPI, text, tool_use, last_user_contains, tool_result_contains

    with FakeAPI() as api:
        # a rule = predicate + reply (repeats) or list of replies (consumed in order, then it stops matching)
        api.rule(last_user_contains("what did we decide"),
                 [tool_use("mcp__plugin_reme_reme__search", {"query": "decision"}),
                  text("We decided to use SQLite.")])
        api.rule(tool_result_contains("boom"), text("the tool failed"))
        api.fail(529, times=2)               # the next 2 requests get HTTP 529 overloaded
        api.default = text("OK")             # when no rule matches
        run(..., env={"ANTHROPIC_BASE_URL": api.url})
        assert api.tool_results("mcp__plugin_reme_reme__search")[0].text.startswith("1.")
        assert api.requests[0].headers.get("x-claude-code-agent-id") is None

As a pytest fixture: ``from support.fake_api import fake_api  # noqa: F401`` in a test module, then
take ``fake_api`` as an argument.

Serves ``POST /v1/messages`` (SSE when ``"stream": true``, else one JSON message) and
``POST /v1/messages/count_tokens``. Accepts ``role: "system"`` entries inside ``messages`` (the CLI
sends them). Every request is logged in ``api.requests`` (path, headers, body) before it is answered.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Callable, Iterable, Iterator

# --------------------------------------------------------------------------- requests


def _block_text(block: Any) -> str:
    """Text of one content block (text, tool_result with nested content, or plain string)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        return content_text(block.get("content"))
    return ""


def content_text(content: Any) -> str:
    """Join the text of a message ``content`` (a string or a list of blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (_block_text(b) for b in content) if t)
    return _block_text(content)


@dataclass
class ToolResult:
    tool_use_id: str
    name: str | None  # the tool_use it answers, when found in the same request
    input: Any
    text: str
    is_error: bool


@dataclass
class Request:
    """One logged HTTP request."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    raw: bytes
    time: float = field(default_factory=time.time)

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages")
        return msgs if isinstance(msgs, list) else []

    @property
    def system_text(self) -> str:
        """The ``system`` parameter plus any ``role: "system"`` messages, as one string."""
        parts = [content_text(self.body.get("system"))]
        parts += [content_text(m.get("content")) for m in self.messages if m.get("role") == "system"]
        return "\n".join(p for p in parts if p)

    @property
    def last_user(self) -> dict[str, Any] | None:
        for msg in reversed(self.messages):
            if msg.get("role") == "user":
                return msg
        return None

    @property
    def last_user_text(self) -> str:
        """Text of the last user message, tool_result contents included."""
        msg = self.last_user
        return content_text(msg.get("content")) if msg else ""

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools") or [] if isinstance(t, dict)]

    @property
    def agent_id(self) -> str | None:
        """Set only on subagent requests of the real CLI."""
        return self.headers.get("x-claude-code-agent-id")

    @property
    def session_id(self) -> str | None:
        return self.headers.get("x-claude-code-session-id")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def tool_results(self, last_only: bool = False) -> list[ToolResult]:
        """tool_result blocks in the messages (only the last user message if ``last_only``),
        each paired with the name/input of the tool_use it answers."""
        uses: dict[str, dict[str, Any]] = {}
        out: list[ToolResult] = []
        msgs = self.messages
        if last_only:
            last = self.last_user
            scan_results = [last] if last else []
        else:
            scan_results = msgs
        for msg in msgs:
            if msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
                for b in msg["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_use":
                        uses[str(b.get("id"))] = b
        for msg in scan_results:
            if msg.get("role") != "user" or not isinstance(msg.get("content"), list):
                continue
            for b in msg["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    use = uses.get(str(b.get("tool_use_id")), {})
                    out.append(
                        ToolResult(
                            str(b.get("tool_use_id")),
                            use.get("name"),
                            use.get("input"),
                            content_text(b.get("content")),
                            bool(b.get("is_error")),
                        )
                    )
        return out


# --------------------------------------------------------------------------- replies


@dataclass
class Reply:
    """What the fake model answers: content blocks, or an HTTP error, or a hang."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None  # default: tool_use if any tool_use block else end_turn
    status: int = 200  # != 200: an HTTP error reply
    error_type: str = "api_error"
    error_message: str = "fake error"
    retry: bool | None = None  # sets x-should-retry on errors when not None
    hang: float = 0.0  # seconds to wait before answering (the server's stop() releases it)
    delay: float = 0.0  # seconds between SSE events
    usage: dict[str, int] | None = None

    def then(self, other: Reply) -> Reply:
        """Concatenate the blocks of two replies (e.g. text + tool_use in one turn)."""
        return Reply(self.blocks + other.blocks, other.stop_reason or self.stop_reason)

    def __add__(self, other: Reply) -> Reply:
        return self.then(other)


_ids = itertools.count(1)


def text(s: str) -> Reply:
    return Reply([{"type": "text", "text": s}])


def tool_use(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> Reply:
    return Reply([{"type": "tool_use", "id": id or f"toolu_fake{next(_ids):06d}", "name": name, "input": input or {}}])


def error(status: int = 500, message: str | None = None, retry: bool | None = None) -> Reply:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    return Reply(status=status, error_type=kind, error_message=message or f"fake {kind}", retry=retry)


def hang(seconds: float = 3600.0) -> Reply:
    """Accept the request and answer nothing for ``seconds`` (then a short text)."""
    return Reply([{"type": "text", "text": "(late reply)"}], hang=seconds)


ReplySpec = Reply | Callable[[Request], Reply]
Predicate = Callable[[Request], bool]


# --------------------------------------------------------------------------- predicates


def always(_req: Request) -> bool:
    return True


def system_contains(s: str) -> Predicate:
    return lambda req: s in req.system_text


def last_user_contains(s: str) -> Predicate:
    return lambda req: s in req.last_user_text


def any_user_contains(s: str) -> Predicate:
    """``s`` in any user message (e.g. the session's first prompt, even after tool turns)."""
    return lambda req: any(s in content_text(m.get("content")) for m in req.messages if m.get("role") == "user")


def tool_result_contains(s: str) -> Predicate:
    """The last user message carries a tool_result whose text contains ``s``."""
    return lambda req: any(s in r.text for r in req.tool_results(last_only=True))


def tool_result_for(name: str) -> Predicate:
    """The last user message answers a tool_use of tool ``name``."""
    return lambda req: any(r.name == name for r in req.tool_results(last_only=True))


def header_equals(name: str, value: str | None) -> Predicate:
    return lambda req: req.headers.get(name.lower()) == value


def is_subagent(req: Request) -> bool:
    return req.agent_id is not None


def is_main(req: Request) -> bool:
    return req.agent_id is None


def has_tool(name: str) -> Predicate:
    return lambda req: name in req.tool_names


def all_of(*preds: Predicate) -> Predicate:
    return lambda req: all(p(req) for p in preds)


def any_of(*preds: Predicate) -> Predicate:
    return lambda req: any(p(req) for p in preds)


def not_(pred: Predicate) -> Predicate:
    return lambda req: not pred(req)


@dataclass
class Rule:
    when: Predicate
    replies: list[ReplySpec] | None  # consumed in order; None -> ``repeat`` forever
    repeat: ReplySpec | None = None
    hits: int = 0

    def take(self, req: Request) -> ReplySpec | None:
        if not self.when(req):
            return None
        if self.replies is None:
            self.hits += 1
            return self.repeat
        if not self.replies:
            return None
        self.hits += 1
        return self.replies.pop(0)


# --------------------------------------------------------------------------- server


class FakeAPI:
    """The fake server. Thread-safe; rules may be added while it runs."""

    def __init__(self, default: ReplySpec | None = None, *, host: str = "127.0.0.1", port: int = 0):
        self.default: ReplySpec = default or text("OK (fake default reply).")
        self.requests: list[Request] = []
        self.rules: list[Rule] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ---- lifecycle
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAPI:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, name="fake-anthropic", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases hanging replies
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---- scripting
    def rule(self, when: Predicate, reply: ReplySpec | Iterable[ReplySpec], *, first: bool = False) -> Rule:
        """Add a rule. A single reply repeats; a list is consumed in order (then the rule stops matching).
        Rules are tried in the order added (``first=True`` puts this one in front)."""
        if isinstance(reply, Reply) or callable(reply):
            r = Rule(when, None, reply)  # type: ignore[arg-type]
        else:
            r = Rule(when, list(reply))
        with self._lock:
            if first:
                self.rules.insert(0, r)
            else:
                self.rules.append(r)
        return r

    def script(self, *replies: ReplySpec, when: Predicate = always) -> Rule:
        """Shorthand: these replies, in order, to the requests matching ``when``."""
        return self.rule(when, list(replies))

    def fail(
        self, status: int = 529, times: int | None = 1, *, when: Predicate = always, retry: bool | None = None
    ) -> Rule:
        """The next ``times`` matching requests (all of them if None) get an HTTP error."""
        err = error(status, retry=retry)
        return self.rule(when, err if times is None else [err] * times, first=True)

    def hang(self, seconds: float = 3600.0, times: int | None = 1, *, when: Predicate = always) -> Rule:
        h = hang(seconds)
        return self.rule(when, h if times is None else [h] * times, first=True)

    # ---- assertions
    def messages_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    def tool_results(self, name: str | None = None) -> list[ToolResult]:
        """Every distinct tool_result the client sent (first occurrence), optionally for tool ``name``."""
        seen: dict[str, ToolResult] = {}
        for req in self.messages_requests():
            for res in req.tool_results():
                seen.setdefault(res.tool_use_id, res)
        return [r for r in seen.values() if name is None or r.name == name]

    def wait_for(self, pred: Predicate, timeout: float = 30.0) -> Request:
        """Block until a logged request satisfies ``pred``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for req in self.requests:
                    if pred(req):
                        return req
            time.sleep(0.02)
        raise TimeoutError(f"no matching request within {timeout}s ({len(self.requests)} logged)")

    # ---- internals
    def _choose(self, req: Request) -> Reply:
        with self._lock:
            spec: ReplySpec | None = None
            for r in self.rules:
                spec = r.take(req)
                if spec is not None:
                    break
            if spec is None:
                spec = self.default
        return spec(req) if callable(spec) and not isinstance(spec, Reply) else spec  # type: ignore[return-value]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                api._log(self, b"")
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                req = api._log(self, raw)
                path = self.path.split("?")[0]
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": max(1, len(raw) // 4)})
                    return
                if path != "/v1/messages":
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
                    return
                if not isinstance(req.body.get("messages"), list):
                    self._json(
                        400,
                        {
                            "type": "error",
                            "error": {"type": "invalid_request_error", "message": "messages: field required"},
                        },
                    )
                    return
                try:
                    reply = api._choose(req)
                except Exception as exc:  # a broken rule must show up, not hang the client
                    self._json(500, {"type": "error", "error": {"type": "api_error", "message": f"fake rule: {exc!r}"}})
                    return
                if reply.hang:
                    api._stopping.wait(reply.hang)
                if reply.status != 200:
                    headers = {} if reply.retry is None else {"x-should-retry": "true" if reply.retry else "false"}
                    self._json(
                        reply.status,
                        {"type": "error", "error": {"type": reply.error_type, "message": reply.error_message}},
                        headers,
                    )
                    return
                message = _message(req, reply)
                try:
                    if req.stream:
                        self._sse(message, reply)
                    else:
                        self._json(200, message)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # client went away mid-reply

            def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_fake{next(_ids):06d}")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, message: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")  # body ends when we close
                self.send_header("request-id", f"req_fake{next(_ids):06d}")
                self.end_headers()
                self.close_connection = True
                for event in _sse_events(message):
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    if reply.delay:
                        time.sleep(reply.delay)

        return Handler

    def _log(self, handler: BaseHTTPRequestHandler, raw: bytes) -> Request:
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        if not isinstance(body, dict):
            body = {"_body": body}
        req = Request(handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body, raw)
        with self._lock:
            self.requests.append(req)
        return req


def _message(req: Request, reply: Reply) -> dict[str, Any]:
    blocks = [dict(b) for b in reply.blocks] or [{"type": "text", "text": ""}]
    stop = reply.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
    out_tokens = sum(len(json.dumps(b)) for b in blocks) // 4 + 1
    usage = {
        "input_tokens": max(1, len(req.raw) // 4),
        "output_tokens": out_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(reply.usage or {})
    return {
        "id": f"msg_fake{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": req.body.get("model", "claude-fake"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _sse_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    start = dict(message, content=[], stop_reason=None, usage=dict(message["usage"], output_tokens=1))
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            yield {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
            }
            payload = json.dumps(block.get("input") or {})
            for k in range(0, len(payload), 40):  # several deltas, like the real API
                yield {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": payload[k : k + 40]},
                }
        else:
            yield {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            s = block.get("text", "")
            for k in range(0, max(len(s), 1), 200):
                yield {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "text_delta", "text": s[k : k + 200]},
                }
        yield {"type": "content_block_stop", "index": i}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


try:  # pytest fixture, importable into test modules
    import pytest

    @pytest.fixture
    def fake_api() -> Iterator[FakeAPI]:
        with FakeAPI() as api:
            yield api
except ImportError:  # pragma: no cover
    pass
