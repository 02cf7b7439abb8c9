"""UserPromptSubmit's fast path. The prompt waits for this hook, so it imports almost nothing (json,
socket, hashlib) and hands the whole job to a running MCP server of the same workspace: the server has
the index, the vectors and the model warm; it decides, records, logs and answers with what to print.
When none answers within SERVER_SHARE of the deadline, the full hook (surfaces/hooks.py) runs keyword
only in this process with the time left. The socket and its protocol: recall_socket.py.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

from ..base.location import workspace_root
from .recall_socket import (
    DEADLINE_S,
    MAX_ANSWER,
    PAYLOAD_MAX,
    SERVER_SHARE,
    read_line,
    setting_vars,
    socket_dir,
    socket_key,
)


def ask_server(root: str, request: dict[str, object], timeout: float) -> tuple[dict[str, object] | None, str]:
    """(a running server's answer or None, why none). Tries the newest socket first."""
    folder = socket_dir()
    if folder is None:
        return None, "the socket folder is not private to this user"
    end = time.monotonic() + timeout
    prefix = socket_key(root) + "-"
    try:
        found = [e for e in os.scandir(folder) if e.name.startswith(prefix) and e.name.endswith(".sock")]
        found.sort(key=lambda e: -e.stat(follow_symlinks=False).st_mtime)
    except OSError:
        return None, "the socket folder cannot be read"
    if not found:
        return None, "no MCP server of this workspace runs"
    dead = 0
    for entry in found:
        left = end - time.monotonic()
        if left <= 0.01:
            break
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(left)
            sock.connect(entry.path)
            sock.sendall(json.dumps({**request, "deadline": left - 0.01}).encode("utf-8") + b"\n")
            answer = json.loads(read_line(sock, MAX_ANSWER) or b"null")
        except (ConnectionRefusedError, FileNotFoundError):
            dead += 1
            try:
                os.unlink(entry.path)  # its server is gone
            except OSError:
                pass
            continue
        except (OSError, ValueError) as exc:
            return None, f"the MCP server did not answer ({type(exc).__name__}: {exc})"
        finally:
            sock.close()
        if isinstance(answer, dict) and isinstance(answer.get("output"), str):
            return answer, ""
        why = answer.get("error") if isinstance(answer, dict) else None
        return None, f"the MCP server could not answer ({why or 'no answer'})"
    if dead == len(found):
        return None, "no MCP server of this workspace runs"
    return None, f"no MCP server of this workspace answered within {timeout:.2f}s"


def main() -> int:
    """``reme_hook.py UserPromptSubmit``: prints the server's answer, else runs the full hook. Exits 0."""
    t0 = time.monotonic()
    raw = b""
    try:
        if sys.stdin is not None and not sys.stdin.isatty():
            raw = sys.stdin.buffer.read(PAYLOAD_MAX)
        payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        if isinstance(payload, dict):
            settings = {var: os.environ[var] for _, var in setting_vars() if var in os.environ}
            request = {"payload": payload, "settings": settings}
            answer, why = ask_server(workspace_root(), request, DEADLINE_S * SERVER_SHARE)
            if answer is not None:
                if answer["output"]:
                    sys.stdout.write(answer["output"])
                    sys.stdout.flush()
                return 0
        else:
            why = "the payload is not a JSON object"
    except Exception as exc:  # noqa: BLE001 - the full hook below handles and logs it
        why = f"{type(exc).__name__}: {exc}"
    from .hooks import main as full_hook

    left = DEADLINE_S - (time.monotonic() - t0)
    return full_hook(["UserPromptSubmit"], raw=raw, server_note=why, deadline=left)
