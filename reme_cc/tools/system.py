"""System tools: index status, full reindex, version."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from .. import __version__
from . import Context, Params, ToolResult, tool


class NoParams(Params):
    pass


EMPTY = (
    "the workspace is empty: nothing recorded yet (Claude Code sessions are recorded as they go on, "
    "with the plugin installed; `reme-cc demo` builds an example workspace)"
)


class StatusResult(ToolResult):
    status: dict[str, Any]

    def text(self) -> str:
        s = self.status
        mb = s.get("index_bytes", 0) / 1e6
        lines = [
            f"workspace: {s.get('workspace')}  ({s.get('mode')})",
            f"files: {s.get('files')} ({s.get('indexed_files')} indexed)  chunks: {s.get('chunks')}  "
            f"links: {s.get('links')} ({s.get('dangling_links')} dangling)",
            f"embedding: {s.get('embedding_backend')} model={s.get('model') or '-'}  embedded={s.get('embedded_chunks')}  "
            f"backlog={s.get('embedding_backlog')}",
        ]
        if not s.get("files"):
            lines.append(EMPTY)
        elif s.get("embedding_summary"):
            lines.append(f"vectors: {s['embedding_summary']}")
        fresh = s.get("freshness") or {}
        if fresh:
            how = (
                "file notifications"
                if fresh.get("mode") == "notify"
                else "stat walk before queries (at most once a second)"
            )
            lines.append(f"freshness: {how}" + (f" ({fresh['reason']})" if fresh.get("reason") else ""))
            if fresh.get("indexing_in_background"):
                lines.append(
                    f"indexing {fresh['indexing_in_background']} changed files in the background "
                    "(search answers from the index as it was meanwhile)"
                )
        lines.append(_in_memory(s.get("keyword_index") or {}, s.get("link_graph") or {}))
        lines += [
            f"index size: {mb:.1f} MB  generation: {s.get('generation')}  last sync: {s.get('last_sync') or 'never'}",
            f"process RSS: {s.get('rss_mb')} MB",
        ]
        if s.get("embedding_error"):
            lines.append(f"embedding error: {s['embedding_error']}")
        project = s.get("project") or {}
        if project:
            lines.append(
                f"project: {project.get('name')} ({project.get('root')})  team memory: "
                f"{project.get('team') or project.get('team_problem') or 'none'}{_trusted(project)}"
            )
            if project.get("trust_problem"):
                lines.append(f"trust list: {project['trust_problem']}")
            elif project.get("trusted_repositories"):
                lines.append(
                    f"trusted repositories (their team memory is in the session brief): "
                    f"{', '.join(project['trusted_repositories'])}"
                )
        conflicts = [*s.get("conflicts", []), *(f".reme/{p}" for p in project.get("team_conflicts", []))]
        if conflicts:
            lines.append(f"merge conflicts (not searchable until resolved): {', '.join(conflicts)}")
        refused = [
            *(s.get("refused_names") or {}).items(),
            *((f".reme/{p}", why) for p, why in (project.get("team_refused_names") or {}).items()),
        ]
        if refused:
            lines.append(
                "not indexed, names with control characters or not valid UTF-8 (rename them): "
                + ", ".join(f"{p} ({why})" for p, why in refused)
            )
        if s.get("hard_linked"):
            lines.append(
                "not searchable, other hard links (the file may be anywhere on the disk; put a copy there "
                f"instead of a link): {', '.join(s['hard_linked'])}"
            )
        from ..memory.untrusted import one_line

        for c in s.get("contradictions") or []:  # the dream's, not resolved from evidence (issue 26)
            lines.append(
                f"contradiction ({c.get('date')}): {one_line(str(c.get('subject')), 120)} = "
                + " | ".join(one_line(str(v), 80) for v in c.get("values") or [])
                + f" — in {one_line(str(c.get('node') or 'no node yet'))}, sources "
                + ", ".join(one_line(str(p)) for p in c.get("sources") or [])
                + " (edit the node to say which holds; the next dream drops it)"
            )
        usage = s.get("usage") or {}
        for agent, row in sorted((k, v) for k, v in usage.items() if isinstance(v, dict)):
            cap = ""
            if row.get("max_runs") is not None:
                cap = f" (caps: {row['max_runs']} runs, {row['max_tokens']} tokens{'; CAPPED' if row.get('capped') else ''})"
            lines.append(f"today {usage.get('date')}: {agent} {row['runs']} runs, {row['tokens']} tokens{cap}")
        recall = s.get("recall") or {}
        if recall.get("prompts"):  # per-prompt recall (UserPromptSubmit), from metadata/logs/recall.log
            lines.append(
                f"recall today: {recall['injections']} of {recall['prompts']} prompts given notes "
                f"({recall['notes_injected']} notes, {recall['average_chars']} characters on average), "
                f'{recall["abstentions"]} abstained; p95 {recall["p95_ms"]:.0f} ms (reme-cc recall "<prompt>" shows why)'
            )
        forgot = s.get("forgotten") or {}
        if forgot:
            lines.append(
                f"forget: {forgot.get('runs')} run(s), the last {forgot.get('last')} ({forgot.get('places')} places"
                + (", git history rewritten)" if forgot.get("history_rewritten") else ")")
            )
        lines += [f"FAILING: {f['line']}" for f in s.get("failures") or []]
        return "\n".join(lines)


def open_contradictions(ws: Any) -> list[dict[str, Any]]:
    """The dream's unresolved contradictions (memory/contradictions.py) whose node is unchanged since."""
    from ..memory import contradictions

    return contradictions.open_ones(ws, contradictions.load(ws))


def _trusted(project: dict[str, Any]) -> str:
    """Whether the repository's team memory reaches the session brief (memory/trust.py)."""
    if not project.get("team"):
        return ""
    trusted = project.get("team_trusted")
    if trusted:
        return " (trusted: in the session brief, as written by others)"
    if trusted is False:
        return " (declined: not in the session brief; search labels its notes as written by others)"
    from ..memory.trust import trust_command

    return (
        f" (not trusted: not in the session brief; search labels its notes as written by others; "
        f"`{trust_command(project.get('root') or '.')}` trusts it)"
    )


def _in_memory(keyword: dict[str, Any], links: dict[str, Any]) -> str:
    """Where keyword search and link expansion answer from (memory, else SQLite) and why."""
    if keyword.get("ready"):
        kw = f"keyword index in memory ({keyword.get('chunks')} chunks)"
    else:
        kw = f"keyword search on FTS5 ({keyword.get('disabled') or 'in-memory index not loaded'})"
    built = links.get("last_build") or {}
    n = f"{built.get('links')} link{'' if built.get('links') == 1 else 's'}"
    if links.get("ready"):
        graph = f"link graph in memory ({n})"
    elif built.get("kept") is False:
        graph = f"links from the database ({n}: too many to keep)"
    else:
        graph = "links from the database (graph not built)"
    return f"search: {kw}; {graph}"


@tool(
    "status",
    "Show the state of the ReMe index: files, chunks, links (and dangling ones), embedding model, vector "
    "coverage and the time left to embed the backlog, how files are kept fresh (notifications or walk), "
    "whether keyword search and link expansion answer from memory or the database, "
    "index size, last sync, process memory, today's memory-agent usage against its daily caps, the current "
    "project and the repository's team memory (with its own merge conflicts, and whether it is trusted for the "
    "session brief), files left out for their names, and the background work (recorder, dream) failing since "
    "it last worked, with the fix.",
    read_only=True,
    idempotent=True,
)
def status(ctx: Context, params: NoParams) -> StatusResult:
    from ..memory.prompt_recall import today_summary
    from ..memory.usage import usage_today

    from .recall_scope import project_status

    from ..index.sync import refused
    from ..memory.untrusted import one_line

    from ..memory.failures import current
    from ..memory.forget import last_runs

    return StatusResult(
        status={
            **ctx.index.status(),
            "usage": usage_today(ctx.workspace, ctx.config),
            "recall": today_summary(ctx.workspace),
            "contradictions": open_contradictions(ctx.workspace),
            "failures": [dict(vars(f), cause=f.cause, fix=f.fix, line=f.line()) for f in current(ctx.workspace)],
            # after the index's status, which walked: names it refused, shown escaped
            "refused_names": {one_line(p): why for p, why in refused(ctx.workspace.root).items()},
            "project": project_status(ctx),
            "forgotten": last_runs(ctx.workspace),  # that forgets ran, never what
        }
    )


class ReindexResult(ToolResult):
    files: int
    chunks: int
    seconds: float
    projects_filled: list[str] = []  # older cards given their project (memory/project_backfill.py)

    def text(self) -> str:
        out = f"reindexed {self.files} files into {self.chunks} chunks in {self.seconds:.1f} s"
        return out + (f"; {len(self.projects_filled)} older cards given their project" if self.projects_filled else "")


def run_reindex(ctx: Context, progress: Callable[[int, int], None] | None = None) -> ReindexResult:
    """Shared by the tool and the CLI (which passes a progress-bar callback). Cards recorded before
    projects existed get theirs first, so the rebuilt index knows every card's project."""
    from ..memory.project_backfill import backfill_projects

    filled = backfill_projects(ctx).filled
    report = ctx.index.reindex(progress)
    return ReindexResult(
        files=len(report.added) + len(report.changed),
        chunks=report.chunks,
        seconds=round(report.seconds, 3),
        projects_filled=filled,
    )


@tool(
    "reindex",
    "Rebuild the ReMe index from the workspace files (wipes the derived index in metadata/; the embedding "
    "cache is kept, keyed by content). Daily cards recorded before projects existed first get their "
    "project from their conversation copy. Use after bulk edits outside ReMe or if search looks wrong.",
    idempotent=True,
)
def reindex(ctx: Context, params: NoParams) -> ReindexResult:
    return run_reindex(ctx)


class VersionResult(ToolResult):
    version: str

    def text(self) -> str:
        return f"reme-cc {self.version}"


@tool("version", "Show the reme-cc version.", read_only=True, idempotent=True)
def version(ctx: Context, params: NoParams) -> VersionResult:
    return VersionResult(version=__version__)
