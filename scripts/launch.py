#!/usr/bin/env python3
"""Plugin launcher, run by Claude Code with the system python3 (standard library only).

    python3 launch.py mcp            # the MCP server (.mcp.json): real server if the env is ready,
                                     # else a stand-in that answers at once while the env is built
    python3 launch.py --rebuild      # (re)build the plugin's Python environment now
    python3 launch.py --status       # where the env is, whether it is ready, the last error
    python3 launch.py <reme-cc args> # run the reme-cc CLI inside the env (built first if needed)

``REME_PYTHON=/path/to/python`` skips the env and uses that interpreter (tests, development).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(os.environ.get("CLAUDE_PLUGIN_ROOT") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from reme_cc.base import bootstrap  # noqa: E402  (needs ROOT on sys.path)


def server_argv(python: str) -> list[str]:
    return bootstrap.module_argv(python, "reme_cc.surfaces.server")


def _exec(argv: list[str]) -> None:
    os.execv(argv[0], argv)  # replace this process: no extra process to orphan, signals go straight to it


def main(argv: list[str]) -> int:
    if argv[:1] in (["--rebuild"], ["--status"], ["--ensure"]):
        return bootstrap.main(argv)
    if argv[:1] == ["mcp"]:
        bootstrap.enter_trusted_cwd()  # Claude Code starts us in the session's folder: a repository
        if bootstrap.env_ready():
            _exec(server_argv(str(bootstrap.env_python())))
        from reme_cc.surfaces import mcp_standin

        return mcp_standin.serve(lambda: str(bootstrap.ensure_env()), server_argv)
    try:
        python = bootstrap.ensure_env(quiet=False)
    except bootstrap.BootstrapError as exc:
        print(exc, file=sys.stderr)
        return 1
    _exec(bootstrap.module_argv(python, "reme_cc.surfaces.cli", *argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
