"""Graph tool: walk the wikilink graph from one or more notes."""

from __future__ import annotations

from dataclasses import asdict
from typing import Literal

from pydantic import BaseModel, Field

from . import Context, Params, ToolResult, tool
from .recall_scope import TEAM_PREFIX
from .search import TEAM_LABEL


class TraverseParams(Params):
    seeds: list[str] = Field(description='Workspace paths to start from, e.g. ["digest/wiki/x.md"].', min_length=1)
    depth: int = Field(1, description="How many link hops to follow (1-5).")
    direction: Literal["in", "out", "both"] = Field("both", description="Follow outlinks, inlinks or both.")


class NodeOut(BaseModel):
    path: str
    name: str | None = None
    description: str | None = None
    exists: bool
    depth: int


class EdgeOut(BaseModel):
    source: str
    target: str
    predicate: str | None = None
    anchor: str | None = None
    alias: str | None = None
    line: int
    resolved: bool


class TraverseResult(ToolResult):
    nodes: list[NodeOut]
    edges: list[EdgeOut]

    def text(self) -> str:
        from ..memory.untrusted import one_line  # names and paths from notes: one line each, visibly

        lines = [f"nodes ({len(self.nodes)}):"]
        for n in self.nodes:
            state = "" if n.exists else "  (not found)"
            team = f"  {TEAM_LABEL}" if n.path.startswith(TEAM_PREFIX) else ""
            lines.append(
                f'  [{n.depth}] {one_line(n.path)}  name="{one_line(n.name)}"  '
                f'description="{one_line(n.description)}"{state}{team}'
            )
        lines.append(f"edges ({len(self.edges)}):")
        for e in self.edges:
            via = f"predicate={one_line(e.predicate)}" if e.predicate else "plain"
            anchor = f"#{one_line(e.anchor)}" if e.anchor else ""
            lines.append(f"  {one_line(e.source)}:{e.line} → {one_line(e.target)}{anchor}  via {via}")
        return "\n".join(lines)


@tool(
    "traverse",
    "Walk the [[wikilink]] graph of the ReMe workspace from one or more notes: returns the linked notes "
    "(path, name, description, hop depth) and the links between them (predicate, anchor). direction: out "
    "(what these notes cite), in (what cites them) or both. Seeds under .reme/ walk the repository's "
    "team memory.",
    read_only=True,
    idempotent=True,
    positional=("seeds",),
)
def traverse(ctx: Context, params: TraverseParams) -> TraverseResult:
    from .recall_scope import team_graph

    personal = [s for s in params.seeds if not s.startswith(TEAM_PREFIX)]
    nodes: list[NodeOut] = []
    edges: list[EdgeOut] = []
    if personal:
        graph = ctx.index.traverse(personal, params.depth, params.direction)
        nodes += [NodeOut(**asdict(n)) for n in graph.nodes]
        edges += [EdgeOut(**asdict(e)) for e in graph.edges]
    if len(personal) < len(params.seeds):  # seeds in the repository's team memory: its own graph
        team_nodes, team_edges = team_graph(
            ctx, [s for s in params.seeds if s.startswith(TEAM_PREFIX)], params.depth, params.direction
        )
        nodes += [NodeOut(**n) for n in team_nodes]
        edges += [EdgeOut(**e) for e in team_edges]
    return TraverseResult(nodes=nodes, edges=edges)
