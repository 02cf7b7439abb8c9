"""The standard-library-only modules (docs/ARCHITECTURE.md's list, read from there) import, and the hook
script runs, with every third-party package blocked: the hooks run them with the system ``python3`` before
the plugin's environment exists."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests/fixtures/claude_code/projects/-home-user-project/0ba3e8cf-83f1-4b52-a73b-6e7855b23b49.jsonl"

# Run before anything else: an import of a top-level name outside the standard library (and reme_cc) fails.
BLOCK = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in sys.stdlib_module_names and top != "reme_cc":
            raise ImportError(f"{name} is not in the standard library")
sys.meta_path.insert(0, Blocked())
"""
FOREIGN = "sorted({m.partition('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'reme_cc', '__main__'})"


def stdlib_modules() -> list[str]:
    """The modules ARCHITECTURE.md lists as standard-library-only, as import names."""
    text = (REPO / "docs/ARCHITECTURE.md").read_text(encoding="utf-8")
    para = re.search(r"Standard-library-only modules.*?They must never import", text, re.S)
    assert para, "ARCHITECTURE.md lost its list of standard-library-only modules"
    out = []
    for rel in re.findall(r"`([\w/]+\.py)`", para.group(0)):
        rel = rel if rel.startswith("reme_cc/") else f"reme_cc/{rel}"
        assert (REPO / rel).is_file(), f"ARCHITECTURE.md lists {rel} as standard-library-only, but it does not exist"
        out.append(rel.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    return out


def run_blocked(code: str, *args: str, **kw) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages either, as the hooks run (python3 -S reme_hook.py)
    return subprocess.run(
        [sys.executable, "-S", "-c", BLOCK + code, *args], capture_output=True, text=True, timeout=60, cwd=REPO, **kw
    )


def test_the_list_is_read_from_the_doc():
    names = stdlib_modules()
    assert {"reme_cc", "reme_cc.surfaces.hooks", "reme_cc.memory.recording", "reme_cc.index.readonly"} <= set(names)


def test_the_blocker_blocks():
    proc = run_blocked("sys.path.append(sys.argv[1])\nimport pydantic\n", *sys.path)
    assert proc.returncode != 0 and "pydantic is not in the standard library" in proc.stderr


def test_stdlib_only_modules_import_with_third_party_packages_blocked():
    code = (
        f"import importlib, json\nsys.path.insert(0, sys.argv[1])\n"
        f"for name in json.loads(sys.argv[2]): importlib.import_module(name)\nprint(json.dumps({FOREIGN}))\n"
    )
    proc = run_blocked(code, str(REPO), json.dumps(stdlib_modules()))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_the_hook_script_runs_with_third_party_packages_blocked(tmp_path):
    """hooks/reme_hook.py for each event as Claude Code starts it, a real transcript copied on Stop: the
    hooks never fail the session, so what they could not import would only show in hooks.log."""
    ws = tmp_path / "ws"
    env = {
        "REME_WORKSPACE": str(ws),
        "REME_RECORD_MIN_MESSAGES": "1000",
        "REME_AUTO_DREAM": "false",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    payload = {
        "session_id": "0ba3e8cf-83f1-4b52-a73b-6e7855b23b49",
        "transcript_path": str(FIXTURE),
        "cwd": str(tmp_path),
    }
    code = "sys.argv = sys.argv[1:]\nimport runpy\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    for event in ("SessionStart", "Stop"):
        proc = run_blocked(code, str(REPO / "hooks/reme_hook.py"), event, input=json.dumps(payload), env=env)
        assert proc.returncode == 0 and proc.stderr == "", proc
    # per-prompt recall and the return after a compaction (issue 24), on the index the copy made
    more = {**payload, "prompt": "how are transcripts copied into the workspace?", "source": "compact"}
    for event in ("UserPromptSubmit", "SessionStart"):
        proc = run_blocked(code, str(REPO / "hooks/reme_hook.py"), event, input=json.dumps(more), env=env)
        assert proc.returncode == 0 and proc.stderr == "", proc
    log = (ws / "metadata/logs/hooks.log").read_text(encoding="utf-8")
    assert "Stop: session 0ba3e8cf" in log and "entries" in log, log
    assert "UserPromptSubmit: recall (keyword-only)" in log and "(compact)" in log, log
    assert "rror" not in log, log  # no ImportError, no error line of any kind
