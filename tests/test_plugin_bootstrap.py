"""Zero-setup env: the stand-in answers while building, hands over to the real server; build failures
are recorded with an actionable message; one slow test builds the env for real with pip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.mcp_stdio import McpProcess

REPO = Path(__file__).resolve().parent.parent


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE"))}
    env.update(
        {
            "REME_WORKSPACE": str(tmp_path / "ws"),
            "REME_EMBEDDING": "none",
            "REME_EXTRA_TOOL_MODULES": "support.echo_tools",
            "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
            "PYTHONPATH": str(REPO / "tests"),
        }
    )
    env.update(extra)
    return env


def standin(tmp_path: Path, build_body: str) -> McpProcess:
    code = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from reme_cc.surfaces import mcp_standin\n"
        f"def build():\n    {build_body}\n"
        "mcp_standin.serve(build, lambda py: [py, '-m', 'reme_cc.surfaces.server'])\n"
    )
    return McpProcess([sys.executable, "-c", code], env=base_env(tmp_path), cwd=str(tmp_path))


def test_standin_answers_at_once_then_hands_over(tmp_path):
    with standin(tmp_path, "time.sleep(2.5); return sys.executable") as srv:
        init = srv.initialize()
        tools = srv.request("tools/list")["tools"]
        assert time.monotonic() - srv.t0 < 1.5
        assert init["capabilities"]["tools"]["listChanged"] is True
        assert [t["name"] for t in tools] == ["status"]
        early = srv.call_tool("search", {"query": "x"})
        assert early["isError"] and "preparing its Python environment" in srv.text(early)
        note = srv.notifications.get(timeout=30)
        assert note["method"] == "notifications/tools/list_changed"
        names = {t["name"] for t in srv.request("tools/list")["tools"]}
        assert {"echo_test", "status"} <= names
        assert srv.text(srv.call_tool("echo_test", {"text": "handed over"})) == "handed over"
        assert srv.stop() == 0


def test_standin_reports_build_failure(tmp_path):
    with standin(
        tmp_path, "raise RuntimeError('reme could not prepare its Python environment: boom; log: /x.log')"
    ) as srv:
        srv.initialize()
        time.sleep(0.5)
        res = srv.call_tool("read", {"path": "a.md"})
        assert res["isError"] and srv.text(res).endswith("boom; log: /x.log")
        assert srv.request("ping") == {}


def _bootstrap(tmp_path: Path, root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = base_env(tmp_path, CLAUDE_PLUGIN_ROOT=str(root), **extra)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not (Path(p) / "uv").exists())
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "launch.py"), *args],
        env=env,
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )


def fake_plugin(tmp_path: Path, pyproject: str, version: str = "0.1.0") -> Path:
    root = tmp_path / "plugin"
    shutil.copytree(REPO / "reme_cc", root / "reme_cc", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "scripts", root / "scripts")
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "reme", "version": version}))
    (root / "pyproject.toml").write_text(pyproject)
    return root


def test_failed_build_is_recorded_with_an_actionable_message(tmp_path):
    root = fake_plugin(tmp_path, "this is [not valid toml\n")
    run = _bootstrap(tmp_path, root, "--rebuild")
    assert run.returncode == 1
    msg = run.stderr.strip().splitlines()[-1]
    assert "installing packages failed" in msg and "install.log" in msg and "fix:" in msg, msg
    status = json.loads(_bootstrap(tmp_path, root, "--status").stdout)
    assert status["ready"] is False and status["error"] == msg
    assert not list((tmp_path / "data").glob("venv-*"))  # nothing half-built left to be reused
    # a new plugin version is a different stamp: the old error no longer applies
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "reme", "version": "0.2.0"}))
    status2 = json.loads(_bootstrap(tmp_path, root, "--status").stdout)
    assert status2["stamp"] != status["stamp"] and status2["error"] is None


def test_reme_python_override_skips_the_build(tmp_path):
    out = _bootstrap(tmp_path, REPO, "--ensure", REME_PYTHON=sys.executable)
    assert out.returncode == 0 and out.stdout.strip() == sys.executable
    assert not (tmp_path / "data").exists()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_first_install_builds_env_with_pip_and_serves(plugin_env, tmp_path):
    """The real thing: the env the plugin's launcher built (python3 -m venv + pip install of a copy of this
    repository into its data folder, cold cache; the session fixture shared with the end-to-end tests on
    the installed plugin), then the launcher execs the real server from it. Prints the measured times."""
    env = {k: v for k, v in base_env(tmp_path).items() if k not in ("PYTHONPATH", "REME_EXTRA_TOOL_MODULES")}
    env.update(CLAUDE_PLUGIN_ROOT=str(plugin_env.root), CLAUDE_PLUGIN_DATA=str(plugin_env.data))
    launch = [plugin_env.python3, str(plugin_env.root / "scripts" / "launch.py")]
    status = json.loads(
        subprocess.run([*launch, "--status"], env=env, capture_output=True, text=True, check=True).stdout
    )
    python = Path(status["python"])
    assert status["ready"] is True and status["installer"] == "pip" and python.exists()
    assert python.is_relative_to(plugin_env.data)
    assert "deprecat" not in plugin_env.build_log.lower()  # the package's metadata is in the current form
    # a second call reuses it
    again = subprocess.run([*launch, "--ensure"], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stdout.strip() == str(python)
    with McpProcess([*launch, "mcp"], env=env, cwd=str(tmp_path)) as srv:
        srv.initialize()
        names = {t["name"] for t in srv.request("tools/list")["tools"]}
        listed = time.monotonic() - srv.t0
        assert {"search", "read", "write", "status"} <= names
        assert not srv.call_tool("version")["isError"]
        assert srv.stop() == 0
    print(
        f"\nfirst install (venv + pip, cold cache): {plugin_env.build_seconds:.0f}s; tools listed {listed:.2f}s after spawn"
    )


def test_a_terminal_uses_the_env_claude_code_built(tmp_path):
    """`python3 <plugin>/scripts/launch.py ...` typed in a terminal has no CLAUDE_PLUGIN_DATA: it finds the
    env Claude Code built for the installed plugin instead of building a second one."""
    home = tmp_path / "home"
    env = {k: v for k, v in base_env(tmp_path, HOME=str(home)).items() if not k.startswith("CLAUDE")}

    def status() -> dict[str, object]:
        return json.loads(
            subprocess.run(
                [sys.executable, str(REPO / "scripts" / "launch.py"), "--status"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )

    plugins = home / ".claude" / "plugins" / "data"
    assert status()["data_dir"] == str(plugins / "reme-standalone")
    built = plugins / "reme-reme-cc" / f"venv-{status()['stamp']}"
    built.mkdir(parents=True)
    (built / ".reme-ready").write_text("{}")
    assert status()["data_dir"] == str(built.parent)
