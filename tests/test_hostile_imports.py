"""Issue 21, findings 1-2: no reme process ever has an untrusted folder on its import path.

Claude Code starts the MCP server (and a user runs the CLI) in the repository the session works in;
a repository is hostile input. `python -m ...` puts the working directory first on ``sys.path``, so a
``json.py`` at a repository's root ran inside the server at start-up. Here a "repository" holds
``json.py``, ``reme_cc/__init__.py`` and ``pypdfium2.py`` (each leaves a marker file when imported),
and every reme process that could start there runs: the server through the plugin's launcher, the CLI
through the launcher, the team embedding worker (whose workspace is the repository's ``.reme/``) and
the PDF extraction child. None of the markers may appear, and each process still does its job.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.mcp_stdio import McpProcess

REPO = Path(__file__).resolve().parent.parent
PLANTED = ("json.py", "pypdfium2.py", "reme_cc/__init__.py")


def plant(folder: Path) -> Path:
    """Modules that leave ``<folder>/RAN-<name>`` when Python imports them."""
    for name in PLANTED:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        marker = folder / ("RAN-" + name.replace("/", "-"))
        path.write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    return folder


def ran(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("RAN-*"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".reme" / "digest" / "procedure").mkdir(parents=True)
    (root / ".reme" / "digest" / "procedure" / "deploy.md").write_text(
        "---\nname: deploy\ndescription: how this repo deploys\n---\nDeploy with the blue-green script.\n"
    )
    plant(root)
    plant(root / ".reme")
    return root


def launcher_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update(
        REME_WORKSPACE=str(tmp_path / "ws"),
        REME_EMBEDDING="none",
        REME_PYTHON=sys.executable,
        CLAUDE_PLUGIN_ROOT=str(REPO),
        CLAUDE_PLUGIN_DATA=str(tmp_path / "data"),
    )
    return env


def test_the_server_started_in_a_repository_imports_nothing_from_it(repo, tmp_path):
    env = launcher_env(tmp_path)
    with McpProcess([sys.executable, str(REPO / "scripts" / "launch.py"), "mcp"], env=env, cwd=str(repo)) as srv:
        srv.initialize()
        assert "search" in {t["name"] for t in srv.request("tools/list")["tools"]}
        found = srv.text(srv.call_tool("search", {"query": "blue-green deploy"}))
        # the session's folder still decides the project and the team memory: passed by value, not as cwd
        assert ".reme/digest/procedure/deploy.md" in found, found
        assert srv.stop() == 0
    assert ran(repo) == [] and ran(repo / ".reme") == []


def test_the_cli_run_in_a_repository_imports_nothing_from_it(repo, tmp_path):
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "launch.py"), "search", "blue-green"],
        env=launcher_env(tmp_path),
        cwd=str(repo),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert ".reme/digest/procedure/deploy.md" in run.stdout
    assert ran(repo) == []


def test_the_team_embedding_worker_imports_nothing_from_the_repository(repo, tmp_path, monkeypatch):
    from reme_cc.base.config import Config
    from reme_cc.index import catchup
    from reme_cc.base.workspace import Workspace

    monkeypatch.chdir(repo)
    team = Workspace(repo / ".reme", create=False)
    team.metadata.mkdir(parents=True, exist_ok=True)
    pid = catchup.ensure_worker(team, Config.load(team.root))
    assert pid
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid), "the worker did not finish"
    assert ran(repo / ".reme") == [] and ran(repo) == []


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child (setsid): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        stat = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
        return bool(stat) and stat.split(")")[-1].split()[0] != "Z"
    return done == 0


def test_the_extraction_child_imports_nothing_from_the_working_directory(repo, tmp_path, monkeypatch):
    from reme_cc.notes import documents
    from support.documents import report_pdf

    pdf = report_pdf(tmp_path / "report.pdf", pages=1).read_bytes()
    monkeypatch.chdir(repo)
    out = documents._run_child("pdf", pdf)
    assert out.error is None and "battery research" in out.text
    assert ran(repo) == []
