"""Command-line entries of the memory pipelines: ``reme-cc auto-memory``, ``reme-cc dream`` and
``reme-cc resource``. A surface: it builds the Context with the agent runner (``agent.with_agents``)
that the pipelines in ``memory/`` are handed, so they never import the runner themselves."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import sys
import time
from dataclasses import asdict
from typing import Any

from .agent import with_agents
from ..base.errors import InvalidInputError, LockedError, NotFoundError, ReMeError
from ..memory import auto_memory, dream, failures, resource
from ..memory.context import Context
from ..base.workspace import Workspace

log = logging.getLogger("reme.auto_memory")


def open_context(args: Any) -> Context:
    """The Context of a pipeline command: the --workspace folder (or the default), able to run agents."""
    return with_agents(Context.open(getattr(args, "workspace", None)))


def register_cli(subparsers: Any) -> None:
    _register_auto_memory(subparsers)
    _register_dream(subparsers)
    _register_resource(subparsers)


# ---- auto-memory ----------------------------------------------------------------------------------
def _setup_logging(ws: Workspace) -> None:
    path = ws.logs / "auto-memory.log"
    root = logging.getLogger("reme")
    if not any(isinstance(h, logging.FileHandler) and h.baseFilename == str(path) for h in root.handlers):
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)


def _kept(agent: str, ws: Workspace, run: Any) -> int:
    """Run ``run() -> (exit code, error or None)`` and keep its outcome in the failure streaks
    (memory/failures.py): a detached run that fails is otherwise seen by nobody."""
    try:
        code, error = run()
    except (LockedError, InvalidInputError, NotFoundError):
        raise  # another run is at it, or a mistyped command: not a failure of the background work
    except Exception as exc:
        failures.record_failure(ws, agent, str(exc) or type(exc).__name__)
        raise
    if error:
        failures.record_failure(ws, agent, error)
    else:
        failures.record_success(ws, agent)
    return code


def _auto_memory(args: argparse.Namespace) -> int:
    ctx = open_context(args)
    try:
        _setup_logging(ctx.workspace)
        return _kept("recorder", ctx.workspace, lambda: _record(ctx, args))
    finally:
        ctx.close()


def _record(ctx: Context, args: argparse.Namespace) -> tuple[int, str | None]:
    kind = "claude_code"
    sid = args.session_id
    if args.messages_file:
        try:
            with open(args.messages_file, encoding="utf-8") as fh:
                messages = json.load(fh)
        except OSError as exc:
            raise NotFoundError(f"cannot read {args.messages_file}: {exc.strerror}") from None
        except ValueError as exc:
            raise InvalidInputError(f"{args.messages_file} is not valid JSON ({exc})") from None
        sid, _added = auto_memory.save_dialog(ctx.workspace, messages, sid)
        kind = "dialog"
    elif not sid:
        raise InvalidInputError("give --session-id ID (a Claude Code session) or --messages-file F")
    report = auto_memory.record_session(ctx, sid, kind=kind)
    log.info("auto-memory %s", report.text())
    sync_resource_cards(ctx)
    if getattr(args, "json", False):
        print(json.dumps(dataclasses.asdict(report), ensure_ascii=False, indent=2))
    else:
        print(report.text())
    failed = report.status in ("failed", "capped")
    return (1 if report.status == "failed" else 0), (report.error or report.status) if failed else None


def sync_resource_cards(ctx: Context) -> None:
    """After a recording, bring the resource cards up to date too, so a file dropped into resource/
    gets its card after the next session rather than the next dream (stat first: nothing to do costs
    one stat per resource). Skipped while a dream or `reme-cc resource` is at it; never fails the
    recording."""
    if ctx.workspace.is_locked("resource"):
        return
    try:
        res = asyncio.run(resource.sync_resources(ctx))
    except (ReMeError, OSError) as exc:
        log.warning("resource cards not updated: %s", exc)
        return
    if res.changed_paths or res.failed:
        log.info("%s", res.text())
    error = _agent_error(res)
    (
        failures.record_failure(ctx.workspace, "resource", error)
        if error
        else failures.record_success(ctx.workspace, "resource")
    )


def _agent_error(report: resource.ResourceReport) -> str | None:
    """What the resource agent itself failed with (not logged in, the API…), or None. A file that
    cannot be read or extracted is the file's problem, listed by the report and by status, not a
    failure of the background work."""
    errors = [f"{path}: {why}" for path, why in report.failed.items() if why.startswith("resource agent")]
    return "; ".join(errors) or None


def _register_auto_memory(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "auto-memory",
        help="Record a session's new conversation into its daily card (the recorder agent).",
        description="Record what is new in a Claude Code session (--session-id) or a generic conversation "
        "(--messages-file: JSON list of {role, content, created_at}) into daily/<date>/<name>.md.",
    )
    p.add_argument("--session-id", dest="session_id", default=None, help="the session to record")
    p.add_argument(
        "--messages-file",
        dest="messages_file",
        default=None,
        help="a JSON list of {role, content, created_at} to save under session/dialog/ and record",
    )
    p.set_defaults(func=_auto_memory)


# ---- dream ----------------------------------------------------------------------------------------
def _register_dream(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "dream",
        help="consolidate recent daily notes into digest nodes",
        description="Extract durable lessons from the daily notes changed since the last "
        "dream and integrate them into digest/ (one subagent per unit).",
    )
    p.add_argument("--date", help="dream date YYYY-MM-DD (default today)")
    p.add_argument("--hint", default="", help="what to focus on (passed to the agents)")
    p.add_argument("--scan-days", type=int, default=2, help="days of daily notes to scan, ending at --date (2)")
    p.add_argument("--max-units", type=int, default=5, help="at most this many units to integrate (5)")
    p.add_argument("--topic-count", type=int, default=3, help="interest topics per day (3)")
    p.add_argument("--topic-diversity-days", type=int, default=7, help="avoid topics of these previous days (7)")
    p.add_argument("--undo", action="store_true", help="revert the last dream's changes")
    p.set_defaults(func=_dream)


def _dream(args: Any) -> int:
    ctx = open_context(args)
    as_json = bool(getattr(args, "json", False))
    try:
        if args.undo:
            run = dream.undo(ctx)
            files = [c["path"] for c in run["changes"]]
            if as_json:
                print(
                    json.dumps({"undone": run["run"], "files": files, "commit": run.get("commit")}, ensure_ascii=False)
                )
            else:
                print(f"undid dream {run['run']}: restored {len(files)} file(s)")
                for f in files:
                    print(f"  {f}")
            return 0
        opts = dream.DreamOptions(
            date=args.date,
            hint=args.hint or "",
            scan_days=args.scan_days,
            max_units=args.max_units,
            topic_count=args.topic_count,
            topic_diversity_days=args.topic_diversity_days,
        )

        def run() -> tuple[int, str | None]:
            summary = asyncio.run(dream.run_dream(ctx, opts))
            print(json.dumps(asdict(summary), ensure_ascii=False, indent=2) if as_json else summary.text())
            units = "; ".join(f"{f['unit']}: {f['error']}" for f in summary.failures)
            error = summary.error or (f"{summary.failed} unit(s) failed: {units}" if summary.failed else None)
            return (1 if error else 0), error

        try:
            return _kept("dream", ctx.workspace, run)
        except LockedError as exc:
            print(f"reme-cc dream: {exc}", file=sys.stderr)
            return 75  # EX_TEMPFAIL: not an error of this run, try later
    finally:
        ctx.close()


# ---- resource -------------------------------------------------------------------------------------
def _register_resource(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "resource",
        help="turn files in resource/ into daily resource cards",
        description="Create, update or remove one daily card per file in resource/.",
    )
    p.add_argument("--date", help="the date root files count as (default today)")
    p.set_defaults(func=_resource)


def _resource(args: Any) -> int:
    ctx = open_context(args)
    try:
        t0 = time.monotonic()

        def run() -> tuple[int, str | None]:
            report = asyncio.run(resource.sync_resources(ctx, today=getattr(args, "date", None)))
            if getattr(args, "json", False):
                print(json.dumps({**report.__dict__, "seconds": round(time.monotonic() - t0, 2)}, ensure_ascii=False))
            else:
                print(report.text())
            return (1 if report.failed else 0), _agent_error(report)

        return _kept("resource", ctx.workspace, run)
    finally:
        ctx.close()
