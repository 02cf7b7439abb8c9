"""Where recall looks and what it prefers: the session's project and the repository's team memory.

``search`` and ``node_search`` ask the personal workspace and, when the session works in a git
repository with a ``.reme/`` folder, that team workspace too. In each, the project preference
(memory/project.py ``Preference``) orders the fused hits; the two lists are then merged by
(tier, score), so the current project's notes come first wherever they live. Every hit says its
project and its workspace.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, TypeVar
from collections.abc import Callable

from ..base.bootstrap import session_cwd
from ..base.errors import InvalidInputError, NotFoundError, ReMeError
from ..index.budget import Budget
from ..index.catalog import generation
from ..index.tiers import order_by_tier
from ..index.readonly import known_projects
from ..memory.project import Preference, Project, current
from ..memory.team import TEAM_DIR, ensure_gitignore, locate, team_workspace
from ..notes.documents import is_document
from . import Context

PERSONAL, TEAM = "personal", "team"
KNOWN = "known projects"  # key of the cache in Context._scope (the others are team folder paths)
TEAM_PREFIX = TEAM_DIR + "/"  # how paths of the repository's team memory are written in tool input and output


@dataclass
class Scoped:
    hit: Any  # an index Hit or NodeHit
    workspace: str  # PERSONAL or TEAM
    tier: float
    names: list[str]  # the hit's projects ([] = general)


def current_project(ctx: Context, cwd: str | None = None) -> Project:
    return current(known(ctx), cwd or session_cwd())


def known(ctx: Context) -> dict[str, str]:
    """The workspace's known projects, cached until the index changes (the query reads every file's
    frontmatter: ~15-40 ms at 10k files, too much for every search)."""

    def q(conn: Any) -> tuple[int, dict[str, str]]:
        gen = generation(conn)
        cached = ctx._scope.get(KNOWN)
        return (gen, cached[1]) if cached and cached[0] == gen else (gen, known_projects(conn))

    ctx._scope[KNOWN] = ctx.index.read(q)
    return ctx._scope[KNOWN][1]


def team_context(ctx: Context, cwd: str | None = None) -> tuple[Context | None, str | None]:
    """(the team workspace's Context, or None; a warning about an unusable .reme/, or None)."""
    found = locate(cwd or session_cwd(), ctx.workspace.root)
    if found is None or found.root is None:
        return None, found.problem if found else None
    key = str(found.root)
    if key not in ctx._scope:
        problem = ensure_gitignore(found.root)
        # its index, caches, locks and logs live in the personal workspace: a metadata/ committed to the
        # repository is never read nor written. The personal settings, never the repository's
        # config.json: a committed file must not be able to send notes off the machine (embedding
        # endpoint) or change limits. Bounded and indexed in the background (index/budget.py).
        team = Context(team_workspace(found.root, ctx.workspace), ctx.config, budget=Budget.of(ctx.config))
        if problem:
            team.workspace.append_log("workspace.log", problem)
        ctx._scope[key] = team
    return ctx._scope[key], None


def team_notes(team: Context) -> list[str]:
    """What an answer says about a team memory still being indexed, or cut by its budget."""
    out = []
    progress = team.index.indexing()
    if progress is not None:
        done, total = progress
        out.append(
            f"team memory is still being indexed: {done:,} of {total:,} files; its notes join the "
            "answers as they are indexed"
        )
    left = team.index.left_out()
    if left:
        out.append(left)
    return out


def scoped(
    ctx: Context,
    project: str | None,
    limit: int,
    ask: Callable[[Context, Callable[[Any], float | None]], list[Any]],
    cwd: str | None = None,
    *,
    band: bool = True,
) -> tuple[list[Scoped], Project, list[str]]:
    """Run ``ask(ctx, tier_of)`` in the personal and the team workspace and merge the hits the way
    each index orders its own (index/tiers.py: by score, then tier within the relevant band when
    ``band``; node search scores are BM25's, so there strictly by tier)."""
    here = current_project(ctx, cwd)
    pref = Preference.of(project, here.name)
    team, warning = team_context(ctx, cwd)
    out: list[Scoped] = []
    for label, c, p in ((PERSONAL, ctx, pref), (TEAM, team, pref.for_team(here.name))):
        if c is None:
            continue
        for hit in ask(c, p.tier):
            tier = p.tier(hit.project)
            if tier is not None:
                out.append(Scoped(hit, label, tier, p.names(hit.project)))
    out.sort(key=lambda s: -s.hit.score)
    out = order_by_tier(out, lambda s: s.tier, (lambda s: s.hit.score) if band else None)
    notes = [warning] if warning else []
    if team is not None:
        notes += team_notes(team)
    if pref.only is not None and not out:
        names = sorted(known(ctx))
        notes.append(
            f"nothing found in project {pref.only!r}; projects in this workspace: "
            f'{", ".join(names) or "none yet"} (or use project "all")'
        )
    return out[:limit], here, notes


def project_status(ctx: Context) -> dict[str, Any]:
    """The current project, the team memory recall would span and whether the user trusts it for the
    session brief (memory/trust.py), for ``status``."""
    from ..index.sync import refused
    from ..memory import trust
    from ..memory.untrusted import one_line

    here = current_project(ctx)
    team, problem = team_context(ctx)
    out: dict[str, Any] = {
        "name": here.name,
        "root": here.root,
        "cwd": here.cwd,
        "team": str(team.workspace.root) if team else None,
        **trust.status(ctx.workspace.root, here.root),
    }
    if problem:
        out["team_problem"] = problem
    if team is not None:
        out["team_conflicts"] = team.index.status().get("conflicts", [])  # walks it: refused names are fresh
        out["team_refused_names"] = {one_line(p): why for p, why in refused(team.workspace.root).items()}
    return out


def _team(ctx: Context) -> Context:
    team, problem = team_context(ctx)
    if team is None:
        raise NotFoundError(problem or f"there is no team memory ({TEAM_PREFIX}) in the repository of {session_cwd()}")
    return team


def _no_document(ctx: Context, tool: str, rel: str) -> None:
    """Documents are extracted from a repository only when the user opted in: a committed PDF can
    cost seconds of CPU per file (issue 21)."""
    if tool == "read" and is_document(rel) and not ctx.config.team_documents:
        raise InvalidInputError(
            f"{TEAM_PREFIX}{rel} is a document in the repository's team memory; reme extracts "
            "PDF/.docx from a repository only when you opt in: set REME_TEAM_DOCUMENTS=true "
            "(team_documents in config.json)"
        )


R = TypeVar("R")


def team_readable(fn: Callable[[Context, Any], R]) -> Callable[[Context, Any], R]:
    """Let a read-only file tool open the repository's team memory: a ``path`` written ``.reme/…``, as
    search hits show team notes, is read in the team workspace, and the result's paths (``path``, and
    each entry's of a listing) carry the prefix again, so they can be cited and read back as shown."""

    @functools.wraps(fn)
    def run(ctx: Context, params: Any) -> R:
        rel = params.path.strip().rstrip("/")
        if rel != TEAM_DIR and not rel.startswith(TEAM_PREFIX):
            return fn(ctx, params)
        team = _team(ctx)
        _no_document(ctx, fn.__name__, rel[len(TEAM_PREFIX) :])
        try:
            result = fn(team, params.model_copy(update={"path": rel[len(TEAM_PREFIX) :]}))
        except ReMeError as exc:  # its message names the path inside .reme/
            raise type(exc)(f"team memory {TEAM_PREFIX}: {exc}") from None
        prefixed = lambda r: r.model_copy(update={"path": TEAM_PREFIX + r.path if r.path else TEAM_DIR})  # noqa: E731
        if hasattr(result, "entries"):
            result = result.model_copy(update={"entries": [prefixed(e) for e in result.entries]})
        return prefixed(result)

    return run


def team_graph(
    ctx: Context, seeds: list[str], depth: int, direction: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``traverse`` over the team memory for ``.reme/…`` seeds; paths come back with the prefix."""
    from dataclasses import asdict

    team = _team(ctx)
    progress = team.index.indexing()
    if progress is not None:
        raise ReMeError(
            f"team memory is still being indexed ({progress[0]:,} of {progress[1]:,} files); "
            "traverse its notes again in a moment"
        )
    graph = team.index.traverse([s[len(TEAM_PREFIX) :] for s in seeds], depth, direction)
    nodes = [{**asdict(n), "path": TEAM_PREFIX + n.path} for n in graph.nodes]
    edges = [{**asdict(e), "source": TEAM_PREFIX + e.source, "target": TEAM_PREFIX + e.target} for e in graph.edges]
    return nodes, edges
