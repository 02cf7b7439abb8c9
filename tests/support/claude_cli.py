"""Run the real Claude Code CLI (the one bundled in claude-agent-sdk) against the fake API, offline.

Example::

    from support.fake_api import FakeAPI, text, tool_use, is_main, tool_result_for
    from support.claude_cli import run_claude, leftover_processes

    with FakeAPI() as api:
        api.script(tool_use("mcp__plugin_reme_reme__status", {}), text("done"), when=is_main)
        run = run_claude("show status", api=api, home=tmp_path / "home", cwd=tmp_path / "proj",
                         plugin_options={"workspace": str(ws_root)})
        assert run.rc == 0, run.stderr
        assert run.result == "done"
        assert api.tool_results("mcp__plugin_reme_reme__status")
        assert not leftover_processes(run.run_id)

For Agent-SDK runs: ``ClaudeAgentOptions(cli_path=claude_bin(), env=sdk_env(api.url, home))`` (or set
``os.environ.update(sdk_env(...))`` via monkeypatch, since the SDK child inherits the parent env).

Every process started here carries ``REME_TEST_RUN=<run id>`` in its environment; the CLI passes its
environment on to MCP servers and hooks, so ``leftover_processes(run_id)`` finds anything left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Mapping

REPO = Path(__file__).resolve().parents[2]
MCP_TOOLS = "mcp__plugin_reme_reme"  # --allowedTools value for every tool of our server


def claude_bin() -> Path:
    import claude_agent_sdk

    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not path.exists():
        raise FileNotFoundError(f"bundled Claude CLI missing at {path}; reinstall claude-agent-sdk")
    return path


def _api_url(api: Any) -> str:
    return api if isinstance(api, str) else api.url


def cli_env(
    api: Any,
    home: Path | str,
    extra: Mapping[str, str] | None = None,
    *,
    run_id: str | None = None,
    python: str | None = sys.executable,
) -> dict[str, str]:
    """A clean environment for the CLI: temp HOME, fake API, no telemetry, our test python for the server.

    Inherited ``CLAUDE*``/``ANTHROPIC*``/``REME_*`` variables are dropped so a test run inside a Claude Code
    session (or with a user's settings) stays hermetic."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE", "ANTHROPIC", "REME_")) and k not in ("PYTEST_CURRENT_TEST",)
    }
    Path(home).mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": _api_url(api),
            "ANTHROPIC_API_KEY": "sk-ant-fake-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "15000",
            "REME_TEST_RUN": run_id or uuid.uuid4().hex,
            "REME_EMBEDDING": os.environ.get("REME_TEST_EMBEDDING", "none"),
        }
    )
    if python:
        env["REME_PYTHON"] = python  # the launcher uses this interpreter instead of building a venv
    env.update(extra or {})
    return env


def sdk_env(api: Any, home: Path | str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variables for an Agent-SDK session against the fake API (for ``ClaudeAgentOptions.env``)."""
    full = cli_env(api, home, extra)
    keys = (
        "HOME",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "CLAUDE_CODE_MCP_STARTUP_WAIT_MS",
        "REME_TEST_RUN",
    )
    out = {k: full[k] for k in keys}
    out.update(extra or {})
    return out


@dataclass
class CliRun:
    args: list[str]
    rc: int
    stdout: str
    stderr: str
    duration: float
    run_id: str
    json: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        return self.json.get("session_id") if isinstance(self.json, dict) else None

    @property
    def result(self) -> str | None:
        return self.json.get("result") if isinstance(self.json, dict) else None

    @property
    def permission_denials(self) -> list[Any]:
        return (self.json or {}).get("permission_denials") or [] if isinstance(self.json, dict) else []

    def __str__(self) -> str:
        return f"rc={self.rc} ({self.duration:.1f}s)\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


def claude_args(
    prompt: str | None,
    *,
    plugin_dir: Path | str | None = REPO,
    allowed_tools: Iterable[str] = (MCP_TOOLS,),
    output_format: str = "json",
    plugin_options: Mapping[str, Any] | None = None,
    plugin_name: str = "reme",
    extra_args: Iterable[str] = (),
) -> list[str]:
    args = [str(claude_bin())]
    if prompt is not None:
        args += ["-p", prompt, "--output-format", output_format]
        if output_format == "stream-json":
            args.append("--verbose")
    if plugin_dir is not None:
        args += ["--plugin-dir", str(plugin_dir)]
    tools = list(allowed_tools)
    if tools:
        args += ["--allowedTools", ",".join(tools)]
    if plugin_options:
        # --plugin-dir plugins are "<name>@inline"; this is how their userConfig options are set
        settings = {"pluginConfigs": {f"{plugin_name}@inline": {"options": dict(plugin_options)}}}
        args += ["--settings", json.dumps(settings)]
    return args + list(extra_args)


def popen_claude(
    prompt: str | None,
    *,
    api: Any,
    home: Path | str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    run_id: str | None = None,
    python: str | None = sys.executable,
    **kw: Any,
) -> tuple[subprocess.Popen[str], str, list[str]]:
    """Start the CLI without waiting (for concurrent sessions). Returns (process, run_id, args).
    ``python=None``: no REME_PYTHON, the plugin runs in the environment it builds itself."""
    run_id = run_id or uuid.uuid4().hex
    cwd = Path(cwd) if cwd else Path(home) / "project"
    cwd.mkdir(parents=True, exist_ok=True)
    args = claude_args(prompt, **kw)
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=cli_env(api, home, env, run_id=run_id, python=python),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return proc, run_id, args


def finish(proc: subprocess.Popen[str], run_id: str, args: list[str], started: float, timeout: float = 180.0) -> CliRun:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        err += f"\n[claude_cli] killed after {timeout}s timeout"
    parsed: Any = None
    try:
        parsed = json.loads(out) if out.strip().startswith(("{", "[")) else None
    except ValueError:
        parsed = None
    return CliRun(args, proc.returncode, out, err, time.monotonic() - started, run_id, parsed)


def run_claude(
    prompt: str | None,
    *,
    api: Any,
    home: Path | str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 180.0,
    **kw: Any,
) -> CliRun:
    """Run ``claude -p prompt --plugin-dir <repo> --allowedTools mcp__plugin_reme_reme`` and wait.

    ``kw``: plugin_dir, allowed_tools, output_format, plugin_options, plugin_name, extra_args."""
    started = time.monotonic()
    proc, run_id, args = popen_claude(prompt, api=api, home=home, cwd=cwd, env=env, **kw)
    return finish(proc, run_id, args, started, timeout)


def run_cli(
    args: Iterable[str],
    *,
    home: Path | str,
    api: Any = "http://127.0.0.1:9",
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    python: str | None = sys.executable,
) -> CliRun:
    """Run ``claude <args>`` (e.g. ``plugin validate .``, ``plugin marketplace add DIR``)."""
    started = time.monotonic()
    run_id = uuid.uuid4().hex
    argv = [str(claude_bin()), *args]
    cwd = Path(cwd) if cwd else REPO
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=cli_env(api, home, env, run_id=run_id, python=python),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return finish(proc, run_id, argv, started, timeout)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def leftover_processes(run_id: str, wait: float = 3.0) -> list[tuple[int, str]]:
    """Processes still alive whose environment carries ``REME_TEST_RUN=run_id`` (waits up to ``wait`` s
    for them to go). Returns [(pid, cmdline)]."""
    marker = f"REME_TEST_RUN={run_id}".encode()
    deadline = time.monotonic() + wait
    while True:
        found: list[tuple[int, str]] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                if marker not in environ.split(b"\0"):
                    continue
                stat = (entry / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] == "Z":
                    continue  # zombie: already dead, waiting for its parent
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                found.append((int(entry.name), cmd))
            except (OSError, IndexError):
                continue
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def kill_leftovers(run_id: str) -> None:
    """Test cleanup: SIGKILL whatever ``leftover_processes`` finds (only processes of this run)."""
    for pid, _ in leftover_processes(run_id, wait=0):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
