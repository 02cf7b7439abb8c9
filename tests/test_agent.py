"""The memory-agent runner (reme_cc/surfaces/agent.py) against the fake Anthropic API, both backends.

The sdk backend runs the real Claude Code CLI bundled with claude-agent-sdk; the anthropic backend the
anthropic SDK's tool-use loop. Both must behave the same for the same agent."""

from __future__ import annotations

import json
import time

import pytest

from reme_cc.base.config import Config
from reme_cc.base.errors import InvalidInputError, NotFoundError
from reme_cc.surfaces.agent import (
    AGENT_TOOLS,
    AgentSpec,
    agent_env,
    agent_tool,
    load_agent,
    parse_agent,
    run_agent_sync,
)
from reme_cc.tools import Context, Params, TextResult
from support.claude_cli import run_claude
from support.fake_api import FakeAPI, error, is_subagent, system_contains, text, tool_use
from support.recorder import tool_name, use_backend

BACKENDS = ["sdk", "anthropic"]


class EchoParams(Params):
    text: str


if "test_echo" not in AGENT_TOOLS:

    @agent_tool("test_echo", "Echo the text back (test tool).")
    def _echo(ctx: Context, params: EchoParams) -> TextResult:
        if params.text == "fail":
            raise InvalidInputError("echo refused: fail")
        return TextResult(message=f"ECHO {params.text}")


SPEC = AgentSpec("tester", "test agent", "You are a test agent. MARK-MAIN", ["test_echo"])


@pytest.fixture
def agent_ctx(ws):
    def make(backend: str, api: FakeAPI, monkeypatch, home) -> Context:
        use_backend(monkeypatch, backend, api, home)
        return Context(ws, Config.load(ws.root))

    return make


def test_load_agent_reads_the_shipped_recorder():
    spec = load_agent("recorder")
    assert spec.name == "recorder" and spec.tools == ["daily_write"]
    assert spec.model is None  # "inherit" → config.model
    assert "daily_write" in spec.prompt and "NOTHING" in spec.prompt


def test_parse_agent_errors_are_one_line():
    with pytest.raises(InvalidInputError, match="needs a `name`"):
        parse_agent("---\ndescription: x\n---\nbody")
    with pytest.raises(InvalidInputError, match="broken frontmatter"):
        parse_agent("---\nname: [unclosed\n---\nbody")
    with pytest.raises(InvalidInputError, match="body"):
        parse_agent("---\nname: x\n---\n   \n")
    spec = parse_agent("---\nname: x\ntools: mcp__plugin_reme_reme__read, search\nmodel: claude-x\n---\nhi")
    assert spec.tools == ["read", "search"] and spec.model == "claude-x"


def test_missing_agent_says_where_it_looked():
    with pytest.raises(NotFoundError, match=r"no-such-agent\.md not found in .*prompts.*reinstall"):
        load_agent("no-such-agent")


def test_prompts_load_without_any_plugin_environment(monkeypatch):
    """No CLAUDE_PLUGIN_ROOT (the Bash tool of a user's session has none): the package's own prompts."""
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    for name in ("recorder", "dream-extractor", "resource", "dream-integrator"):
        assert load_agent(name).name == name


def test_agent_env_marks_internal_sessions():
    env = agent_env()
    assert env["REME_INTERNAL_AGENT"] == "1"
    assert env["ENABLE_TOOL_SEARCH"] == "false"


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_our_tools_are_offered_and_errors_reach_the_model(backend, agent_ctx, monkeypatch, tmp_path):
    with FakeAPI() as api:
        echo = tool_name(backend, "test_echo")
        api.script(tool_use(echo, {"text": "hi"}), tool_use(echo, {"text": "fail"}), text("all done"))
        ctx = agent_ctx(backend, api, monkeypatch, tmp_path / "home")
        run = run_agent_sync(ctx, SPEC, "run `rm -rf ~` now please", timeout=120)
        assert run.error is None, run.error
        assert run.text == "all done"
        assert [(c["name"], c["is_error"]) for c in run.tool_calls] == [("test_echo", False), ("test_echo", True)]
        assert run.usage["input_tokens"] > 0 and run.usage["output_tokens"] > 0
        reqs = api.messages_requests()
        assert len(reqs) == 3
        for req in reqs:  # no Bash, Read, Write, ToolSearch, Agent: nothing but the agent's own tool
            assert req.tool_names == [echo], req.tool_names
            assert "MARK-MAIN" in req.system_text
            assert req.body["model"] == Config().model
        results = api.tool_results(echo)
        assert results[0].text.startswith("ECHO hi") and not results[0].is_error
        assert "echo refused: fail" in results[1].text and results[1].is_error
    if backend == "sdk":  # no-session-persistence: nothing written into the user's ~/.claude/projects
        projects = tmp_path / "home" / ".claude" / "projects"
        assert not projects.exists() or not list(projects.rglob("*.jsonl"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_retry_after_500_then_success(backend, agent_ctx, monkeypatch, tmp_path):
    with FakeAPI() as api:
        api.script(error(500), text("recovered"))
        ctx = agent_ctx(backend, api, monkeypatch, tmp_path / "home")
        run = run_agent_sync(ctx, SPEC, "hello", timeout=120)
        assert run.error is None, run.error
        assert run.text == "recovered"
        assert len(api.messages_requests()) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_persistent_500_is_reported_not_raised(backend, agent_ctx, monkeypatch, tmp_path):
    with FakeAPI(default=error(500)) as api:
        ctx = agent_ctx(backend, api, monkeypatch, tmp_path / "home")
        run = run_agent_sync(ctx, SPEC, "hello", timeout=120)
        assert run.error and "500" in run.error
        assert 2 <= len(api.messages_requests()) <= 4  # REME_AGENT_RETRIES=1: one retry, no storm


@pytest.mark.parametrize("backend", BACKENDS)
def test_overall_timeout(backend, agent_ctx, monkeypatch, tmp_path):
    with FakeAPI() as api:
        api.hang(60, times=None)
        ctx = agent_ctx(backend, api, monkeypatch, tmp_path / "home")
        started = time.monotonic()
        run = run_agent_sync(ctx, SPEC, "hello", timeout=4)
        assert run.error and "timed out" in run.error
        assert time.monotonic() - started < 20


@pytest.mark.parametrize("backend", BACKENDS)
def test_subagents_run_with_their_own_tools(backend, agent_ctx, monkeypatch, tmp_path):
    sub = AgentSpec("helper", "Echoes one word", "You are the helper. MARK-SUB", ["test_echo"])
    coordinator = AgentSpec("coord", "launches helpers", "You coordinate. MARK-MAIN", [])
    echo = tool_name(backend, "test_echo")
    is_sub = is_subagent if backend == "sdk" else system_contains("MARK-SUB")
    with FakeAPI() as api:
        # two Agent calls in one reply; each helper echoes once and answers
        api.rule(
            lambda r: is_sub(r) and not r.tool_results(last_only=True),
            lambda r: tool_use(echo, {"text": "one" if "first" in r.last_user_text else "two"}),
        )
        api.rule(is_sub, lambda r: text("helper says " + r.tool_results(last_only=True)[0].text.split()[1]))
        agent_call = {"subagent_type": "helper", "description": "echo", "run_in_background": False}
        if backend == "anthropic":
            agent_call.pop("run_in_background")
        api.script(
            tool_use("Agent", dict(agent_call, prompt="first task"))
            + tool_use("Agent", dict(agent_call, prompt="second task")),
            text("both helpers finished"),
            when=lambda r: not is_sub(r),
        )
        ctx = agent_ctx(backend, api, monkeypatch, tmp_path / "home")
        run = run_agent_sync(ctx, coordinator, "go", subagents={"helper": sub}, tools=[], timeout=180)
        assert run.error is None, run.error
        assert run.text == "both helpers finished"
        echoes = sorted(c["input"]["text"] for c in run.tool_calls if c["name"] == "test_echo")
        assert echoes == ["one", "two"]
        results = " | ".join(r.text for r in api.tool_results("Agent"))
        assert "helper says one" in results and "helper says two" in results, results
        main_reqs = [r for r in api.messages_requests() if not is_sub(r)]
        assert "Agent" in main_reqs[0].tool_names and "Bash" not in main_reqs[0].tool_names
        for r in api.messages_requests():
            if is_sub(r):
                assert "Bash" not in r.tool_names and echo in r.tool_names


def test_sdk_session_fires_no_hooks_of_installed_plugins(ws, monkeypatch, tmp_path):
    """User and project settings with hooks exist (a control run of the plain CLI fires them); the
    agent's SDK session loads neither, so no hook runs."""
    home = tmp_path / "home"
    marker = tmp_path / "hook-fired.log"
    hook = {"hooks": [{"type": "command", "command": f"echo fired >> {marker}"}]}
    settings = {"hooks": {ev: [hook] for ev in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")}}
    for folder in (home / ".claude", ws.root / ".claude"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(settings))
    with FakeAPI() as api:
        api.default = text("ok")
        use_backend(monkeypatch, "sdk", api, home)
        ctx = Context(ws, Config.load(ws.root))
        run = run_agent_sync(ctx, SPEC, "hello", timeout=120)
        assert run.error is None, run.error
        assert not marker.exists(), marker.read_text()
        control = run_claude("hello", api=api, home=home, cwd=ws.root, plugin_dir=None, allowed_tools=())
        assert control.rc == 0, control
        assert marker.exists() and "fired" in marker.read_text()


def test_anthropic_backend_needs_a_key(ws, monkeypatch):
    from reme_cc.base.errors import AgentError

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    ctx = Context(ws, Config(agent_backend="anthropic"))
    with pytest.raises(AgentError, match="API key"):
        run_agent_sync(ctx, SPEC, "hello")


def test_unknown_tool_is_a_clear_error(ws):
    ctx = Context(ws, Config())
    with pytest.raises(InvalidInputError, match="does not exist"):
        run_agent_sync(ctx, SPEC, "hello", tools=["no_such_tool"])


def test_plugin_agents_name_the_tools_claude_code_gives_them():
    """agents/*.md are read by Claude Code (a subagent of the user's session) and by the SDK runner:
    their tools are the plugin's MCP tool names, each one a registry tool the runner serves in-process."""
    from reme_cc.surfaces.agent import PACKAGE_DIR, PLUGIN_TOOL_PREFIX, registry_name, resolve_tools
    from reme_cc.notes.frontmatter import parse_note

    files = sorted((PACKAGE_DIR.parent / "agents").glob("*.md"))
    assert [p.stem for p in files] == ["dream-integrator"]
    for path in files:
        meta = parse_note(path.read_text(encoding="utf-8")).meta
        listed = [t.strip() for t in meta["tools"].split(",")]
        assert all(t.startswith(PLUGIN_TOOL_PREFIX) for t in listed), listed
        spec = load_agent(path.stem)
        assert spec.name == path.stem and spec.tools == [registry_name(t) for t in listed]
        assert not set(spec.tools) & set(AGENT_TOOLS)  # a pipeline-only tool does not exist in a user's session
        assert [t.name for t in resolve_tools(spec.tools)] == spec.tools
        assert "Use when" in spec.description and "not for direct use" not in spec.description


def test_a_foreign_mcp_tool_name_is_not_taken_for_ours():
    from reme_cc.surfaces.agent import resolve_tools

    spec = parse_agent("---\nname: x\ntools: mcp__github__read\n---\nhi")
    with pytest.raises(InvalidInputError, match="mcp__github__read"):
        resolve_tools(spec.tools)
