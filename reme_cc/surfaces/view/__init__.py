"""`reme-cc view`: the memory viewer, a local web app to see, search, audit and correct the memory
(timeline, notes, graph, search with the why of each hit, dreams with their diffs and undo, the recall
log, health). app.py serves it (security rules in its docstring), pages.py builds the pages and does the
actions through the note service, data.py reads the catalog, markdown.py renders notes safely; the
browser code is graph.js and app.js beside them, with app.css (no build step, nothing fetched from elsewhere)."""

from __future__ import annotations

import os
import sys
import webbrowser
from typing import Any


def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "view",
        help="Open the memory viewer: a local web app to browse, search, audit and fix the memory.",
        description="Serve the memory viewer on 127.0.0.1 (a random port unless --port) and open it in the "
        "browser when there is one. The printed address carries a secret token; keep it to yourself. "
        "Ctrl-C stops it.",
    )
    p.add_argument("--port", type=int, default=0, help="the port to listen on (default: one the system picks)")
    p.add_argument("--read-only", action="store_true", help="show the memory, refuse every change")
    p.add_argument("--no-open", action="store_true", help="print the address only; do not start a browser")
    p.set_defaults(func=_cmd_view)


def can_open_browser() -> bool:
    """A browser can be shown: a desktop session (macOS, Windows, or an X/Wayland display)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _cmd_view(args: Any) -> int:
    import json

    from ...base.errors import InvalidInputError
    from ...memory.context import Context
    from .app import ViewApp

    if not 0 <= args.port <= 65535:
        raise InvalidInputError(f"--port {args.port}: use 1-65535, or leave it out for a free port")
    ctx = Context.open(getattr(args, "workspace", None))
    try:
        try:
            app = ViewApp(ctx, read_only=args.read_only, port=args.port)
        except OSError as exc:
            raise InvalidInputError(
                f"cannot listen on 127.0.0.1:{args.port} ({exc.strerror}); pick another --port"
            ) from None
        if getattr(args, "json", False):
            print(json.dumps({"url": app.url, "port": app.port, "read_only": app.read_only}), flush=True)
        else:
            print(f"reme memory viewer: {app.url}", flush=True)
            print("(the address carries a secret token; Ctrl-C stops the viewer)", flush=True)
        if not args.no_open and can_open_browser():
            webbrowser.open(app.url)
        try:
            app.serve()
        except KeyboardInterrupt:
            pass
        finally:
            app.httpd.server_close()
    finally:
        ctx.close()
    return 0
