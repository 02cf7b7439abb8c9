"""The local socket between the UserPromptSubmit hook and a running MCP server of its workspace:
where it lives, what the hook may send and the limits. Standard library only, and light: the hook's
fast path imports it before anything else of reme.

The socket: ``<runtime dir>/reme-<uid>/<workspace key>-<pid>.sock`` — the runtime dir is
``$XDG_RUNTIME_DIR`` or the temp folder; the folder is the user's own, mode 0700, and is refused when
it is a link, someone else's, or open to others (another local user could otherwise answer the hook).
Each MCP server binds its own (surfaces/recall.py); the hook tries the newest first and removes one
nobody listens on. One request per connection: a JSON line {"payload", "settings", "deadline"}, then
the answer, a JSON line {"output"} or {"error"}.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat

DEADLINE_S = 0.9  # the prompt waits for the hook: after this, nothing is injected (and the log says why)
SERVER_SHARE = 0.55  # of the deadline a server may take before the keyword-only path gets the rest
PAYLOAD_MAX = 4 * 1024 * 1024  # what the hook reads of Claude Code's payload (as every hook: hooks._STDIN_MAX)
MAX_REQUEST = PAYLOAD_MAX + 64 * 1024  # the payload and the hook's settings
MAX_ANSWER = 4 * 1024 * 1024
HOOK_SETTINGS = ("auto_recall", "recall_chars")  # decided by the hook's own environment (plugin options)


def setting_vars() -> list[tuple[str, str]]:
    """(setting, its environment variable) of HOOK_SETTINGS, named and ordered as Config.load reads
    them (a later one wins)."""
    return [(name, prefix + name.upper()) for name in HOOK_SETTINGS for prefix in ("REME_", "CLAUDE_PLUGIN_OPTION_")]


def socket_key(root: str) -> str:
    """The workspace's part of its servers' socket names."""
    real = os.path.realpath(os.path.abspath(root))
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def socket_dir() -> str | None:
    """The user's private folder for the sockets (created 0700), or None when it is unsafe."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    folder = os.path.join(base, f"reme-{os.getuid()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder


def read_line(conn: socket.socket, limit: int) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        part = conn.recv(65536)
        if not part:
            break
        data += part
        if len(data) > limit:
            raise ValueError(f"message over {limit} bytes")
    return data
