#!/usr/bin/env python3
"""Claude Code hook entry: `python3 -S reme_hook.py <event>` (payload on stdin).

Standard library only and independent of the plugin's virtualenv: it puts the plugin root on
sys.path and runs reme_cc.surfaces.hooks. Always exits 0 and prints nothing except the SessionStart brief.
"""

import os
import sys

if os.environ.get("REME_INTERNAL_AGENT") == "1":  # our own memory agents' sessions: do nothing
    sys.exit(0)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    if sys.argv[1:] == ["UserPromptSubmit"]:  # the prompt waits: a running server answers it (few imports)
        from reme_cc.surfaces.prompt_hook import main as fast_path

        sys.exit(fast_path())
    from reme_cc.surfaces.hooks import main
except BaseException:  # a broken checkout must not break the user's session
    sys.exit(0)
sys.exit(main(sys.argv[1:]))
