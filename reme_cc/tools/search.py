"""Search tools: hybrid chunk search with one-hop link expansion, and node-level digest search.

Their text output is what Claude reads, and a note's text may be anyone's (a repository's team
memory): a hit's header says where it comes from — a team hit's ``.reme/`` path and "team memory
(written by others)" — and nothing from a note can pose as a header. Names, paths and descriptions
go through ``untrusted.one_line``; a hit's text through ``untrusted.text_block``, with every line
that starts like a header escaped."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import asdict, fields
from typing import Any, get_type_hints

from pydantic import BaseModel, Field, create_model, field_validator

from ..index.records import Hit, Neighbor, NodeHit

from . import Context, Params, ToolResult, tool

TEAM_LABEL = "team memory (written by others)"
HEADER_MARK = "=========="
_HEADER_LIKE = re.compile(r"^(?=[ \t]*=)", re.MULTILINE)  # a line of a hit's text that could pass for a header

PROJECT_HELP = (
    "Empty (default): the current project's notes first, then general notes, other projects' after "
    'both. "all": no project preference. A project name: only that project\'s notes.'
)


def _model_of(shape: type, name: str, **changes: Any) -> type[BaseModel]:
    """The JSON model of one of the index's records: its fields, in order, with ``changes`` ({field:
    (type, default)}) replacing or adding some. The record stays the one declaration of the shape."""
    hints = get_type_hints(shape)
    return create_model(name, **{**{f.name: (hints[f.name], ...) for f in fields(shape)}, **changes})


# what the tools add to an index record: its projects as names ([] = a general note) and its workspace
# ("personal", or "team": the repository's shared .reme/, its path relative to that)
_SCOPE = {"project": (list[str], []), "workspace": (str, "personal")}
# and whether the note still holds (notes/history.note_status): "current", "superseded" or "stale", and why
_STATUS = {"status": (str, "current"), "status_note": (str, "")}
HitOut = _model_of(Hit, "HitOut", **_SCOPE, **_STATUS)
NodeOut = _model_of(NodeHit, "NodeOut", **_SCOPE)


def _scoped_out(model: type[BaseModel], s: Any, **extra: Any) -> Any:
    """A tools.recall_scope.Scoped record as ``model`` (HitOut, NodeOut)."""
    return model.model_validate({**asdict(s.hit), "project": s.names, "workspace": s.workspace, **extra})


class SearchParams(Params):
    query: str = Field(description="What to look for: words, a name, a question (Chinese or English).")
    limit: int = Field(5, description="How many notes to return (1-100), or chunks with chunks=true.")
    min_score: float = Field(
        0.0, description="Drop results whose fused score is below this (fused RRF scores are ~0.005-0.035)."
    )
    start_date: str | None = Field(None, description="Only files dated on/after this day (YYYY-MM-DD, inclusive).")
    end_date: str | None = Field(None, description="Only files dated on/before this day (YYYY-MM-DD, inclusive).")
    folder: str | None = Field(None, description="Only files under this folder, e.g. digest or daily/2026-06-20.")
    tags: list[str] = Field(
        default_factory=list,
        description="Only notes carrying every one of these tags: frontmatter `tags` or an inline #tag in the "
        'body; case-insensitive, the # optional; a nested tag a/b is found by a too. E.g. ["project/reme"].',
    )
    project: str | None = Field(None, description=PROJECT_HELP)
    chunks: bool = Field(
        False,
        description="Return the best chunks even when several are of one note (default: one hit per note, "
        "its best chunk, the note's other matching lines listed under it).",
    )
    as_of: str | None = Field(
        None,
        description="What memory said on this day (YYYY-MM-DD): notes that held then, a corrected node's "
        "statement of that time (from its History); later daily notes and superseded-before facts left out.",
    )

    @field_validator("tags", mode="before")
    @classmethod
    def _one_tag(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value  # "tags": "x" is ["x"] (a space in it is refused later)


class SearchResult(ToolResult):
    results: list[HitOut]  # type: ignore[valid-type]
    counts: dict[str, int]
    warnings: list[str] = []

    def text(self) -> str:
        from ..memory.untrusted import one_line

        if not self.results:
            return "\n".join(["no results"] + [f"note: {one_line(w)}" for w in self.warnings])
        blocks = [_hit_block(h) for h in self.results]
        tail = [f"note: {one_line(w)}" for w in self.warnings]
        return "\n\n".join(blocks + (["\n".join(tail)] if tail else []))


def shown_path(path: str, workspace: str) -> str:
    """A path as the text output shows it: a team note's under ``.reme/``, where the file tools read it."""
    from ..memory.untrusted import one_line
    from .recall_scope import TEAM_PREFIX

    return one_line((TEAM_PREFIX if workspace != "personal" else "") + path)


def _hit_block(h: Any) -> str:  # a HitOut
    from ..memory.project import label
    from ..memory.untrusted import one_line, text_block

    team = h.workspace != "personal"
    lines = [
        f"{HEADER_MARK} {shown_path(h.path, h.workspace)}:{h.start_line}-{h.end_line} "
        f"[score={h.score:.4f} vector={h.vector:.4f} keyword={h.keyword:.4f}]"
        + (f" {TEAM_LABEL}" if team else "")
        + f" {HEADER_MARK}",
        f"project: {one_line(label(h.project))}",
        *([f"also matches lines: {', '.join(f'{a}-{b}' for a, b in h.also)}"] if h.also else []),
        *([f"status: {one_line(h.status_note, 300)}"] if h.status != "current" else []),
        _HEADER_LIKE.sub("\\\\", text_block(h.text.rstrip("\n"))),
    ]
    for arrow, kind, links, total in (
        ("→", "outlinks", h.outlinks, h.outlinks_total),
        ("←", "inlinks", h.inlinks, h.inlinks_total),
    ):
        if not links:
            continue
        if not (arrow == "←" and h.outlinks):
            lines.append("")
        lines.append(f"  {kind} ({len(links)}):")
        lines += [f"    {arrow} {_neighbor(n, h.workspace)}" for n in links]
        if total > len(links):
            lines.append(f"    … {total - len(links)} more")
    return "\n".join(lines)


def _neighbor(n: Neighbor, workspace: str) -> str:
    from ..memory.untrusted import one_line

    via = f"via predicate={one_line(n.predicate)}" if n.predicate else "via plain"
    path = shown_path(n.path, workspace)  # a team note's links are the team memory's
    if not n.exists:
        return f"{path}  (not found)  {via}"
    quoted = lambda s: one_line(s).replace('"', "'")  # noqa: E731
    return f'{path}  name="{quoted(n.name)}"  description="{quoted(n.description)}"  {via}'


@tool(
    "search",
    "Search the ReMe long-term memory (daily notes, digest nodes, resources) by meaning and by keyword "
    "(hybrid vector + BM25). Returns the best notes (each its best chunk with path:lines and scores, "
    "other matching lines listed), plus each "
    "hit's linked notes (outlinks →, inlinks ←) by name and description only; read a path to see more. "
    "Filter by start_date/end_date (YYYY-MM-DD), folder, tags (all must be present) and project, before ranking. "
    "A hit whose note no longer holds says so "
    "(status: superseded, with what replaced it, or stale: it cites a file its project no longer has), "
    "after the current ones; as_of (YYYY-MM-DD) answers what memory said on that day.",
    read_only=True,
    idempotent=True,
    positional=("query",),
)
def search(ctx: Context, params: SearchParams) -> SearchResult:
    from .recall_scope import scoped

    warnings: list[str] = []
    counts: dict[str, int] = {}
    as_of = _as_of(params.as_of)
    labels: dict[int, tuple[str, str]] = {}  # id(hit) -> (status, why)

    def ask(c: Context, tier_of: Any) -> list[Any]:
        resp = c.index.search(
            params.query,
            min(100, params.limit * 4) if as_of else params.limit,  # room for what did not hold then
            params.min_score,
            params.start_date,
            params.end_date,
            params.folder,
            tier_of=tier_of,
            chunks=params.chunks,
            tags=params.tags,
        )
        warnings.extend(w for w in resp.warnings if w not in warnings)
        for k, v in resp.counts.items():
            counts[k] = counts.get(k, 0) + v
        return labelled(c, resp.results, as_of, labels)

    hits, _here, notes = scoped(ctx, params.project, params.limit, ask)
    results = [_scoped_out(HitOut, s, **_label_fields(labels.get(id(s.hit)))) for s in hits]
    results.sort(key=lambda h: h.status == "superseded")  # the current statement first (stable)
    counts["returned"] = len(results)
    if not results and ctx.index.chunk_total() == 0:
        from .system import EMPTY

        notes = [EMPTY, *notes]  # "no results" alone would read as "nothing matched"
    elif not results and params.tags:
        notes.append(_no_tagged(ctx, params.tags))
    return SearchResult(results=results, counts=counts, warnings=warnings + notes)


def _no_tagged(ctx: Context, tags: list[str]) -> str:
    """What to try when no note matched under a tag filter: the workspace's most used tags."""
    from ..index.labels import known_tags
    from ..notes.tags import filter_tags

    common = ctx.index.read(lambda conn: known_tags(conn, 10))
    listed = ", ".join(f"{t} ({n})" for t, n in common) or "none yet"
    return f"nothing found with all of the tags {', '.join(filter_tags(tags))}; most used tags here: {listed}"


def _as_of(day: str | None) -> str | None:
    from ..base.errors import InvalidInputError

    if not day:
        return None
    try:
        return _dt.date.fromisoformat(day.strip()).isoformat()
    except ValueError:
        raise InvalidInputError(f"search: as_of {day!r} is not a date; write it YYYY-MM-DD, e.g. 2026-06-20") from None


def _label_fields(label: tuple[str, str] | None) -> dict[str, str]:
    return {"status": label[0], "status_note": label[1]} if label else {}


def labelled(c: Context, hits: list[Hit], as_of: str | None, labels: dict[int, tuple[str, str]]) -> list[Hit]:
    """Each Markdown hit's status (current, superseded, stale: notes/history.note_status; a hit inside
    a node's History is an earlier statement); with ``as_of``, only what held that day, a corrected
    node's hit showing the statement of that time."""
    from ..base.errors import ReMeError
    from ..notes import history

    out = []
    seen: set[str] = set()  # as of a day, one hit per node: its statement of that day
    for h in hits:
        if not h.path.endswith(".md"):
            out.append(h)
            continue
        try:
            text = c.workspace.read_bytes(h.path).decode("utf-8", errors="replace")
        except ReMeError:
            out.append(h)
            continue
        span = history.history_lines(text)
        if as_of:
            h = _as_it_was(h, text, as_of, span)
            if h is None or h.path in seen:
                continue
            if h.path.startswith("digest/"):
                seen.add(h.path)
        status = history.note_status(text)
        if as_of and h.path.startswith("digest/"):
            said = history.statement_as_of(text, as_of)
            now = history.statement(text)
            until = min((p.until for p in history.history(text) if p.until > as_of), default="")
            then = ("superseded", f"superseded since {until}: what this note said on {as_of}")
            labels[id(h)] = ("current", "") if said == now else then
        elif span and span[0] <= h.start_line and h.end_line <= span[1]:
            why = "an earlier statement, kept in the note's History; the current one is above it"
            labels[id(h)] = ("superseded", why)
        elif status.state != "current":
            labels[id(h)] = (status.state, status.label())
        out.append(h)
    return out


def _as_it_was(h: Hit, text: str, day: str, span: tuple[int, int] | None) -> Hit | None:
    """The hit as memory held it on ``day``: None for a daily note written later or a digest node that
    did not hold then; a digest node's text replaced by its statement of that day."""
    from dataclasses import replace

    from ..notes import history

    m = re.match(r"daily/(\d{4}-\d{2}-\d{2})/", h.path)
    if m:
        return h if m.group(1) <= day else None
    if not h.path.startswith("digest/"):
        return h
    said = history.statement_as_of(text, day)
    if said is None:
        return None
    in_history = span is not None and span[0] <= h.start_line
    return h if said == history.statement(text) and not in_history else replace(h, text=f"(as of {day}) {said}")


class NodeSearchParams(Params):
    query: str = Field(description="A topic, name or phrase to match against digest nodes' name/description/path.")
    limit: int = Field(20, description="How many nodes to return (1-200).")
    project: str | None = Field(None, description=PROJECT_HELP)


class NodeSearchResult(ToolResult):
    nodes: list[NodeOut]  # type: ignore[valid-type]

    def text(self) -> str:
        if not self.nodes:
            return "no matching digest nodes"
        from ..memory.project import label
        from ..memory.untrusted import one_line

        return "\n".join(
            f'{shown_path(n.path, n.workspace)}  name="{one_line(n.name)}"  description="{one_line(n.description)}"'
            f"  score={n.score:.4f}  project={one_line(label(n.project))}"
            + (f"  workspace={n.workspace}: {TEAM_LABEL}" if n.workspace != "personal" else "")
            for n in self.nodes
        )


@tool(
    "node_search",
    "Find existing digest nodes (digest/personal, procedure, wiki) whose name, description or path match a "
    "topic. Node level only (no body text): use it before creating a node, to update an existing one instead "
    "of duplicating it.",
    read_only=True,
    idempotent=True,
    positional=("query",),
)
def node_search(ctx: Context, params: NodeSearchParams) -> NodeSearchResult:
    from .recall_scope import scoped

    hits, _here, _notes = scoped(
        ctx,
        params.project,
        params.limit,
        lambda c, tier_of: c.index.node_search(params.query, params.limit, tier_of=tier_of),
        band=False,
    )
    return NodeSearchResult(nodes=[_scoped_out(NodeOut, s) for s in hits])
