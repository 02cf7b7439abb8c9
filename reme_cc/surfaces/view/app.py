"""The viewer's HTTP server (standard library: a local, single-user app needs no ASGI stack, and the
plugin's environment does not carry one). Safe by default, in this order for every request:

* bound to 127.0.0.1 on a port the system picks (``--port`` to choose);
* the Host header must name this server (``127.0.0.1:<port>`` or ``localhost:<port>``): a page of
  another site that rebinds its DNS name to 127.0.0.1 is refused;
* a secret token: the printed URL carries it once, the answer puts it in an HttpOnly, SameSite=Strict
  cookie and drops it from the address; without either, 403;
* every change is a POST with the CSRF token the page's form carries (and, when the browser sends an
  Origin, this server's); ``--read-only`` refuses every POST;
* pages are HTML built with every note-derived string escaped, under a Content-Security-Policy that
  allows only this server's own scripts (a note's ``<script>`` could not run even if it were not escaped).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
import traceback
from http import HTTPStatus
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from ...base.errors import ReMeError
from ...memory.context import Context
from . import pages
from .data import Snapshot, index_generation, read_snapshot

MAX_POST = 4 * 1024 * 1024  # bytes of a form (a note's edited text)
STATIC = {
    "app.css": "text/css; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "graph.js": "text/javascript; charset=utf-8",
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # the first address carries the token; no-referrer would make Origin "null"
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class Refused(Exception):
    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


class ViewApp:
    """The state of one ``reme-cc view``: the workspace's Context, the secrets and the catalog read."""

    def __init__(self, ctx: Context, *, read_only: bool = False, port: int = 0, host: str = "127.0.0.1"):
        self.ctx = ctx
        self.read_only = read_only
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.lock = threading.RLock()  # one request at a time uses the Context and the index
        self.snap = Snapshot()
        self._reading = threading.Event()  # a catalog read runs in the background
        self.warmed = threading.Event()
        self.httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self.cookie = f"reme_view_{self.port}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def catalog(self) -> Snapshot:
        """The catalog for a page (called under ``lock``). When the index moved on, a fresh read starts in
        the background and the page uses the one read before: a change costs no page the read's time
        (~0.3 s at 10k notes); the first read, with none before it, is waited for."""
        gen = index_generation(self.ctx)
        if self.snap.generation < 0:
            self.snap = read_snapshot(self.ctx)
        elif gen != self.snap.generation and not self._reading.is_set():
            self._reading.set()
            threading.Thread(target=self._refresh, name="reme-view-catalog", daemon=True).start()
        return self.snap

    def _refresh(self) -> None:
        try:
            self.snap = read_snapshot(self.ctx)  # the index's reads hold its connection lock
        finally:
            self._reading.clear()

    def warm(self) -> None:
        """What the first pages would wait for, done while the user opens the browser: OS notifications
        instead of walks, the catalog, the search's models and keyword index."""
        from ...tools import all_tools
        from .markdown import render_markdown

        try:
            with self.lock:
                self.ctx.index.watch()
                snap = self.catalog()
                render_markdown("# [[warm up]]", snap.resolve, snap.describe)  # the stems, mistletoe
                all_tools()["search"].run(self.ctx, {"query": "warm up 预热", "limit": 1})  # jieba too
        except ReMeError:
            pass  # the page that needs it says what is wrong
        finally:
            self.warmed.set()

    def serve(self) -> None:
        threading.Thread(target=self.warm, name="reme-view-warm", daemon=True).start()
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve, name="reme-view", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler_for(app: ViewApp) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.app = app
    return Handler


class _Handler(BaseHTTPRequestHandler):
    app: ViewApp
    server_version = "reme-view"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # the terminal shows the address, not every request

    # ---- the checks -------------------------------------------------------------------------------------
    def _check_host(self) -> None:
        if (self.headers.get("Host") or "").lower() not in self.app.hosts:
            raise Refused(HTTPStatus.FORBIDDEN, "refused: this server answers only to its own address (Host header)")

    def _authorised(self, query: dict[str, str]) -> bool:
        cookie = SimpleCookie()
        try:
            cookie.load(self.headers.get("Cookie") or "")
        except Exception:  # noqa: BLE001 - a malformed cookie header is no credential
            return False
        sent = cookie.get(self.app.cookie)
        return bool(sent) and hmac.compare_digest(sent.value, self.app.token)

    def _check_post(self, form: dict[str, str]) -> None:
        origin = self.headers.get("Origin")
        if origin and urlsplit(origin).netloc.lower() not in self.app.hosts:
            raise Refused(HTTPStatus.FORBIDDEN, "refused: a change from another site (Origin header)")
        if not hmac.compare_digest(form.get("csrf", ""), self.app.csrf):
            raise Refused(HTTPStatus.FORBIDDEN, "refused: the form's CSRF token is missing or wrong; reload the page")
        if self.app.read_only:
            raise Refused(HTTPStatus.FORBIDDEN, "refused: the viewer runs with --read-only")

    # ---- the methods -------------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_HEAD(self) -> None:  # noqa: N802
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"", "text/plain")

    def _serve(self, method: str) -> None:
        started = time.perf_counter()
        try:
            self._check_host()
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            token = query.pop("token", None)
            if token is not None and hmac.compare_digest(token, self.app.token):
                return self._login(url.path, query)
            if not self._authorised(query):
                raise Refused(
                    HTTPStatus.FORBIDDEN,
                    "refused: no valid token; open the address `reme-cc view` printed (it carries the token)",
                )
            if url.path.startswith("/static/"):
                return self._static(url.path[len("/static/") :])
            if method == "POST":
                form = self._form()
                self._check_post(form)
                with self.app.lock:
                    location = pages.post(self.app, url.path, form)
                return self._redirect(location)
            with self.app.lock:
                page = pages.get(self.app, url.path, query)
            self._send(page.status, page.body.encode("utf-8"), page.content_type, started)
        except Refused as exc:
            self._send(exc.status, str(exc).encode("utf-8"), "text/plain; charset=utf-8")
        except ReMeError as exc:
            page = pages.error_page(self.app, str(exc))
            self._send(HTTPStatus.CONFLICT, page.body.encode("utf-8"), page.content_type)
        except Exception as exc:  # noqa: BLE001 - a bug in a page: say so in the page, keep serving
            traceback.print_exc()
            page = pages.error_page(self.app, f"internal error: {type(exc).__name__}: {exc}")
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, page.body.encode("utf-8"), page.content_type)

    def _login(self, path: str, query: dict[str, str]) -> None:
        """The token from the printed address becomes a cookie, and leaves the address bar."""
        path = path if path.startswith("/") and not path.startswith("//") else "/"  # never to another host
        location = path + (f"?{urlencode(query)}" if query else "")
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header(
            "Set-Cookie", f"{self.app.cookie}={self.app.token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=86400"
        )
        self.send_header("Location", location)
        self._finish_headers(0)

    def _form(self) -> dict[str, str]:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_POST:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"refused: a form over {MAX_POST} bytes")
        if not (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            self.rfile.read(length)
            raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "refused: send the page's form")
        body = self.rfile.read(length).decode("utf-8", "replace")
        return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}

    def _static(self, name: str) -> None:
        if name not in STATIC:
            raise Refused(HTTPStatus.NOT_FOUND, "not found")
        data = resources.files(__package__).joinpath(name).read_bytes()
        self._send(HTTPStatus.OK, data, STATIC[name])

    def _redirect(self, location: str) -> None:
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", location)
        self._finish_headers(0)

    def _send(self, status: int, body: bytes, content_type: str, started: float | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if started is not None:
            self.send_header("Server-Timing", f"page;dur={(time.perf_counter() - started) * 1000:.1f}")
        self._finish_headers(len(body))
        self.wfile.write(body)

    def _finish_headers(self, length: int) -> None:
        for key, value in HEADERS.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()
