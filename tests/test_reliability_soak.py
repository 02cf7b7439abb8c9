"""Issue #7 item 1: many processes on one workspace at once, nothing lost, the index equal to a rebuild.

4 stdio MCP servers (write/edit/move/search), 2 Claude Code sessions whose Stop hook runs after every
turn (record on, recorders against the fake API), 1 dream loop (real Claude CLI, scripted fake API) and
1 editor process writing notes straight to disk, for REME_SOAK_SECONDS (CI: 10 s; by hand:
``bench/soak.py --seconds 60``). The machinery and every check are in tests/support/soak.py.
"""

from __future__ import annotations

import json
import os

import pytest

from support.soak import Soak

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

SECONDS = float(os.environ.get("REME_SOAK_SECONDS", "10"))


def test_many_processes_one_workspace(tmp_path):
    soak = Soak(tmp_path, seconds=SECONDS)
    figures = soak.run()
    print("\nsoak figures:", json.dumps(figures, indent=2))
    assert not soak.problems, f"{len(soak.problems)} problem(s):\n" + "\n\n".join(soak.problems[:20])
    # the run really did concurrent work of every kind (a soak that did nothing proves nothing)
    ops = figures["server_ops"]
    assert ops["write"] >= 8 and ops["edit"] >= 4 and ops["move"] >= 2 and ops["search"] >= 4, ops
    assert figures["freshness_checks"] >= 1
    assert figures["editor_writes"] >= 10
    assert figures["dreams"] >= 1 and figures["dream_nodes"] >= 1
    assert figures["recordings_started"] >= 1 and figures["recorder_cards"] >= 1
    assert figures["writes_checked"] >= 50 and figures["index_rows_compared"] > 100
