"""The plugin as a user has it, for tests that run user-facing commands on an installed plugin.

A copy of this repository is a directory marketplace; each test gets a fresh ``HOME`` where
``claude plugin marketplace add <copy>`` and ``claude plugin install reme@reme-cc`` ran, exactly as
README's quick start says. Nothing points the plugin at the test's interpreter: no ``--plugin-dir``,
no ``REME_PYTHON``; the plugin runs in the Python environment its own launcher
(``scripts/launch.py``) builds from the package registry, as on a user's machine.

That build takes minutes (pip, cold cache), so it happens once per test run (fixture ``plugin_env``,
registered in tests/conftest.py so that every test file shares it; also used by
tests/test_plugin_bootstrap.py); every ``installed_plugin`` HOME links its plugin data folder
(``~/.claude/plugins/data/reme-reme-cc``) to that one environment. Use it like this::

    def test_x(installed_plugin):
        with FakeAPI() as api:
            run = installed_plugin.claude("hello", api=api)          # a session, hooks and MCP server live
        out = installed_plugin.terminal("doctor")                    # python3 <plugin>/scripts/launch.py doctor

The workspace is the default one, ``~/.reme`` of the test's HOME (no plugin option set).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Iterator, Mapping

import pytest

from support.claude_cli import MCP_TOOLS, CliRun, kill_leftovers, run_claude, run_cli
from support.plugin_copy import copy_plugin

PLUGIN = "reme@reme-cc"
DATA_NAME = "reme-reme-cc"  # ~/.claude/plugins/data/<plugin>-<marketplace>


def system_python() -> str:
    """The ``python3`` Claude Code runs the plugin's launcher and hooks with (the first on PATH)."""
    path = shutil.which("python3")
    if not path:
        pytest.skip("no python3 on PATH: Claude Code could not run the plugin either")
    return path


@dataclass
class PluginEnv:
    """The marketplace copy of the plugin and the environment its launcher built for it."""

    root: Path
    data: Path
    python3: str
    build_seconds: float
    build_log: str


@pytest.fixture(scope="session")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> PluginEnv:
    base = tmp_path_factory.mktemp("installed-plugin")
    root = copy_plugin(base / "reme-cc")
    data = base / "plugin-data"
    python3 = system_python()
    env = user_env(base / "build-home", CLAUDE_PLUGIN_ROOT=str(root), CLAUDE_PLUGIN_DATA=str(data))
    # pip, the path every machine has (the launcher prefers uv when it is on PATH); cold cache (new HOME)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "uv").exists())
    started = time.monotonic()
    build = subprocess.run(
        [python3, str(root / "scripts" / "launch.py"), "--ensure"],
        env=env,
        cwd=str(base),
        capture_output=True,
        text=True,
        timeout=1800,
        stdin=subprocess.DEVNULL,
    )
    seconds = time.monotonic() - started
    log = (data / "install.log").read_text(errors="replace") if (data / "install.log").is_file() else ""
    assert build.returncode == 0, (
        f"the plugin's launcher could not build its env:\n{build.stderr[-3000:]}\n{log[-3000:]}"
    )
    print(f"\n[installed_plugin] env built by scripts/launch.py in {seconds:.0f}s")
    return PluginEnv(root, data, python3, seconds, log)


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's terminal: their HOME and PATH; nothing from Claude Code, this test run or reme's tests."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE", "ANTHROPIC", "REME_", "PYTEST", "VIRTUAL_ENV", "PYTHON"))
    }
    home.mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(home), "REME_EMBEDDING": os.environ.get("REME_TEST_EMBEDDING", "none")}, **extra)
    return env


@dataclass
class InstalledPlugin:
    env: PluginEnv
    home: Path
    runs: list[CliRun] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.env.root

    @property
    def workspace(self) -> Path:
        return self.home / ".reme"

    @property
    def project(self) -> Path:
        path = self.home / "project"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def claude(
        self,
        prompt: str,
        *,
        api: Any,
        allowed_tools: Iterable[str] = (MCP_TOOLS,),
        timeout: float = 300.0,
        env: Mapping[str, str] | None = None,
        extra_args: Iterable[str] = (),
    ) -> CliRun:
        """``claude -p prompt`` in the project folder, with the installed plugin (and only it)."""
        run = run_claude(
            prompt,
            api=api,
            home=self.home,
            cwd=self.project,
            plugin_dir=None,
            python=None,
            allowed_tools=allowed_tools,
            env=env,
            timeout=timeout,
            extra_args=extra_args,
        )
        self.runs.append(run)
        return run

    def cli(self, *args: str) -> CliRun:
        """``claude <args>`` (plugin management) in this HOME."""
        run = run_cli(list(args), home=self.home, cwd=self.project, python=None)
        self.runs.append(run)
        return run

    def terminal(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 600.0
    ) -> subprocess.CompletedProcess[str]:
        """``python3 <plugin>/scripts/launch.py <args>`` typed in a terminal (README's way to run
        ``reme-cc`` of the plugin): no Claude Code variables at all."""
        return subprocess.run(
            [self.env.python3, str(self.root / "scripts" / "launch.py"), *args],
            env=user_env(self.home, **dict(env or {})),
            cwd=str(self.project),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def installed(self) -> dict[str, Any]:
        return json.loads((self.home / ".claude" / "plugins" / "installed_plugins.json").read_text())


@pytest.fixture
def installed_plugin(plugin_env: PluginEnv, tmp_path: Path) -> Iterator[InstalledPlugin]:
    """A fresh HOME with the plugin installed from its marketplace (README quick start)."""
    home = tmp_path / "home"
    data = home / ".claude" / "plugins" / "data" / DATA_NAME
    data.parent.mkdir(parents=True)
    data.symlink_to(plugin_env.data, target_is_directory=True)  # the env built once for the session
    user = InstalledPlugin(plugin_env, home)
    add = user.cli("plugin", "marketplace", "add", str(plugin_env.root))
    assert add.rc == 0, add
    inst = user.cli("plugin", "install", PLUGIN)
    assert inst.rc == 0, inst
    try:
        yield user
    finally:
        for run in user.runs:
            kill_leftovers(run.run_id)
