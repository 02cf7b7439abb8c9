"""`reme-cc doctor`: one line per check, exit 1 with an actionable line for each problem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def doctor(*args: str, env_extra: dict[str, str] | None = None, tmp: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update({"REME_EMBEDDING": "none", "CLAUDE_PLUGIN_DATA": str(tmp / "data")})
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "reme_cc.surfaces.cli", *args, "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp),
    )


def test_healthy_workspace(tmp_path):
    (tmp_path / "ws").mkdir()
    out = doctor("--workspace", str(tmp_path / "ws"), tmp=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert [ln.split(":")[0].split(None, 1)[1] for ln in lines[:-1]] == [
        "python",
        "plugin env",
        "workspace",
        "index",
        "embedder",
        "claude cli",
        "background work",
    ]
    assert lines[-1] == "all good"


def test_a_workspace_that_does_not_exist_is_a_problem_not_created(tmp_path):
    out = doctor("--workspace", str(tmp_path / "typo"), tmp=tmp_path)
    assert out.returncode == 1
    assert f"PROBLEM workspace: {tmp_path / 'typo'} does not exist" in out.stdout and "reme-cc init" in out.stdout
    assert not (tmp_path / "typo").exists()


def test_unusable_workspace_and_failed_env_are_problems(tmp_path):
    (tmp_path / "data").mkdir()
    from reme_cc.base import bootstrap

    # a recorded build failure for the current stamp (as bootstrap writes it)
    import os

    os.environ["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "data")
    try:
        stamp = bootstrap.stamp()
    finally:
        del os.environ["CLAUDE_PLUGIN_DATA"]
    (tmp_path / "data" / "install-error.json").write_text(json.dumps({"stamp": stamp, "message": "pip failed; log: L"}))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = doctor("--workspace", str(blocker / "ws"), tmp=tmp_path)
    assert out.returncode == 1
    problems = [ln for ln in out.stdout.splitlines() if ln.startswith("PROBLEM")]
    assert "PROBLEM plugin env: pip failed; log: L" in problems
    assert any(ln.startswith("PROBLEM workspace:") and str(blocker) in ln for ln in problems)
    assert "Traceback" not in out.stdout + out.stderr


def test_the_claude_cli_check_keeps_the_version_until_the_binary_changes(tmp_path):
    """Starting the CLI for --version was most of doctor's time (issue 22, item 7): the version it
    printed is kept, keyed by the binary's size and mtime, so a reinstall runs it again."""
    (tmp_path / "ws").mkdir()
    first = doctor("--workspace", str(tmp_path / "ws"), tmp=tmp_path)
    assert first.returncode == 0, first.stdout
    cache = tmp_path / "ws" / "metadata" / "doctor-claude-cli.json"
    kept = json.loads(cache.read_text())
    assert kept["version"] and f"({kept['version']})" in first.stdout
    cache.write_text(json.dumps({**kept, "version": "kept 0.0"}))
    assert "(kept 0.0)" in doctor("--workspace", str(tmp_path / "ws"), tmp=tmp_path).stdout  # not run again
    cache.write_text(json.dumps({"key": kept["key"] + "-reinstalled", "version": "kept 0.0"}))
    again = doctor("--workspace", str(tmp_path / "ws"), tmp=tmp_path).stdout
    assert "(kept 0.0)" not in again and f"({kept['version']})" in again  # another binary: asked again
