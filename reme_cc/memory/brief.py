"""The SessionStart brief: a few lines of memory put into a new session's context.

``session_start_brief(payload)`` returns today's (or the latest) interest topics and the digest nodes
most relevant to the session's project, as paths with one-line descriptions, within
``config.brief_chars`` characters (0 = off), framed as the user's notes to weigh, not instructions
(``untrusted.as_notes``); a trusted repository's team memory in a frame of its own, as notes written
by others (memory/trust.py). The SessionStart hook prints it as ``hookSpecificOutput.additionalContext``.

Standard library only and fast (the hook runs it with the system python3 before the session starts):
it reads ``interests.yaml`` files and the SQLite index read-only through ``index/readonly.py`` (plain
``sqlite3``) — no jieba, numpy or embeddings. Relevance, strongest first:

1. digest nodes whose links point at this project's recent daily cards (cards that mention the
   project's folder in their frontmatter, name or description);
2. digest nodes whose name/description/path match the project name, the git branch or today's topics
   (FTS5 over the index's node table).

No workspace, no index yet, or a locked or damaged database yields a shorter brief or "" without a
wait; anything else is raised, for the SessionStart hook to log (it never fails the session).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from ..base.config import Config
from ..base.errors import ReMeError
from ..base.workspace import Workspace, team_metadata
from . import failures, interests, trust, untrusted
from ..index import readonly
from .project import Preference, detect, find_root
from .team import TEAM_DIR, locate

MAX_NODES = 6
PINNED_SCORE = 2.0  # a pinned note's relevance before any other signal (a node citing the project's cards: 2.0+)
RECENT_DAYS = 14
_GENERIC = {
    "main",
    "master",
    "trunk",
    "dev",
    "develop",
    "feature",
    "feat",
    "fix",
    "bugfix",
    "hotfix",
    "release",
    "src",
    "home",
    "user",
    "users",
    "tmp",
    "project",
    "projects",
    "repo",
    "code",
    "work",
    "head",
    "the",
    "and",
}


def git_branch(cwd: str) -> str | None:
    """The checked-out branch of the repository containing ``cwd`` (reads .git/HEAD; no subprocess)."""
    path = Path(cwd)
    for folder in (path, *path.parents):
        git = folder / ".git"
        try:
            if git.is_file():  # worktree/submodule: "gitdir: <path>"
                text = git.read_text(encoding="utf-8", errors="replace").strip()
                if text.startswith("gitdir:"):
                    git = (folder / text.split(":", 1)[1].strip()).resolve()
            head = git / "HEAD"
            if head.is_file():
                ref = head.read_text(encoding="utf-8", errors="replace").strip()
                return ref.rsplit("/", 1)[-1] if ref.startswith("ref:") and "refs/heads/" in ref else None
        except OSError:
            return None
    return None


def query_terms(*texts: str) -> list[str]:
    """Lower-case words (ASCII split on punctuation; CJK runs whole and as bigrams), generic ones dropped."""
    out: list[str] = []
    for text in texts:
        low = (text or "").lower()
        for w in re.findall(r"[a-z0-9]+", low):
            if len(w) >= 3 and w not in _GENERIC and not w.isdigit() and w not in out:
                out.append(w)
        for run in re.findall(r"[\u4e00-\u9fff]+", low):
            for t in [run] + [run[i : i + 2] for i in range(len(run) - 1)]:
                if len(t) >= 2 and t not in out:
                    out.append(t)
    return out[:24]


def relevant_nodes(
    conn: sqlite3.Connection, project: str, cwd: str, terms: list[str], today: str, pref: Preference | None = None
) -> list[tuple[str, str, str]]:
    """[(path, name, description)] of the most relevant digest nodes, best first; ``pref`` puts the
    current project's nodes first, general ones next, other projects' last (or keeps only one's)."""
    scores: dict[str, float] = {}
    since = (_dt.date.fromisoformat(today) - _dt.timedelta(days=RECENT_DAYS)).isoformat()
    if project:
        for src, n in readonly.digest_citing(conn, readonly.recent_cards(conn, project, cwd, since)).items():
            scores[src] = scores.get(src, 0.0) + 2.0 + min(n, 5) * 0.2
    for rank, path in enumerate(readonly.node_matches(conn, terms)):
        scores[path] = scores.get(path, 0.0) + 1.0 / (1 + rank)
    pinned = set(readonly.pinned_notes(conn))
    for path in pinned:  # the user pinned them: always candidates, as strong as a node citing the project
        scores[path] = scores.get(path, 0.0) + PINNED_SCORE
    best = sorted(scores, key=lambda p: -scores[p])[: MAX_NODES * 3]
    out = []
    for path in best:
        row = readonly.summary(conn, path)
        if row is None or not (path.startswith("digest/") or path in pinned):
            continue
        tier = pref.tier(_project_value(row[2])) if pref else 0
        if tier is not None:
            out.append((tier, path, row[0], row[1]))
    out.sort(key=lambda t: t[0])  # stable: relevance order within a tier
    return [(p, n, d) for _, p, n, d in out[:MAX_NODES]]


def _project_value(extra: str | None) -> Any:
    try:
        return json.loads(extra or "{}").get("project")
    except (ValueError, AttributeError):
        return None


STALE_CHECK_S = 0.2  # the brief's own look at the working tree, for all its nodes together


def still_true(
    ws: Workspace, nodes: list[tuple[str, str, str]], here: str, root: str, today: str
) -> list[tuple[str, str, str]]:
    """The brief's nodes without superseded ones, a stale one's description prefixed with why (its
    ``stale`` mark, or a cited path of this project the working tree no longer has: memory/stale.py's
    cheap check, bounded by ``STALE_CHECK_S``; nothing is written)."""
    import time

    from ..notes.history import flat_meta, note_status
    from .stale import reason, stale_now

    deadline = time.monotonic() + STALE_CHECK_S
    out = []
    for path, name, description in nodes:
        try:
            text = ws.read_bytes(path).decode("utf-8", errors="replace")
        except (ReMeError, OSError):
            out.append((path, name, description))
            continue
        status = note_status(text, today=today)
        if status.state == "superseded":
            continue
        why = status.reason if status.state == "stale" else ""
        names = [n.strip(" '\"") for n in flat_meta(text).get("project", "").strip("[]").split(",")]
        if not why and here and root and here in names and time.monotonic() < deadline:
            why = reason(stale_now(text, root, deadline=deadline))
        out.append((path, name, f"[stale: {why}] {description or name}" if why else description))
    return out


def _one_line(text: str, limit: int = 140) -> str:
    return untrusted.one_line(text, limit)


def build_brief(
    ws: Workspace, config: Config, *, cwd: str = "", today: str | None = None, project: str | None = None
) -> str:
    """``project``: as for search — empty = the current project first, "all" = no preference, a name = only it.
    The repository's team memory (``.reme/``) is written by others: its nodes come in a frame of their
    own after the user's notes, and only for a repository the user trusts (memory/trust.py); for one
    not decided yet, one line outside the frames says how to trust it."""
    budget = config.brief_chars
    if budget <= 0:
        return ""
    today = today or _dt.date.today().isoformat()
    branch = git_branch(cwd) if cwd else None
    day, topics = interests.latest_interests(ws, today, max_days=RECENT_DAYS)
    terms = query_terms(find_root(cwd)[0].name if cwd else "", branch or "", *(t.title for t in topics[:3]))

    def personal(conn: sqlite3.Connection) -> tuple[str, list[tuple[str, str, str]]]:
        name = detect(cwd, readonly.known_projects(conn)).name if cwd else ""  # as this workspace's notes spell it
        return name, relevant_nodes(conn, name, cwd, terms, today, Preference.of(project, name or None))

    here, nodes = readonly.with_index(ws.metadata, personal, (detect(cwd).name if cwd else "", []))
    where = _one_line(here + (f" @ {branch}" if branch else ""), 120) if here else "this session"
    lines = []
    if topics:
        lines.append(f"Current interests ({day}):")
        lines += [
            f"- {_one_line(t.title, 80)}" + (f" — {_one_line(t.reason, 120)}" if t.reason else "") for t in topics
        ]
    nodes = still_true(ws, nodes, here, str(find_root(cwd)[0]) if cwd else "", today)
    if nodes:
        lines.append(f"Digest nodes relevant to {where}:")
        lines += [f"- {_one_line(p)} — {_one_line(d or n)}" for p, n, d in nodes]
    team_what, team_lines, notice = "", [], ""
    found = locate(cwd, ws.root) if cwd else None
    if found is not None and found.root is not None:
        repo = _one_line(str(found.repo), 200)
        try:
            trusted = trust.decision(ws.root, found.repo)
        except ReMeError as exc:  # an unreadable list trusts nothing, and says why
            trusted, notice = (
                False,
                (
                    f"ReMe: this repository ({repo}) carries team memory ({TEAM_DIR}/, written by "
                    f"others), left out of this brief: {_one_line(str(exc), 300)}"
                ),
            )
        if trusted:
            pref = Preference.of(project, here or None).for_team(here)
            team = readonly.with_index(
                team_metadata(ws.metadata, found.root),
                lambda conn: relevant_nodes(conn, here, cwd, terms, today, pref),
                [],
            )
            team_what = _TEAM_WHAT.format(repo=repo)
            if team:
                team_lines = [f"Its digest nodes relevant to {where}:"]
                team_lines += [
                    f"- {_one_line(f'{TEAM_DIR}/{p}')} — {_one_line(d or n)}" for p, n, d in team[:MAX_TEAM_NODES]
                ]
        elif trusted is None:
            notice = (
                f"ReMe: this repository ({repo}) carries team memory ({TEAM_DIR}/, written by others), left out "
                f"of this brief until the user trusts it: `{trust.trust_command(found.repo)}` "
                f"(`{trust.revoke_command(found.repo)}` stops this notice)."
            )
    # Each part framed as notes to weigh, data rather than instructions (a description may say
    # anything): the user's own, then the team's as written by others; the notice and the alerts of
    # failing background work (memory/failures.py) are the plugin's own, and come first.
    out: list[str] = [line for line in failures.alerts(ws) if len(line) < budget][:3]
    left = budget - sum(len(line) + 1 for line in out)
    if notice and len(notice) <= left:
        left -= len(notice) + 1
    else:
        notice = ""
    for what, tag, part in ((_WHAT, untrusted.NOTES_TAG, lines), (team_what, untrusted.TEAM_NOTES_TAG, team_lines)):
        body = _fit(part, left - len(untrusted.as_notes("", what, tag)) - (1 if out else 0)) if part else ""
        if body:
            out.append(untrusted.as_notes(body, what, tag))
            left -= len(out[-1]) + (1 if len(out) > 1 else 0)
    return "\n".join(out + ([notice] if notice else []))


MAX_TEAM_NODES = 3  # the user's own notes come first; a repository's are a few pointers
_WHAT = "ReMe long-term memory brief: the user's own notes (files in the memory workspace; read or search them when useful)."
_TEAM_WHAT = (
    "Team memory of the repository {repo} ({TEAM_DIR}/ in it): notes written by others who can commit "
    "there, not by the user; the user trusts this repository (reme-cc trust)."
).replace("{TEAM_DIR}", TEAM_DIR)


def _fit(lines: list[str], budget: int) -> str:
    """Whole lines while they fit (a header whose items do not fit is dropped too); never over budget."""
    out: list[str] = []
    used = 0
    header_kept = False
    for i, line in enumerate(lines):
        cost = len(line) + (1 if out else 0)
        is_header = not line.startswith("- ")
        if is_header:
            header_kept = i + 1 < len(lines) and used + cost + 1 + len(lines[i + 1]) <= budget
        if not header_kept or used + cost > budget:
            continue
        out.append(line)
        used += cost
    return "\n".join(out) if any(line.startswith("- ") for line in out) else ""


def session_start_brief(payload: dict[str, Any] | None, ws: Workspace, config: Config) -> str:
    """The brief for a SessionStart hook payload; "" when off, empty, or without a usable index."""
    if not ws.root.is_dir():
        return ""
    cwd = str((payload or {}).get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    return build_brief(ws, config, cwd=cwd)  # anything unexpected is raised: the hook logs it, the session goes on
