"""The CLI's commands that are not tools: `share`, `trust`, `embed` and `env` (the tools' commands are
built from the registry in cli.py; the pipelines' in pipelines.py). One handler module, so the layers
below hold what these commands do, never how the command line asks for it. The index and the Context
(numpy, jieba, pydantic) are imported by the handlers that use them: every command loads this module.
`--workspace` and `--json` come from cli._add_globals, as for every command."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..base import bootstrap
from ..base.config import Config
from ..base.errors import InvalidInputError
from ..base.workspace import Workspace, default_root
from ..memory.team import NOT_WRITTEN, TEAM_DIR, locate, plan_share, share
from ..memory.trust import FILE_NAME, decide, load, repository_of, trust_file


def register_cli(subparsers: Any) -> None:
    _register_share(subparsers)
    _register_trust(subparsers)
    _register_embed(subparsers)
    _register_env(subparsers)
    _register_forget(subparsers)
    _register_pin(subparsers)


# ---- share
def _cmd_share(args: Any) -> int:
    from ..memory.context import Context

    ctx = Context.open(getattr(args, "workspace", None))
    try:
        plan = plan_share(ctx, args.node, os.getcwd())
        if getattr(args, "json", False):  # no question asked: --yes writes, anything else only shows
            done = share(ctx, plan.source, os.getcwd(), move=args.move) if args.yes and not args.dry_run else None
            print(
                json.dumps(
                    {"written": done is not None, **dataclasses.asdict(done or plan), "dest": str((done or plan).dest)},
                    ensure_ascii=False,
                    indent=2,
                )
            )
            return 0 if done or args.dry_run else NOT_WRITTEN
        print(plan.preview())
        if args.dry_run:
            print("dry run: nothing written")
            return 0
        if not args.yes:
            if not sys.stdin or not sys.stdin.isatty():
                print(
                    f"nothing written: check the text above, then run `reme-cc share {plan.source} --yes` to write it",
                    file=sys.stderr,
                )
                return NOT_WRITTEN
            answer = input(f"Write it to {plan.dest}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing written")
                return NOT_WRITTEN
        print(share(ctx, plan.source, os.getcwd(), move=args.move).text())
    finally:
        ctx.close()
    return 0


def _register_share(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "share",
        help="Copy a digest node into this repository's team memory (.reme/).",
        description="Copy (--move: move) a digest node into the team memory of the git repository you are in "
        "(<repo>/.reme/, created on first use). What would be written is shown first: <private> "
        "spans, links to personal notes, personal frontmatter keys, e-mail addresses, home paths and "
        "secrets are left out. In a terminal it asks before writing; elsewhere it writes only with "
        f"--yes (exit code {NOT_WRITTEN}: shown, nothing written). Commit the file to share it.",
    )
    p.add_argument("node", help="the digest node, e.g. digest/procedure/run-the-tests.md")
    p.add_argument("--move", action="store_true", help="remove it from the personal workspace afterwards")
    p.add_argument("--yes", "-y", action="store_true", help="write without asking")
    p.add_argument("--dry-run", action="store_true", help="only show what would be written")
    p.set_defaults(func=_cmd_share)


# ---- trust
def _cmd_trust(args: Any) -> int:
    root = Path(getattr(args, "workspace", None) or default_root()).expanduser().absolute()
    as_json = bool(getattr(args, "json", False))
    if args.list:
        repos = load(root)
        if as_json:
            print(json.dumps(repos, ensure_ascii=False, indent=2))
            return 0
        if not repos:
            print(f"no repository decided yet ({trust_file(root)})")
        for key, entry in sorted(repos.items()):
            print(
                f"{'trusted ' if entry['trusted'] else 'declined'}  {json.dumps(key, ensure_ascii=False)[1:-1]}  "
                f"(since {entry.get('decided', '?')})"
            )
        return 0
    if not root.is_dir():
        raise InvalidInputError(f"the memory workspace {root} does not exist; run `reme-cc init` first")
    repo = repository_of(args.dir or os.getcwd())
    key = decide(root, repo, not args.revoke)
    found = locate(repo, root)
    shown = json.dumps(key, ensure_ascii=False)[1:-1]  # a path with control characters stays one line
    if as_json:
        print(
            json.dumps(
                {
                    "repository": key,
                    "trusted": not args.revoke,
                    "problem": found.problem if found is not None else None,
                },
                ensure_ascii=False,
            )
        )
        return 0
    if args.revoke:
        print(
            f"declined the team memory of {shown}: the SessionStart brief leaves it out and no longer asks; "
            "search still finds its notes, labelled as written by others"
        )
    else:
        print(
            f"trusted the team memory of {shown} ({TEAM_DIR}/): new sessions' brief lists its notes, "
            "in a section of their own, as written by others"
        )
    if found is not None and found.problem:
        print(f"note: {found.problem}")
    elif found is not None and found.root is None and not found.personal:
        print(f"note: {shown} has no {TEAM_DIR}/ folder yet")
    return 0


def _register_trust(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "trust",
        help="Trust (or, with --revoke, decline) a repository's team memory for the session brief.",
        description="A repository's team memory (.reme/) is written by others. The SessionStart brief lists its "
        "notes only for a repository you trust; search finds them anyway, labelled. The list is "
        f"{FILE_NAME} in your memory workspace (no tool can change it).",
    )
    p.add_argument("dir", nargs="?", default=None, help="a folder inside the repository (default: the current one)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--revoke", action="store_true", help="decline it: left out of the brief, never asked again")
    group.add_argument("--list", action="store_true", help="show the repositories decided so far")
    p.set_defaults(func=_cmd_trust)


# ---- embed
def _register_embed(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "embed",
        help="Embed every chunk that has no vector yet, in the foreground, with a progress bar.",
        description="Embed the backlog now (the background worker does the same at low priority). "
        "Waits for a running worker and follows its progress.",
    )
    p.add_argument("--worker", action="store_true", help="internal: the detached low-priority worker")
    p.set_defaults(func=_cmd_embed)


def _cmd_embed(args: Any) -> int:
    from ..index import Index
    from ..index.catchup import METADATA_ENV, coverage, describe, record_worker_failure, run

    # the worker opens its workspace as it is: a repository's team memory holds only what it shares,
    # and its derived state lives where the parent says (REME_WORKER_METADATA); its settings are the
    # parent's (passed in the environment), never a config.json the repository committed
    metadata = os.environ.get(METADATA_ENV, "") if args.worker else ""
    ws = Workspace(getattr(args, "workspace", None), create=not args.worker, metadata=metadata or None)
    index = Index(ws, Config.load(None if metadata else ws.root))
    try:
        if not index.model_id:
            if getattr(args, "json", False):
                print(json.dumps({"embedding": "none", "embedded_now": 0}))
            print("embedding is off (embedding=none): keyword search only", file=sys.stderr)
            return 0
        if args.worker:
            try:
                run(index, worker=True)
            except Exception as exc:  # noqa: BLE001 - recorded for `status` and the back-off, then logged
                record_worker_failure(index.metadata, exc)
                raise
            return 0
        index.sync()
        bar = _Bar() if sys.stderr.isatty() or os.environ.get("REME_PROGRESS") else None
        n = run(index, worker=False, progress=bar)
        if bar:
            bar.finish()
        cov = coverage(index)
        print(
            json.dumps({**cov, "embedded_now": n})
            if getattr(args, "json", False)
            else describe(cov) + f" ({n} embedded now)"
        )
        return 0
    finally:
        index.close()


class _Bar:
    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.first: int | None = None

    def __call__(self, done: int, total: int) -> None:
        self.first = done if self.first is None else self.first
        width = 30
        frac = done / total if total else 1.0
        rate = (done - self.first) / max(time.monotonic() - self.t0, 1e-3)
        from ..index.catchup import duration

        left = f", ~{duration((total - done) / rate)} left" if rate > 0 and done < total else ""
        sys.stderr.write(f"\rembedding [{'#' * int(frac * width):<{width}}] {done:,}/{total:,}{left}   ")
        sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\n")


# ---- env
def _register_env(subparsers: Any) -> None:
    p = subparsers.add_parser("env", help="the plugin's own Python environment: status or rebuild")
    p.add_argument("--rebuild", action="store_true", help="build it again now")
    p.set_defaults(func=lambda args: bootstrap.main(["--rebuild"] if args.rebuild else ["--status"]))


# ---- forget
def _cmd_forget(args: Any) -> int:
    from ..memory.context import Context
    from ..memory.forget import NOT_WRITTEN, forget, plan_forget

    ctx = Context.open(getattr(args, "workspace", None))
    try:
        plan = plan_forget(ctx, args.what)
        found = bool(plan.places or plan.commits)
        write = found and args.yes and not args.dry_run
        if not write and found and not args.dry_run and not getattr(args, "json", False):
            print(plan.preview())
            if not sys.stdin or not sys.stdin.isatty():
                print(
                    "nothing written: check the places above, then run the same command with --yes to forget it",
                    file=sys.stderr,
                )
                return NOT_WRITTEN
            write = input("Forget it in every place above? [y/N] ").strip().lower() in ("y", "yes")
        result = forget(ctx, plan, history=args.purge_history, force_remote=args.force_remote) if write else None
        if getattr(args, "json", False):
            out = dataclasses.asdict(result) if result else {"plan": dataclasses.asdict(plan)}
            print(json.dumps({"written": result is not None, **out}, ensure_ascii=False, indent=2))
        elif result is None:
            print(plan.preview() + ("\ndry run: nothing written" if found else ""))
        else:
            print(result.text())
        if result is None:
            return NOT_WRITTEN if found and not args.dry_run else 0
        return 1 if result.left or plan.blockers else 0
    finally:
        ctx.close()


def _register_forget(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "forget",
        help="Remove a text, a digest node (by name) or a note from every place memory keeps it.",
        description="Shows every place that holds it -- notes, digest nodes, session copies, the dream's "
        "saved copies, logs, the index -- and with --yes removes it: notes are rewritten ([FORGOTTEN]), a "
        "digest node named by it or holding nothing else is deleted with the links to it, the session "
        "copies get [FORGOTTEN], derived state is rewritten or rebuilt, the index scrubbed (free pages "
        "included). Then every file is searched again. In a git workspace the change is committed and "
        "older commits that still hold it are listed; --purge-history rewrites them. In a terminal it "
        "asks first; elsewhere it writes only with --yes (exit code 3: shown, nothing written; 1: "
        "something could not be removed).",
    )
    p.add_argument("what", help='the text, a digest node\'s name, or a note path (e.g. "daily/2026-06-01/x.md")')
    p.add_argument("--yes", "-y", action="store_true", help="forget without asking")
    p.add_argument("--dry-run", action="store_true", help="only show the places")
    p.add_argument(
        "--purge-history", action="store_true", help="also rewrite the git history of the workspace (commit ids change)"
    )
    p.add_argument(
        "--force-remote",
        action="store_true",
        help="with --purge-history: rewrite even when the repository has a remote",
    )
    p.set_defaults(func=_cmd_forget)


# ---- pin / unpin
def _cmd_pin(args: Any) -> int:
    from ..memory.context import Context
    from ..notes.pinned import set_pinned

    ctx = Context.open(getattr(args, "workspace", None))
    try:
        written = set_pinned(ctx.notes, args.path, args.command == "pin")
        state = "pinned" if args.command == "pin" else "not pinned"
        if getattr(args, "json", False):
            print(json.dumps({"path": written.path, "pinned": args.command == "pin", "changed": written.changed}))
        else:
            print(f"{written.path}: {state}" + ("" if written.changed else " (already)"))
    finally:
        ctx.close()
    return 0


def _register_pin(subparsers: Any) -> None:
    for name, what in (
        ("pin", "Pin a note (pinned: true): always a brief candidate; a dream keeps its text."),
        ("unpin", "Unpin a note (removes pinned: true)."),
    ):
        p = subparsers.add_parser(name, help=what, description=what)
        p.add_argument("path", help="the note, e.g. digest/wiki/deploy.md")
        p.set_defaults(func=_cmd_pin)
