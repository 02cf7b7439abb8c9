"""The one runner for every memory agent (recorder, dream extractor/integrator).

An agent is a Markdown file ``<name>.md``: frontmatter ``name``, ``description``, ``tools``, ``model``;
the body is its system prompt. ``tools`` may name the plugin's MCP tools as Claude Code sees them
(``mcp__plugin_reme_reme__read``): the runner maps each to the registry tool ``read``. It serves the
agent's tools in-process from the same registry as the MCP server and runs the agent through one of
two backends:

* ``sdk``: ``claude_agent_sdk.query()`` (the Claude Code CLI). Sandboxed: no settings sources, no
  plugins, no other MCP servers, no built-in tools (only ``Agent`` when subagents are given), no
  session persistence, cwd = workspace, and ``REME_INTERNAL_AGENT=1`` so this plugin's hooks exit.
* ``anthropic``: the ``anthropic`` SDK's tool-use loop, used when reme has its own API key
  (``anthropic_api_key``) or ``agent_backend == "anthropic"``. No subprocess.

The prompts always come from the package itself, so any install (the plugin's env, a wheel, a source
checkout) finds the prompts that match its code, with no environment variable:

* ``reme_cc/prompts/<name>.md``: prompts that only make sense inside a pipeline (the recorder, the
  dream's extractor, the resource reader);
* the plugin's top-level ``agents/<name>.md``: agents that are *also* Claude Code subagents of the
  user's session (so they name the plugin's MCP tools). The build maps that folder into the package as
  ``reme_cc/agents/`` (setup.py); a source checkout reads it beside the package.

Memory-agent-only tools (e.g. the recorder's ``daily_write``, tools/daily.py) register with
``tools.agent_tool`` into ``tools.AGENT_TOOLS``, a registry separate from ``tools.REGISTRY``: the MCP
server and CLI never see them. The memory pipelines reach this runner only through ``ctx.runner``
(``RUNNER``, put on their Context by ``with_agents``): memory/ never imports this module.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from ..base.errors import AgentError, InvalidInputError, NotFoundError, ReMeError
from ..tools import AGENT_TOOLS, Context, Tool, ToolResult, agent_tool, all_tools  # noqa: F401 (re-exported)

log = logging.getLogger("reme.agent")

INTERNAL_ENV = "REME_INTERNAL_AGENT"  # hooks exit at once when this is set
SERVER_NAME = "reme"
SUBAGENT_TOOL = "Agent"

# ---------------------------------------------------------------------------------------------
# tools (agent-only ones such as the recorder's daily_write live in tools.AGENT_TOOLS)


def resolve_tools(names: list[str], bind: Mapping[str, Any] | None = None) -> list[Tool[Any]]:
    """Registry tools by name: agent-only tools first, then the shared registry; each given the run's
    ``bind`` values it takes (``Tool.bind``: the recorder's ``card``)."""
    shared = all_tools()  # imports every tool module, which fills AGENT_TOOLS too
    out: list[Tool[Any]] = []
    for name in names:
        found = AGENT_TOOLS.get(name) or shared.get(name)
        if found is None:
            known = ", ".join(sorted(set(shared) | set(AGENT_TOOLS)))
            raise InvalidInputError(f"agent tool {name!r} does not exist; known tools: {known}")
        out.append(found.bind(bind) if bind else found)
    return out


# ---------------------------------------------------------------------------------------------
# agent specs


@dataclass
class AgentSpec:
    name: str
    description: str
    prompt: str
    tools: list[str] = field(default_factory=list)
    model: str | None = None


PACKAGE_DIR = Path(__file__).resolve().parents[1]  # reme_cc/
PROMPT_DIRS = (PACKAGE_DIR / "prompts", PACKAGE_DIR / "agents")


def prompt_dirs() -> list[Path]:
    """Where agent prompts are looked up, in order. A source checkout (the package next to the plugin
    manifest) has no reme_cc/agents/: its agents/ folder is read in place."""
    dirs = list(PROMPT_DIRS)
    if (PACKAGE_DIR.parent / ".claude-plugin").is_dir():
        dirs.append(PACKAGE_DIR.parent / "agents")
    return dirs


# How Claude Code names our tools in a user's session (plugin "reme", server "reme") and how the SDK
# runner serves them in-process: an agent file may use either, or the bare registry name.
PLUGIN_TOOL_PREFIX = "mcp__plugin_reme_reme__"
SDK_TOOL_PREFIX = f"mcp__{SERVER_NAME}__"


def registry_name(tool_name: str) -> str:
    """``mcp__plugin_reme_reme__read`` / ``mcp__reme__read`` / ``read`` -> ``read``."""
    for prefix in (PLUGIN_TOOL_PREFIX, SDK_TOOL_PREFIX):
        if tool_name.startswith(prefix):
            return tool_name[len(prefix) :]
    return tool_name


def _split_tools(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [registry_name(str(t).strip()) for t in items if str(t).strip()]


def parse_agent(text: str, source: str = "<agent>") -> AgentSpec:
    from ..notes.frontmatter import parse_note

    note = parse_note(text)
    if note.error:
        raise InvalidInputError(f"{source}: broken frontmatter ({note.error}); fix the YAML between the --- lines")
    name = str(note.meta.get("name") or "").strip()
    if not name:
        raise InvalidInputError(f"{source}: frontmatter needs a `name`")
    if not note.body.strip():
        raise InvalidInputError(f"{source}: the body (the agent's system prompt) is empty")
    model = note.meta.get("model")
    model = str(model).strip() if model else None
    return AgentSpec(
        name,
        str(note.meta.get("description") or "").strip(),
        note.body.strip() + "\n",
        _split_tools(note.meta.get("tools")),
        None if model in (None, "", "inherit") else model,
    )


def load_agent(name: str) -> AgentSpec:
    dirs = prompt_dirs()
    for folder in dirs:
        path = folder / f"{name}.md"
        if path.is_file():
            return parse_agent(path.read_text(encoding="utf-8"), str(path))
    raise NotFoundError(
        f"agent prompt {name}.md not found in {', '.join(map(str, dirs))}: this reme-cc "
        "install lacks its package data; reinstall it (plugin: `scripts/launch.py --rebuild`)"
    )


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class AgentRun:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    turns: int = 0
    error: str | None = None
    backend: str = ""
    attempts: int = 1
    retryable: bool = False  # the agent process itself failed (not an API answer): worth a rerun

    @property
    def ok(self) -> bool:
        return self.error is None

    def add_usage(self, usage: Any) -> None:
        get = usage.get if isinstance(usage, dict) else (lambda k, d=0: getattr(usage, k, d))
        self.usage["input_tokens"] += (
            int(get("input_tokens", 0) or 0)
            + int(get("cache_creation_input_tokens", 0) or 0)
            + int(get("cache_read_input_tokens", 0) or 0)
        )
        self.usage["output_tokens"] += int(get("output_tokens", 0) or 0)


def _redact_value(value: Any) -> Any:
    from ..notes.redact import redact

    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    return value


def _call_tool(ctx: Context, tool: Tool[Any], args: dict[str, Any], run: AgentRun) -> tuple[str, bool]:
    """Run one registry tool for an agent: (text, is_error). ReMeErrors become error text the model
    can act on; anything else is logged and reported as an internal error.

    Privacy: what a tool returns goes to the model, so secrets in it are redacted (``read`` of a raw
    resource file, a search hit); what an agent writes is redacted too (a model that knows a key from
    elsewhere still cannot put it into daily/ or digest/)."""
    from ..notes.redact import redact

    if not tool.read_only and isinstance(args, dict):
        args = _redact_value(args)
    try:
        text, is_error = redact(tool.run(ctx, args).text()), False
    except ReMeError as exc:
        text, is_error = f"error: {exc}", True
    except Exception as exc:  # a bug in a tool must not kill the agent run
        log.exception("tool %s failed", tool.name)
        text, is_error = f"error: internal error in {tool.name}: {type(exc).__name__}: {exc}", True
    run.tool_calls.append({"name": tool.name, "input": args, "is_error": is_error})
    return text, is_error


def backend_for(ctx: Context) -> str:
    choice = (ctx.config.agent_backend or "auto").strip().lower()
    if choice not in ("auto", "sdk", "anthropic"):
        raise InvalidInputError(f"agent_backend={choice!r} is not valid; use auto, sdk or anthropic")
    if choice == "auto":
        return "anthropic" if ctx.config.anthropic_api_key else "sdk"
    return choice


# ---------------------------------------------------------------------------------------------
# public API


async def run_agent(
    ctx: Context,
    agent: str | AgentSpec,
    prompt: str,
    *,
    tools: list[str] | None = None,
    subagents: dict[str, AgentSpec] | None = None,
    model: str | None = None,
    timeout: float | None = None,
    max_turns: int | None = None,
    retries: int | None = None,
    backend: str | None = None,
    bind: Mapping[str, Any] | None = None,
) -> AgentRun:
    """Run ``agent`` on ``prompt`` with only ``tools`` (default: the spec's) and return an AgentRun.
    ``bind``: values for this run's tools (the recorder's ``card``: the one card its daily_write writes).

    Never raises for model/API failures or timeouts: they come back in ``AgentRun.error`` (a caller
    such as the recorder must know not to advance its cursor). Bad configuration raises ReMeError."""
    spec = load_agent(agent) if isinstance(agent, str) else agent
    from ..notes.redact import redact

    prompt = redact(prompt)  # conversation, resource text, daily notes: no secret ever reaches a model
    names = list(tools if tools is not None else spec.tools)
    tool_objs = resolve_tools(names, bind)
    subs = dict(subagents or {})
    sub_tools = {k: resolve_tools(v.tools, bind) for k, v in subs.items()}
    chosen = backend or backend_for(ctx)
    model = model or spec.model or ctx.config.model
    timeout = ctx.config.agent_timeout_s if timeout is None else timeout
    max_turns = max_turns or ctx.config.agent_max_turns
    retries = ctx.config.agent_retries if retries is None else retries
    started = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        run = AgentRun(backend=chosen, attempts=attempt)
        coro = (_run_sdk if chosen == "sdk" else _run_anthropic)(
            ctx, spec, prompt, tool_objs, subs, sub_tools, model, max_turns, retries, run
        )
        remaining = max(0.1, timeout - (time.monotonic() - started)) if timeout else None
        try:
            await asyncio.wait_for(coro, remaining)
        except asyncio.TimeoutError:
            run.error = f"timed out after {timeout:.0f}s"
            return run
        except ReMeError:
            raise
        except Exception as exc:  # SDK/CLI/transport failures: reported, not raised
            run.error = run.error or f"{type(exc).__name__}: {exc}"
            run.retryable = True
        # HTTP 429/5xx/overloaded are retried per request, with exponential backoff, inside the CLI
        # (CLAUDE_CODE_MAX_RETRIES) and the anthropic client (max_retries). A crashed agent process
        # is rerun here, only when it wrote nothing (repeating writes could duplicate them).
        if run.error and run.retryable and not run.tool_calls and attempt <= retries:
            await asyncio.sleep(min(30.0, 0.5 * 2 ** (attempt - 1)))
            continue
        return run


def run_agent_sync(ctx: Context, agent: str | AgentSpec, prompt: str, **kw: Any) -> AgentRun:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_agent(ctx, agent, prompt, **kw))
    # called from inside an event loop (e.g. an async server): run in a helper thread's own loop
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run_agent(ctx, agent, prompt, **kw)).result()


# ---------------------------------------------------------------------------------------------
# backend: Claude Agent SDK


def _tool_schema(tool: Tool[Any]) -> dict[str, Any]:
    schema = tool.params.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def sdk_tool_name(name: str) -> str:
    return SDK_TOOL_PREFIX + name


def agent_env() -> dict[str, str]:
    """Environment for the agent's CLI process (merged over ours by the SDK)."""
    return {
        INTERNAL_ENV: "1",
        # MCP tools are "deferred" behind ToolSearch by default; we offer no ToolSearch, so list them
        "ENABLE_TOOL_SEARCH": "false",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
        "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    }


async def _run_sdk(
    ctx: Context,
    spec: AgentSpec,
    prompt: str,
    tool_objs: list[Tool[Any]],
    subs: dict[str, AgentSpec],
    sub_tools: dict[str, list[Tool[Any]]],
    model: str,
    max_turns: int,
    retries: int,
    run: AgentRun,
) -> None:
    from claude_agent_sdk import (
        AgentDefinition,
        AssistantMessage,
        ClaudeAgentOptions,
        ResultMessage,
        SdkMcpTool,
        TextBlock,
        create_sdk_mcp_server,
        query,
    )

    every = {t.name: t for t in tool_objs}
    for tl in sub_tools.values():
        every.update({t.name: t for t in tl})

    def wrap(tool: Tool[Any]) -> SdkMcpTool[Any]:
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            text, is_error = _call_tool(ctx, tool, args, run)
            return {"content": [{"type": "text", "text": text}], "is_error": is_error}

        return SdkMcpTool(tool.name, tool.description, _tool_schema(tool), handler)

    server = create_sdk_mcp_server(SERVER_NAME, tools=[wrap(t) for t in every.values()])
    allowed = [sdk_tool_name(t.name) for t in tool_objs]
    builtins: list[str] = []
    agents = None
    if subs:
        builtins = [SUBAGENT_TOOL]
        allowed.append(SUBAGENT_TOOL)
        agents = {
            k: AgentDefinition(
                description=s.description or k,
                prompt=s.prompt,
                tools=[sdk_tool_name(t.name) for t in sub_tools[k]],
                model=s.model or "inherit",
            )
            for k, s in subs.items()
        }
        for tl in sub_tools.values():
            allowed += [sdk_tool_name(t.name) for t in tl if sdk_tool_name(t.name) not in allowed]
    env = agent_env()
    env["CLAUDE_CODE_MAX_RETRIES"] = str(retries)
    stderr_tail: list[str] = []
    options = ClaudeAgentOptions(
        system_prompt=spec.prompt,
        tools=builtins,  # [] = no Bash/Read/Write/...: only our MCP tools exist
        allowed_tools=allowed,
        mcp_servers={SERVER_NAME: server},
        strict_mcp_config=True,  # ignore the user's own MCP servers
        setting_sources=[],  # no user/project settings, hooks or plugins
        agents=agents,
        model=model,
        max_turns=max_turns,
        cwd=str(ctx.workspace.root),
        env=env,
        extra_args={"no-session-persistence": None},
        stderr=lambda line: (stderr_tail.append(line), stderr_tail.__delitem__(slice(0, -20))),
    )
    if ctx.config.claude_cli:
        options.cli_path = ctx.config.claude_cli
    texts: list[str] = []
    try:
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, AssistantMessage):
                if getattr(message, "parent_tool_use_id", None):
                    continue  # a subagent's message
                texts = [b.text for b in message.content if isinstance(b, TextBlock)] or texts
            elif isinstance(message, ResultMessage):
                run.turns = message.num_turns
                if message.usage:
                    run.add_usage(message.usage)
                if message.is_error:
                    detail = message.result or "; ".join(message.errors or []) or message.subtype
                    status = message.api_error_status
                    run.error = f"agent failed ({message.subtype}{f', HTTP {status}' if status else ''}): {detail}"[
                        :500
                    ]
                elif message.result:
                    texts = [message.result]
    except Exception as exc:  # the CLI is missing, cannot start, or died: say so with its own words
        await asyncio.sleep(0.2)  # let the stderr reader catch the last lines
        said = " | ".join(ln.strip() for ln in stderr_tail[-3:] if ln.strip())
        cli = options.cli_path or "the bundled Claude CLI"
        run.error = (
            f"the Claude CLI ({cli}) failed: {type(exc).__name__}: {exc}".rstrip(": ")
            + (f"; it said: {said}" if said else "")
        )[:500]
        raise
    run.text = "\n".join(texts).strip()
    if run.error is None and not run.turns and not run.text and stderr_tail:
        run.error = "the Claude CLI ended without a result: " + " | ".join(stderr_tail[-3:])[:400]


# ---------------------------------------------------------------------------------------------
# backend: anthropic SDK tool-use loop


def _anthropic_tools(tools: list[Tool[Any]], subs: dict[str, AgentSpec]) -> list[dict[str, Any]]:
    out = [{"name": t.name, "description": t.description, "input_schema": _tool_schema(t)} for t in tools]
    if subs:
        listing = "\n".join(f"- {k}: {s.description}" for k, s in subs.items())
        out.append(
            {
                "name": SUBAGENT_TOOL,
                "description": "Launch a subagent to handle a task on its own; returns its final answer. "
                "Several Agent calls in one reply run in parallel. Available agents:\n" + listing,
                "input_schema": {
                    "type": "object",
                    "properties": {
                        "subagent_type": {"type": "string", "enum": sorted(subs)},
                        "description": {"type": "string", "description": "a short (3-5 word) task label"},
                        "prompt": {"type": "string", "description": "the complete task for the subagent"},
                    },
                    "required": ["subagent_type", "prompt"],
                },
            }
        )
    return out


async def _run_anthropic(
    ctx: Context,
    spec: AgentSpec,
    prompt: str,
    tool_objs: list[Tool[Any]],
    subs: dict[str, AgentSpec],
    sub_tools: dict[str, list[Tool[Any]]],
    model: str,
    max_turns: int,
    retries: int,
    run: AgentRun,
) -> None:
    import anthropic

    key = ctx.config.anthropic_api_key or os.environ.get("ANTHROPIC_API_KEY", "")
    if not key:
        raise AgentError(
            "the anthropic backend needs an API key: set REME_ANTHROPIC_API_KEY (or use agent_backend=sdk)"
        )
    # base_url: ANTHROPIC_BASE_URL is honoured by the client itself
    client = anthropic.AsyncAnthropic(api_key=key, max_retries=retries)
    try:
        run.text = await _loop(client, ctx, spec, prompt, tool_objs, subs, sub_tools, model, max_turns, run, top=True)
    finally:
        await client.close()


async def _loop(
    client: Any,
    ctx: Context,
    spec: AgentSpec,
    prompt: str,
    tool_objs: list[Tool[Any]],
    subs: dict[str, AgentSpec],
    sub_tools: dict[str, list[Tool[Any]]],
    model: str,
    max_turns: int,
    run: AgentRun,
    top: bool,
) -> str:
    import anthropic

    by_name = {t.name: t for t in tool_objs}
    tools = _anthropic_tools(tool_objs, subs if top else {})
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    final = ""
    for _turn in range(max_turns):
        try:
            kwargs: dict[str, Any] = {"model": model, "max_tokens": 8192, "system": spec.prompt, "messages": messages}
            if tools:
                kwargs["tools"] = tools
            msg = await client.messages.create(**kwargs)
        except anthropic.APIStatusError as exc:
            run.error = f"agent failed (HTTP {exc.status_code}): {exc.message}"[:500]
            return final
        except anthropic.APIConnectionError as exc:
            run.error = f"agent failed: cannot reach the Anthropic API ({exc})"[:500]
            return final
        if top:
            run.turns += 1
        run.add_usage(msg.usage)
        content = [b.model_dump(exclude_none=True) for b in msg.content]
        messages.append({"role": "assistant", "content": content})
        texts = [b.text for b in msg.content if b.type == "text"]
        if texts:
            final = "\n".join(texts).strip()
        uses = [b for b in msg.content if b.type == "tool_use"]
        if msg.stop_reason != "tool_use" or not uses:
            return final

        async def answer(use: Any) -> dict[str, Any]:
            args = use.input if isinstance(use.input, dict) else {}
            if use.name == SUBAGENT_TOOL and top and subs:
                text, is_error = await _subagent(client, ctx, subs, sub_tools, model, max_turns, run, args)
            elif use.name in by_name:
                text, is_error = _call_tool(ctx, by_name[use.name], args, run)
            else:
                text, is_error = f"error: no tool named {use.name}; use one of {', '.join(by_name)}", True
            return {"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": is_error}

        results = await asyncio.gather(*(answer(u) for u in uses))  # parallel uses run concurrently
        messages.append({"role": "user", "content": list(results)})
    if top:
        run.error = f"agent stopped after max_turns={max_turns} without finishing"
    return final


async def _subagent(
    client: Any,
    ctx: Context,
    subs: dict[str, AgentSpec],
    sub_tools: dict[str, list[Tool[Any]]],
    model: str,
    max_turns: int,
    run: AgentRun,
    args: dict[str, Any],
) -> tuple[str, bool]:
    kind = str(args.get("subagent_type", ""))
    if kind not in subs:
        return f"error: unknown subagent_type {kind!r}; use one of {', '.join(sorted(subs))}", True
    spec = subs[kind]
    before = run.error
    text = await _loop(
        client,
        ctx,
        spec,
        str(args.get("prompt", "")),
        sub_tools[kind],
        {},
        {},
        spec.model or model,
        max_turns,
        run,
        top=False,
    )
    if run.error != before:  # a subagent's API failure is its result, not the whole run's
        err, run.error = run.error, before
        return f"error: subagent {kind} failed: {err}", True
    run.tool_calls.append({"name": SUBAGENT_TOOL, "input": args, "is_error": False})
    return text or "(the subagent returned no text)", False


def describe(run: AgentRun) -> str:
    """One log line for a run."""
    return json.dumps(
        {
            "backend": run.backend,
            "turns": run.turns,
            "attempts": run.attempts,
            "usage": run.usage,
            "tool_calls": [c["name"] for c in run.tool_calls],
            "error": run.error,
        }
    )


class Runner:
    """The memory pipelines' way to start agents (``memory.context.AgentRunner``): the surfaces that
    start a pipeline put ``RUNNER`` on its Context, so ``memory/`` never imports this module."""

    def load(self, name: str) -> AgentSpec:
        return load_agent(name)

    def spec(self, name: str, description: str, prompt: str, tools: list[str] | None = None) -> AgentSpec:
        return AgentSpec(name, description, prompt, list(tools or []), None)

    async def run(self, ctx: Context, agent: str | AgentSpec, prompt: str, **options: Any) -> AgentRun:
        return await run_agent(ctx, agent, prompt, **options)

    def run_sync(self, ctx: Context, agent: str | AgentSpec, prompt: str, **options: Any) -> AgentRun:
        return run_agent_sync(ctx, agent, prompt, **options)

    def describe(self, run: AgentRun) -> str:
        return describe(run)


RUNNER = Runner()


def with_agents(ctx: Context) -> Context:
    """``ctx`` able to start memory agents (the surfaces call this before running a pipeline)."""
    ctx.agents = ctx.agents or RUNNER
    return ctx
