"""Where the personal workspace is. Its own module, standard library only and importing nothing else of
reme, because the UserPromptSubmit hook's fast path (surfaces/prompt_hook.py) needs only this."""

from __future__ import annotations

import os


def workspace_root() -> str:
    """REME_WORKSPACE, else the plugin option, else ~/.reme (user-expanded, not resolved)."""
    for var in ("REME_WORKSPACE", "CLAUDE_PLUGIN_OPTION_WORKSPACE"):
        value = os.environ.get(var, "").strip()
        if value:
            return os.path.expanduser(value)
    return os.path.join(os.path.expanduser("~"), ".reme")
