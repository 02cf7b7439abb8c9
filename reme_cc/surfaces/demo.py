"""`reme-cc demo [DIR] [--real]`: the whole memory loop, on real files, in about a minute.

1. a Claude Code session — the real CLI bundled in claude-agent-sdk, with this plugin loaded from its
   folder (``--plugin-dir``, per run: nothing is installed) in a demo project — whose real hooks copy
   the transcript into ``session/claude_code/`` and start the recorder;
2. the recorder (detached, as after any session) writes the session's card in ``daily/<today>/``;
3. ``reme-cc dream`` consolidates today's cards into a digest node whose ``## Sources`` links the card;
4. recall: what the next session in that project gets — the SessionStart brief and the search tool's
   answer to a follow-up prompt.

The model: by default the OFFLINE SCRIPTED MODEL (demo_model.py: a stand-in for the Anthropic API on
127.0.0.1, nothing spent, every line it wrote labelled), with a temporary HOME for the CLI. ``--real``
uses the real model through the user's Claude login or ANTHROPIC_API_KEY (a few cents of tokens).
The workspace also holds a few days of earlier history (cards and digest nodes written through the
same tools an agent uses), so search and the brief look like a workspace in use.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .demo_model import LABEL, Script, ScriptedModel
from ..base.errors import ConflictError, ReMeError

MARKER = ".reme-demo"  # a demo folder can be re-created; any other non-empty folder is refused
PROJECT = "project/webshop"  # the demo project, inside the demo folder (not a layer the index walks)
CLAUDE_HOME = ".claude-home"  # the CLI's HOME for an offline run (its settings, the raw transcript)
SESSION_PROMPT = "For JavaScript projects I always use pnpm, never npm. Please keep that in mind."
FOLLOW_UP = "Set up the frontend of the new project: which package manager should I use?"
RECORD_TIMEOUT = {False: 90.0, True: 300.0}  # seconds for the recorder's card (offline, real)
SESSION_TIMEOUT = {False: 120.0, True: 300.0}

SCRIPT = Script(
    session_reply="Noted: pnpm for every JavaScript project, never npm.",
    card_name="JavaScript package manager",
    card_description="The user said they always use pnpm, never npm, for JavaScript projects, and asked "
    "the assistant to keep that in mind.",
    card_content="## What happened\n\nIn the webshop project the user stated a standing preference: pnpm, "
    "never npm, for every JavaScript project. The assistant acknowledged it.\n\n"
    "## Conclusions\n\n- Use pnpm (not npm) to install, add and run packages in JavaScript projects.\n",
    unit_name="Prefers pnpm over npm",
    unit_bucket="personal",
    unit_summary="The user uses pnpm, never npm, in every JavaScript project.",
    node_path="digest/personal/prefers-pnpm.md",
    node_description="The user uses pnpm as the JavaScript package manager in every project, never npm.",
    node_body="Use pnpm, not npm, for JavaScript projects: `pnpm install`, `pnpm add <pkg>`, `pnpm run <script>`.\n"
    "The user stated this as a standing preference, for every project, not only the webshop.",
    topics=[{"title": "JavaScript tooling", "reason": "package-manager choice came up in the webshop project"}],
)


# ---- earlier history: cards of a few days ago, already dreamed into digest nodes ----------------------
def history(today: _dt.date) -> tuple[list[dict[str, Any]], list[str]]:
    """Notes of two earlier days (outside the dream's two-day window, so a dream leaves them alone)."""
    d1, d2 = ((today - _dt.timedelta(days=n)).isoformat() for n in (3, 2))
    notes: list[dict[str, Any]] = [
        {
            "path": f"daily/{d1}/docs-style-review.md",
            "name": "Docs style review",
            "description": "User asked for direct, engineering-style Chinese technical docs with context and examples.",
            "metadata": {"session_id": "demo-history-1", "tags": ["docs", "preference"]},
            "content": "# What happened\n\nReviewed the README draft together. The user asked three times to add the\n"
            "*motivation*, the *boundaries* and a concrete *example* to each section, and to drop marketing\n"
            "language. 用户希望技术文档直接、工程化，有上下文但不冗长。\n\n# Follow-ups\n\n"
            "- Rewrite the install section with a runnable example.\n",
        },
        {
            "path": f"daily/{d1}/pv-supply-chain.md",
            "name": "光伏产业链调研",
            "description": "从硅料到组件的光伏产业链梳理，以及主要厂商。",
            "metadata": {"session_id": "demo-history-2", "tags": ["新能源", "光伏"]},
            "content": "# 结论\n\n光伏产业链可以拆成硅料、硅片、电池片和组件四个环节。\n"
            "隆基绿能在硅片环节领先；组件价格在今年上半年继续下降。\n",
        },
        {
            "path": f"daily/{d2}/deploy-rollback.md",
            "name": "Deploy rollback drill",
            "description": "Rolled back a bad deploy: pin the previous image tag, then run the smoke tests before "
            "reopening traffic.",
            "metadata": {"session_id": "demo-history-3", "tags": ["ops"]},
            "content": "# Steps that worked\n\n1. Pin the previous image tag in the release config.\n"
            "2. Redeploy and run the smoke tests.\n3. Reopen traffic only after the health check is green.\n\n"
            "# Lesson\n\nKeep the previous tag written down before every release.\n",
        },
        {
            "path": "digest/personal/docs-style.md",
            "name": "User preference: technical docs style",
            "description": "The user prefers direct, engineering-style technical writing with motivation, boundaries "
            "and examples.",
            "metadata": {"kind": "preference", "confidence": "observed"},
            "content": "The user repeatedly asks documents to state the motivation, the boundaries and a concrete\n"
            "example, and to avoid marketing language. Apply this when following\n"
            "[[digest/procedure/release-rollback.md]] write-ups too.\n\n"
            f"## Sources\n\n- Observed in [[daily/{d1}/docs-style-review.md]].\n",
        },
        {
            "path": "digest/wiki/光伏产业链.md",
            "name": "光伏产业链",
            "description": "光伏产业链的四个环节（硅料、硅片、电池片、组件）与主要厂商。",
            "metadata": {"kind": "concept"},
            "content": "光伏产业链可以拆成硅料、硅片、电池片和组件。主要厂商包括隆基绿能。\n\n"
            f"## Sources\n\n- 调研记录 [[daily/{d1}/pv-supply-chain.md]]\n",
        },
        {
            "path": "digest/procedure/release-rollback.md",
            "name": "Release rollback procedure",
            "description": "How to roll back a bad deploy safely: pin the previous tag, redeploy, smoke-test, then "
            "reopen traffic.",
            "metadata": {"kind": "procedure"},
            "content": "1. Pin the previous image tag.\n2. Redeploy and run the smoke tests.\n"
            "3. Reopen traffic after the health check is green.\n\n"
            "Write the runbook in the style of [[digest/personal/docs-style.md]].\n\n"
            f"## Sources\n\n- Drill on [[daily/{d2}/deploy-rollback.md]]\n",
        },
    ]
    return notes, [d1, d2]


# ---- the demo folder ------------------------------------------------------------------------------------
def _prepare(root: Path) -> None:
    """An empty or new folder, or an earlier demo (emptied: it said it is safe to delete); never anything else."""
    if root.exists() and not root.is_dir():
        raise ConflictError(f"{root} is a file; choose a folder for the demo workspace")
    if root.is_dir() and any(root.iterdir()):
        if not (root / MARKER).is_file():
            raise ConflictError(f"{root} is not empty and is not a reme-cc demo; choose a new folder (e.g. reme-demo)")
        for entry in root.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("created by `reme-cc demo`; safe to delete this folder\n", encoding="utf-8")


def _write_history(ws: Any, config: Any) -> list[str]:
    from ..tools import Context, all_tools

    notes, dates = history(_dt.date.today())
    ctx = Context(ws, config)
    try:
        tools = all_tools()
        written = [tools["write"].run(ctx, note).path for note in notes]
        written += [tools["daily_reindex"].run(ctx, {"date": d}).path for d in dates]
        ctx.index.sync()
        return written
    finally:
        ctx.close()


def reme_command() -> list[str]:
    """How to run this reme-cc again from a shell: the console script next to this interpreter."""
    exe = Path(os.path.abspath(sys.executable))  # not resolved: a venv's python is a symlink out of the venv
    script = exe.with_name("reme-cc")
    return [str(script)] if script.is_file() else [str(exe), "-m", "reme_cc"]


def claude_cli() -> Path:
    import claude_agent_sdk

    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not path.is_file():
        raise ReMeError(
            f"the Claude Code CLI bundled with claude-agent-sdk is missing ({path}); "
            "reinstall it: pip install --force-reinstall claude-agent-sdk"
        )
    return path


def plugin_folder() -> tuple[Path, str]:
    """The plugin folder this reme_cc runs from (a checkout or the installed plugin) and its name."""
    from ..base.bootstrap import plugin_root

    root = plugin_root()
    try:
        name = str(json.loads((root / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))["name"])
    except (OSError, ValueError, KeyError):
        name = ""
    if not name or not (root / "hooks" / "hooks.json").is_file():
        raise ReMeError(
            f"the demo loads the plugin from its folder, and {root} is not one (no .claude-plugin/ "
            "or hooks/): run it from a checkout (`./dev demo`) or through the installed plugin "
            "(`python3 <plugin folder>/scripts/launch.py demo`)"
        )
    return root, name


# ---- the model ------------------------------------------------------------------------------------------
def real_login(environ: dict[str, str]) -> tuple[str, bool]:
    """(what reaches the real model, whether the user's HOME is needed for it)."""
    if environ.get("ANTHROPIC_API_KEY", "").strip():
        return "ANTHROPIC_API_KEY", False
    if environ.get("CLAUDE_CODE_OAUTH_TOKEN", "").strip():
        return "CLAUDE_CODE_OAUTH_TOKEN", False
    if (Path.home() / ".claude" / ".credentials.json").is_file() or sys.platform == "darwin":  # macOS: keychain
        return "your Claude Code login", True
    raise ReMeError(
        "--real needs a Claude login or an API key: run `claude` and /login, or set "
        "ANTHROPIC_API_KEY; or leave out --real to watch the loop with the offline scripted model"
    )


def session_env(root: Path, home: Path, model_url: str | None) -> dict[str, str]:
    """The environment of the demo session, its hooks, the recorder and the dream.

    The demo's own workspace and settings only: a REME_WORKSPACE or REME_RECORD of the user's would send
    the demo into their memory or stop it; a Claude Code session around this one must not leak its
    variables in. REME_PYTHON makes the hooks run the recorder with this interpreter (nothing is built).
    Offline, the CLI's HOME is the demo's and the API is the scripted model: no Claude setting is read."""
    keep_reme = ("REME_EMBEDDING", "REME_DEBUG")
    drop_claude = ("CLAUDECODE", "CLAUDE_PLUGIN_", "CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE", "CLAUDE_CODE_ENTRYPOINT")
    env = {
        k: v
        for k, v in os.environ.items()
        if not (k.startswith("REME_") and k not in keep_reme) and not k.startswith(drop_claude)
    }
    if model_url:
        env = {k: v for k, v in env.items() if not k.startswith(("CLAUDE", "ANTHROPIC"))}
        env.update({"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "offline-demo-no-key"})
    env.update(
        {
            "HOME": str(home),
            "REME_WORKSPACE": str(root),
            "REME_PYTHON": sys.executable,
            "REME_AUTO_DREAM": "false",  # the demo runs its dream itself, after the card is written
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",  # the session keeps nothing of its own: reme is the memory here
            "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
        }
    )
    return env


# ---- the steps ------------------------------------------------------------------------------------------
def run_session(root: Path, project: Path, env: dict[str, str], model: str, real: bool) -> dict[str, Any]:
    plugin, name = plugin_folder()
    options = {"workspace": str(root), "auto_dream": False}
    args = [
        str(claude_cli()),
        "-p",
        SESSION_PROMPT,
        "--output-format",
        "json",
        "--model",
        model,
        "--plugin-dir",
        str(plugin),  # this run only: nothing is installed into any Claude settings
        "--settings",
        json.dumps({"pluginConfigs": {f"{name}@inline": {"options": options}}}),
        "--setting-sources",
        "project",  # no user settings: their own plugins (a reme too) stay out
        "--strict-mcp-config",  # one prompt, no tools: the hooks are what this session shows
        "--tools",
        "",
    ]
    try:
        proc = subprocess.run(
            args,
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT[real],
        )
    except subprocess.TimeoutExpired:
        raise ReMeError(f"the Claude Code session did not end within {SESSION_TIMEOUT[real]:.0f}s") from None
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        out = {}
    if proc.returncode != 0 or not isinstance(out, dict) or out.get("is_error") or not out.get("session_id"):
        said = (out.get("result") if isinstance(out, dict) else "") or proc.stderr.strip() or proc.stdout.strip()
        hint = " (log in with `claude` and /login, or set ANTHROPIC_API_KEY)" if real else ""
        raise ReMeError(f"the Claude Code session failed (exit {proc.returncode}): {str(said)[-600:]}{hint}")
    return out


def wait_for_card(ws: Any, sid: str, timeout: float) -> Any:
    """The recorder runs detached after the session: wait for its card and for it to finish."""
    from ..memory import recording
    from ..memory.daily import find_card_by_session

    deadline = time.monotonic() + timeout
    seen_running = False
    while time.monotonic() < deadline:
        running = recording.running(ws, sid)
        seen_running = seen_running or running
        card = find_card_by_session(ws, sid) if (ws.root / "daily").is_dir() else None
        if card is not None and not running:
            return card
        if seen_running and not running and card is None:
            break  # it ran and wrote nothing
        time.sleep(0.25)
    log = ws.logs / "auto-memory.log"
    what = "finished without writing a card" if seen_running else f"wrote no card within {timeout:.0f}s"
    raise ReMeError(f"the recorder {what} for session {sid}; its log ({log}) ends with:\n{_log_tail(log)}")


def run_dream(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*reme_command(), "--workspace", str(root), "dream"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def nodes_citing(ws: Any, rel: str) -> list[str]:
    """Digest nodes whose ## Sources section links ``rel`` (read from the files, not from any report)."""
    from ..notes.evidence import link_targets, sources_section

    out = []
    for path in sorted((ws.root / "digest").rglob("*.md")):
        section = sources_section(path.read_text(encoding="utf-8", errors="replace"))
        if section is not None and rel in link_targets(section):
            out.append(ws.relpath(path))
    return out


def recall(ws: Any, config: Any, project: Path, query: str) -> tuple[str, Any]:
    """What the next session in ``project`` gets: the SessionStart brief and the search tool's answer."""
    from ..index import Index
    from ..memory.brief import build_brief
    from ..tools import Context, all_tools

    ctx = Context(ws, config, _index=Index(ws, config, background_embedding=False))
    try:
        ctx.index.sync()
        ctx.index.embed_pending()  # in the foreground, so this search already uses the vectors
        found = all_tools()["search"].run(ctx, {"query": query, "limit": 3})
    finally:
        ctx.close()
    return build_brief(ws, config, cwd=str(project)), found


def hit_lines(found: Any) -> list[str]:
    """The search answer in short: each hit's path, score and first line (the full text: try next)."""
    out = []
    for i, hit in enumerate(found.results, 1):
        first = next((ln.strip() for ln in hit.text.splitlines() if ln.strip() and not ln.startswith("---")), "")
        out.append(f"{i}. {hit.path}:{hit.start_line}-{hit.end_line}  score {hit.score:.4f}")
        out.append(f"   {first[:110]}{'…' if len(first) > 110 else ''}")
    return out or ["no results"]


def try_next(root: Path, node: str | None, today: str, query: str) -> list[str]:
    reme = " ".join(shlex.quote(p) for p in reme_command()) + " --workspace " + shlex.quote(str(root))
    lines = [f"{reme} search {shlex.quote(query)}"]
    if node:
        lines.append(f"{reme} read {shlex.quote(node)}")
    lines += [f"{reme} daily-list {today}", f"{reme} dream", f"{reme} status"]
    return lines


# ---- the run --------------------------------------------------------------------------------------------
class Out:
    """What the demo prints (nothing with --json); lines the model wrote carry its label."""

    def __init__(self, quiet: bool, real: bool):
        self.quiet = quiet
        self.tag = "[model]" if real else "[scripted model]"

    def say(self, *lines: str) -> None:
        if not self.quiet:
            print(*lines, sep="\n", flush=True)

    def model(self, text: str) -> None:
        self.say(*(f"    {self.tag} {line}" for line in text.strip().splitlines() if line.strip()))


def _log_tail(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-1500:] if path.is_file() else "(no log yet)"


def step_session(out: Out, ws: Any, project: Path, env: dict[str, str], model: str, real: bool) -> str:
    """1. The session, through the real hooks; returns its id once the hooks have copied it."""
    plugin = plugin_folder()[0]
    out.say(
        f"\n1. A Claude Code session in {project}",
        f"   (the real CLI bundled in claude-agent-sdk, with the plugin loaded from {plugin} for this run only)",
        f"    [user] {SESSION_PROMPT}",
    )
    t = time.monotonic()
    result = run_session(ws.root, project, env, model, real)
    sid = str(result["session_id"])
    out.model(str(result.get("result") or ""))
    copy = f"session/claude_code/{sid}.jsonl"
    if not (ws.root / copy).is_file():
        log = ws.logs / "hooks.log"
        raise ReMeError(f"the hooks did not copy the session to {copy}; {log} ends with:\n{_log_tail(log)}")
    out.say(f"   hooks: the transcript copied to {copy}; the recorder started ({time.monotonic() - t:.1f}s)")
    return sid


def step_card(out: Out, ws: Any, sid: str, real: bool) -> Any:
    """2. The recorder's card of the session."""
    out.say("\n2. The recorder writes the session's daily card")
    t = time.monotonic()
    card = wait_for_card(ws, sid, RECORD_TIMEOUT[real])
    out.say(f"   {card.path} ({time.monotonic() - t:.1f}s)")
    out.model(f"{card.name}: {card.description}")
    out.say(f"   source_conversation: {card.meta.get('source_conversation')}")
    return card


def step_dream(out: Out, ws: Any, card: Any, env: dict[str, str], real: bool) -> tuple[str, str]:
    """3. `reme-cc dream`; returns (the digest node citing the card, the dream's summary)."""
    from ..notes.frontmatter import parse_note

    out.say("\n3. The dream consolidates today's cards into the digest", f"   $ reme-cc --workspace {ws.root} dream")
    t = time.monotonic()
    dreamed = run_dream(ws.root, env)
    out.say(*(f"   {line}" for line in dreamed.stdout.strip().splitlines()))
    if dreamed.returncode != 0:
        raise ReMeError(
            f"reme-cc dream failed (exit {dreamed.returncode}): {(dreamed.stderr or dreamed.stdout).strip()[-800:]}"
        )
    nodes = nodes_citing(ws, card.path)
    if not nodes:
        raise ReMeError(
            f"the dream wrote no digest node citing {card.path}"
            + (" (the real model found nothing durable in it)" if real else "")
        )
    out.say(f"   {nodes[0]} ({time.monotonic() - t:.1f}s), its ## Sources links [[{card.path}]]:")
    out.model(parse_note(ws.read_bytes(nodes[0]).decode("utf-8", errors="replace")).body)
    return nodes[0], dreamed.stdout.strip()


def step_recall(out: Out, ws: Any, config: Any, project: Path, node: str, query: str) -> tuple[str, Any]:
    """4. What the next session in the project gets; the node must be in it."""
    out.say(f"\n4. Recall: what the next session in {project.name} gets (quoting the notes above)")
    t = time.monotonic()
    brief, found = recall(ws, config, project, query)
    out.say(
        "   The SessionStart brief (added to the session's context):",
        *(f"    {line}" for line in (brief or "(empty)").splitlines()),
        f'   The search tool, for the prompt "{query}" ({time.monotonic() - t:.1f}s):',
        *(f"    {line}" for line in hit_lines(found)),
    )
    if node not in brief and node not in [hit.path for hit in found.results]:
        raise ReMeError(f"{node} is in neither the brief nor the search answer for {query!r}")
    return brief, found


def announce(out: Out, real: bool, model: str) -> Path | None:
    """The first line says which model runs. Returns the HOME the CLI needs (None: the demo's own)."""
    if not real:
        out.say(
            f"Model: {LABEL} — a stand-in for the Anthropic API on 127.0.0.1 that answers from a script; "
            f"nothing leaves this machine and nothing is spent. Lines it wrote are marked {out.tag}. "
            "With a Claude login or ANTHROPIC_API_KEY, `reme-cc demo --real` runs the real model (a few cents)."
        )
        return None
    login, needs_home = real_login(dict(os.environ))
    out.say(
        f"Model: the REAL model ({model}) through {login}: the session, the recorder and the dream spend "
        "about 40,000 input tokens (a few cents)."
    )
    if not needs_home:
        return None
    out.say(
        "       The CLI runs with your HOME for the login: it keeps this session in ~/.claude/projects like any "
        "other; no setting changes and nothing is installed (the plugin is loaded for this run only)."
    )
    return Path.home()


def run_demo(root: Path, *, query: str | None = None, as_json: bool = False, real: bool = False) -> int:
    from ..base.config import Config
    from ..base.workspace import Workspace

    t0 = time.monotonic()
    out = Out(as_json, real)
    if real:
        real_login(dict(os.environ))  # refused before anything is touched
    plugin_folder(), claude_cli()
    root = Path(os.path.abspath(root))
    _prepare(root)
    ws = Workspace(root)
    config = Config.load(ws.root)  # the demo's settings, loaded once
    model_name = config.model
    home = announce(out, real, model_name) or root / CLAUDE_HOME
    home.mkdir(parents=True, exist_ok=True)
    project = root / PROJECT
    project.mkdir(parents=True)
    (project / "package.json").write_text('{"name": "webshop", "private": true}\n', encoding="utf-8")
    out.say(f"Workspace: {root}")
    history_files = _write_history(ws, config)
    out.say(f"  (with {len(history_files)} files of earlier days: cards and the digest nodes dreamed from them)")

    with contextlib.nullcontext() if real else ScriptedModel(SCRIPT) as model:
        env = session_env(root, home, None if model is None else model.url)
        sid = step_session(out, ws, project, env, model_name, real)
        card = step_card(out, ws, sid, real)
        node, dream_text = step_dream(out, ws, card, env, real)
        if model is not None:
            calls = ", ".join(f"{who} {n}" for who, n in model.calls.items())
            out.say(
                f"   (the scripted model answered {sum(model.calls.values())} calls: {calls}; a real model "
                f"would have read about {model.input_tokens:,} input tokens)"
            )
    q = query or FOLLOW_UP
    brief, found = step_recall(out, ws, config, project, node, q)
    commands = try_next(root, node, _dt.date.today().isoformat(), q)
    seconds = round(time.monotonic() - t0, 1)
    if as_json:
        print(
            json.dumps(
                {
                    "workspace": str(root),
                    "model": "real" if real else "scripted",
                    "session_id": sid,
                    "session_copy": f"session/claude_code/{sid}.jsonl",
                    "card": card.path,
                    "node": node,
                    "dream": dream_text,
                    "recall": {"query": q, "brief": brief, "search": [hit.path for hit in found.results]},
                    "try_next": commands,
                    "seconds": seconds,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    out.say(
        "\nTry next:",
        *(f"  {line}" for line in commands),
        f"\nDone in {seconds:.0f}s ({'real' if real else 'scripted'} model). The workspace is {root}; "
        "delete the folder when done.",
    )
    return 0
