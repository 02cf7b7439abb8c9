"""System tools: index status, full reindex, version."""

from __future__ import annotations

from typing import Any, Callable

from .. import __version__
from . import Context, Params, ToolResult, tool


class NoParams(Params):
    pass


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
            f"index size: {mb:.1f} MB  generation: {s.get('generation')}  last sync: {s.get('last_sync') or 'never'}",
            f"process RSS: {s.get('rss_mb')} MB",
        ]
        if s.get("embedding_error"):
            lines.append(f"embedding error: {s['embedding_error']}")
        usage = s.get("usage") or {}
        for agent, row in sorted((k, v) for k, v in usage.items() if isinstance(v, dict)):
            cap = ""
            if row.get("max_runs") is not None:
                cap = f" (caps: {row['max_runs']} runs, {row['max_tokens']} tokens{'; CAPPED' if row.get('capped') else ''})"
            lines.append(f"today {usage.get('date')}: {agent} {row['runs']} runs, {row['tokens']} tokens{cap}")
        return "\n".join(lines)


@tool(
    "status",
    "Show the state of the ReMe index: files, chunks, links (and dangling ones), embedding model and backlog, "
    "index size, last sync, process memory, and today's memory-agent usage against its daily caps.",
    read_only=True,
    idempotent=True,
)
def status(ctx: Context, params: NoParams) -> StatusResult:
    from ..memory.usage import usage_today

    return StatusResult(status={**ctx.index.status(), "usage": usage_today(ctx.workspace, ctx.config)})


class ReindexResult(ToolResult):
    files: int
    chunks: int
    seconds: float

    def text(self) -> str:
        return f"reindexed {self.files} files into {self.chunks} chunks in {self.seconds:.1f} s"


def run_reindex(ctx: Context, progress: Callable[[int, int], None] | None = None) -> ReindexResult:
    """Shared by the tool and the CLI (which passes a progress-bar callback)."""
    report = ctx.index.reindex(progress)
    return ReindexResult(files=len(report.added) + len(report.changed), chunks=report.chunks, seconds=round(report.seconds, 3))


@tool(
    "reindex",
    "Rebuild the ReMe index from the workspace files (wipes the derived index in metadata/; the embedding "
    "cache is kept, keyed by content). Use after bulk edits outside ReMe or if search looks wrong.",
    destructive=False,
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
