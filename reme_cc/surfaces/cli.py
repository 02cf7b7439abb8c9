"""`reme-cc`: the command line, built from the tool registry.

Every registered tool becomes a subcommand (``read_image`` -> ``reme-cc read-image``) whose options come
from its pydantic Params: bool -> flag, list -> repeatable option (or a comma list), dict -> JSON.
Extra, non-tool commands come from the modules in ``EXTENSIONS`` (each defines
``register_cli(subparsers)`` and sets ``func=handler`` with ``handler(args) -> int``); they are imported
lazily and a broken one is skipped with a warning, so it can never take the whole CLI down.
Errors print one line on stderr and exit 1; never a traceback (set REME_DEBUG=1 to see one).

One convention for every command, tools and extensions alike: ``--workspace DIR`` and ``--json`` are
accepted before or after the command (``_add_globals`` on each subparser); a ``--workspace`` that does not
exist is refused with a hint (``init`` and ``demo`` create one, ``doctor`` reports it); output cut short by its reader
(``| head``) ends quietly.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from ..base.errors import ReMeError

PROG = "reme-cc"
EXTENSIONS = (  # every module here is a surface: the layers below know no command line
    "reme_cc.surfaces.server",
    "reme_cc.surfaces.doctor",
    "reme_cc.surfaces.hooks",
    "reme_cc.surfaces.recall",
    "reme_cc.surfaces.pipelines",
    "reme_cc.surfaces.commands",
    "reme_cc.surfaces.view",
)


class UsageError(ReMeError):
    """Bad command-line usage (unknown option, missing argument)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:  # one line, exit 1 (argparse would print usage, exit 2)
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# ---- params -> argparse -------------------------------------------------------------------------------
def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(core type, optional?) of an annotation such as ``int | None``."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else str), True
    return annotation, False


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg}): {text!r}") from None


def _kind(annotation: Any) -> str:
    core, _ = _unwrap(annotation)
    origin = typing.get_origin(core) or core
    if core is bool:
        return "bool"
    if origin in (list, tuple, set):
        return "list"
    if origin is dict or core is Any:
        return "json"
    if origin is typing.Literal:
        return "choice"
    return {int: "int", float: "float"}.get(core, "str")


def _add_field(sub: argparse.ArgumentParser, name: str, field: Any, positional: bool, others: Any = ()) -> None:
    """``others``: the tool's other parameter names (a list option also answers to its singular,
    ``--tag`` for ``tags``, unless that is another parameter's)."""
    kind = _kind(field.annotation)
    help_text = field.description or ""
    dest = name
    flag = "--" + name.replace("_", "-")
    flags = [flag]
    kw: dict[str, Any] = {"help": help_text}
    if kind == "int":
        kw["type"] = int
    elif kind == "float":
        kw["type"] = float
    elif kind == "json":
        kw["type"], kw["metavar"] = _json_arg, "JSON"
    elif kind == "choice":
        kw["choices"] = list(typing.get_args(_unwrap(field.annotation)[0]))
    if positional and kind != "bool":
        if kind == "list":
            kw["nargs"] = "+" if field.is_required() else "*"
        elif not field.is_required():
            kw["nargs"] = "?"
        sub.add_argument(dest, metavar=name.upper(), default=None, **kw)
        return
    if kind == "bool":
        if field.default is True:
            sub.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        else:
            sub.add_argument(flag, dest=dest, action="store_const", const=True, default=None, help=help_text)
        return
    if kind == "list":
        kw["action"], kw["metavar"] = "append", "VALUE"
        kw["help"] = help_text + " (repeat the option or give a comma-separated list)"
        if name.endswith("s") and name[:-1] not in others:
            flags.append(flag[:-1])
    sub.add_argument(*flags, dest=dest, required=field.is_required(), default=None, **kw)


def _arguments(tool: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Tool arguments from the parsed namespace: only what was given, so pydantic defaults apply."""
    out: dict[str, Any] = {}
    for name, field in tool.params.model_fields.items():
        value = getattr(args, name, None)
        if value is None:
            continue
        if _kind(field.annotation) == "list":
            items: list[str] = []
            for v in value:
                items += [x.strip() for x in str(v).split(",") if x.strip()] if "," in str(v) else [v]
            value = items
        out[name] = value
    return out


# ---- running ------------------------------------------------------------------------------------------
def _add_globals(p: argparse.ArgumentParser, *, top: bool) -> None:
    # On subparsers the default is SUPPRESS so an option given before the subcommand is not reset.
    # An extension that defines one of them itself keeps its own.
    default = None if top else argparse.SUPPRESS
    if "--workspace" not in p._option_string_actions:
        p.add_argument(
            "--workspace",
            metavar="DIR",
            default=default,
            help="memory workspace folder (default: $REME_WORKSPACE or ~/.reme)",
        )
    if "--json" not in p._option_string_actions:
        p.add_argument(
            "--json",
            action="store_true",
            default=False if top else argparse.SUPPRESS,
            help="print machine-readable JSON instead of text",
        )


# every other command works on a workspace that exists (doctor checks it and says so itself)
NEEDS_NO_WORKSPACE = ("init", "demo", "doctor")


def _check_workspace(args: argparse.Namespace) -> None:
    """An explicit ``--workspace`` that does not exist is a typo far more often than a wish for a new,
    empty memory: refused, instead of creating it and answering "no results"."""
    given = getattr(args, "workspace", None)
    if not given or getattr(args, "command", None) in NEEDS_NO_WORKSPACE:
        return
    path = Path(os.path.expanduser(given))
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise UsageError(
            f"--workspace {given} {what}; check the path, or create a workspace there with "
            f"`{PROG} init {given}` (the default workspace is $REME_WORKSPACE or ~/.reme)"
        )


def _context(args: argparse.Namespace) -> Any:
    from ..tools import Context

    return Context.open(args.workspace)


def _print_result(result: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(result.text())


def _tool_handler(tool: Any) -> Any:
    def handler(args: argparse.Namespace) -> int:
        arguments = _arguments(tool, args)
        ctx = _context(args)
        try:
            _print_result(tool.run(ctx, arguments), args.json)
        finally:
            ctx.close()
        return 0

    return handler


def _wants_extensions(argv: Sequence[str], tool_names: set[str]) -> bool:
    """Importing extensions costs time; skip it when the command is a plain tool."""
    rest = list(argv)
    while rest:
        a = rest.pop(0)
        if a == "--workspace":
            rest = rest[1:]
        elif a.startswith("-"):
            if a in ("-h", "--help"):
                return True
        else:
            return a not in tool_names
    return True


def load_extensions(subparsers: Any, warn: Any = None) -> list[str]:
    loaded = []
    for name in EXTENSIONS:
        try:
            module = importlib.import_module(name)
            register = getattr(module, "register_cli", None)
            if register is None:
                continue
            register(subparsers)
            loaded.append(name)
        except Exception as exc:  # noqa: BLE001 - a broken extension must never break the CLI
            _warn(f"extension {name} unavailable ({type(exc).__name__}: {exc})", warn)
    return loaded


def _warn(message: str, warn: Any = None) -> None:
    (warn or (lambda m: print(f"{PROG}: warning: {m}", file=sys.stderr)))(message)


def load_tools() -> dict[str, Any]:
    """The registry (every module of ``tools.TOOL_MODULES``). A broken tool module is a bug: it fails
    here, loudly, instead of a CLI that silently lacks some commands."""
    from .. import tools

    return tools.all_tools()


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="File-native long-term memory for Claude Code.")
    _add_globals(parser, top=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    tools = load_tools()
    for tool in sorted(tools.values(), key=lambda t: t.name):
        first = re.split(r"(?<!e\.g)(?<!i\.e)\.\s", tool.description, maxsplit=1)[0].rstrip(".") + "."
        sub = subparsers.add_parser(tool.cli_name, help=first, description=tool.description)
        _add_globals(sub, top=False)
        for name, field in tool.params.model_fields.items():
            _add_field(sub, name, field, name in tool.positional, tool.params.model_fields)
        sub.set_defaults(func=_tool_handler(tool))
    _register_builtin(subparsers)
    if _wants_extensions(argv, {t.cli_name for t in tools.values()}):
        load_extensions(subparsers)
    for sub in set(subparsers.choices.values()):  # the extensions' commands follow the convention too
        _add_globals(sub, top=False)
    return parser


# ---- init and demo --------------------------------------------------------------------------------------
GITIGNORE = "# derived index state (rebuilt from the files by `reme-cc reindex`)\nmetadata/\n"


def _cmd_init(args: argparse.Namespace) -> int:
    from ..base.workspace import Workspace

    root = args.dir or args.workspace
    ws = Workspace(root)
    if not args.json:
        print(f"Workspace ready at {ws.root}")
    if args.git:
        gitignore = ws.root / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text(GITIGNORE, encoding="utf-8")
        elif "metadata/" not in gitignore.read_text(encoding="utf-8", errors="replace").split():
            with open(gitignore, "a", encoding="utf-8") as fh:
                fh.write("\n" + GITIGNORE)
        if not (ws.root / ".git").exists():
            try:
                subprocess.run(["git", "init", "-q", str(ws.root)], check=True, capture_output=True, text=True)
            except FileNotFoundError:
                raise ReMeError("git is not installed; install git or run init without --git") from None
            except subprocess.CalledProcessError as exc:
                raise ReMeError(f"git init failed: {(exc.stderr or '').strip() or exc}") from None
            if not args.json:
                print("Initialised a git repository (metadata/ is ignored)")
    if args.json:
        print(json.dumps({"workspace": str(ws.root), "git": (ws.root / ".git").exists()}))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    root = Path(os.path.expanduser(args.dir or args.workspace or "reme-demo"))
    return run_demo(root, query=args.query, as_json=args.json, real=args.real)


def _register_builtin(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "init",
        help="Create a memory workspace (optionally a git repository).",
        description="Create the workspace folders (session/, resource/, daily/, digest/…).",
    )
    _add_globals(p, top=False)
    p.add_argument("dir", nargs="?", help="workspace folder (default: --workspace, $REME_WORKSPACE or ~/.reme)")
    p.add_argument("--git", action="store_true", help="make it a git repository with metadata/ ignored")
    p.set_defaults(func=_cmd_init)
    p = subparsers.add_parser(
        "demo",
        help="Watch the whole memory loop in a demo workspace (about a minute).",
        description="A Claude Code session with this plugin (the real CLI and hooks) -> its "
        "transcript copy -> the recorder's daily card -> the dream's digest node -> what the "
        "next session recalls. Offline scripted model unless --real.",
    )
    _add_globals(p, top=False)
    p.add_argument("dir", nargs="?", help="demo workspace folder (default: --workspace or ./reme-demo)")
    p.add_argument("--query", default=None, help="the follow-up prompt to recall for (default: a sample question)")
    p.add_argument(
        "--real",
        action="store_true",
        help="use the real model (your Claude login or ANTHROPIC_API_KEY; spends a few cents) "
        "instead of the offline scripted model",
    )
    p.set_defaults(func=_cmd_demo)


# ---- entry point ---------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("REME_DEBUG", "").strip() not in ("", "0")
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0 if not argv else 1
        _check_workspace(args)
        code = args.func(args)
        sys.stdout.flush()
        return int(code or 0)
    except ReMeError as exc:
        if debug:
            raise
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader went away (`reme-cc list | head`): it has what it wanted, so end quietly, with
        # the status of a process ended by SIGPIPE as other Unix tools do; silence the flush at exit too
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, the traceback on request
        if debug:
            raise
        print(
            f"{PROG}: internal error: {type(exc).__name__}: {exc} (set REME_DEBUG=1 for the traceback)", file=sys.stderr
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
